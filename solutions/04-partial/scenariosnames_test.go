package partial

// Explored naming (R3 and R4): a failed outcome's error names its input,
// its message containing the input formatted with %v, whole, however long
// that text is. Each scenario is one Gather over inputs whose %v texts run
// from empty to thousands of characters (URLs, keys, structs holding them,
// pointers to such structs, values with a String method), around the
// lengths a log line is often capped at, in ASCII or not; some calls fail
// (R3) or panic (R4), and every failed outcome must name its input whole.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testWLine is a struct input, as a request to a pricing URL would be.
type testWLine struct {
	URL string
	Qty int
}

// testWKey formats itself: its %v text is what String returns.
type testWKey struct{ path string }

func (k testWKey) String() string { return "key:" + k.path }

var testWTypes = []string{"string", "struct line{URL string; Qty int}", "*line (a pointer to a struct)",
	"key (a struct with a String method)"}

// testWLengths are the lengths of the texts drawn, in characters: the
// lengths a message is often capped at, one either side, and far beyond.
var testWLengths = []int{0, 1, 7, 8, 9, 15, 16, 17, 19, 20, 21, 24, 25, 30, 31, 32, 33, 39, 40, 41, 48, 50, 60,
	63, 64, 65, 72, 79, 80, 81, 99, 100, 101, 120, 127, 128, 129, 160, 200, 255, 256, 257, 300, 500, 511, 512, 513,
	1000, 1023, 1024, 1025, 2048, 4096}

// testWLong is the index of the first length of 100 or more.
const testWLong = 31

// testWAlphabets are what the texts are made of.
var testWAlphabets = []struct {
	how   string
	runes []rune
}{
	{"URL characters", []rune("abcdefghijklmnopqrstuvwxyz0123456789-_./?=&")},
	{"words and spaces", []rune("price of the blue wool scarf, size M ")},
	{"multi-byte characters", []rune("écharpe-bleue-価格-😀-ß")},
	{"quotes, backslashes and percent signs", []rune(`a"b\c%d'e{f}`)},
}

type testWInput struct {
	length   int // characters
	alphabet int
	does     int // testYSucceed, testYFail or testYPanics
	kind     int // index into testYErrs or testYPanicKinds
}

type testWScenario struct {
	req    string // R3: calls fail; R4: calls panic
	typ    int
	inputs []testWInput
}

// text is the text input i is made of: its number first, so that no two
// inputs read the same, then characters of its alphabet up to its length.
func (s testWScenario) text(i int) string {
	in := s.inputs[i]
	rs := []rune(fmt.Sprintf("%d/", i))
	alpha := testWAlphabets[in.alphabet].runes
	for k := 0; len(rs) < in.length; k++ {
		rs = append(rs, alpha[(k*7+i)%len(alpha)])
	}
	return string(rs[:min(len(rs), max(in.length, 0))])
}

func (s testWScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Gather over %d input(s) of type %s; every call returns at once:", len(s.inputs), testWTypes[s.typ])
	for i, in := range s.inputs {
		fmt.Fprintf(&b, "\n  input %d, a text of %d %s, ", i, in.length, testWAlphabets[in.alphabet].how)
		switch in.does {
		case testYSucceed:
			b.WriteString("succeeds")
		case testYFail:
			b.WriteString("fails with " + testYErrs[in.kind].how)
		default:
			b.WriteString("panics with " + testYPanicKinds[in.kind].how)
		}
	}
	return b.String()
}

func testDrawW(req string) func(*rapid.T) testWScenario {
	return func(r *rapid.T) testWScenario {
		// The struct types, where %v differs from %+v, %#v and %q, twice as often.
		s := testWScenario{req: req, typ: rapid.SampledFrom([]int{0, 1, 2, 3, 1, 2}).Draw(r, "input type")}
		n := rapid.IntRange(1, 5).Draw(r, "inputs")
		failed := false
		for i := range n {
			in := testWInput{
				length:   rapid.SampledFrom(testWLengths).Draw(r, fmt.Sprintf("length %d", i)),
				alphabet: rapid.IntRange(0, len(testWAlphabets)-1).Draw(r, fmt.Sprintf("alphabet %d", i)),
			}
			if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("input %d fails", i)) > 0 {
				in.does = testYFail
				in.kind = rapid.IntRange(0, len(testYErrs)-1).Draw(r, fmt.Sprintf("error %d", i))
				if req == "R4" {
					in.does = testYPanics
					in.kind = rapid.IntRange(0, len(testYPanicKinds)-1).Draw(r, fmt.Sprintf("panic %d", i))
				}
				failed = true
			}
			s.inputs = append(s.inputs, in)
		}
		if !failed {
			i := rapid.IntRange(0, n-1).Draw(r, "the input that fails")
			s.inputs[i].does = testYFail
			if req == "R4" {
				s.inputs[i].does = testYPanics
			}
		}
		// At least one failed input has a text of 100 characters or more.
		long := false
		for _, in := range s.inputs {
			long = long || in.does != testYSucceed && in.length >= 100
		}
		if !long {
			for i := range s.inputs {
				if s.inputs[i].does != testYSucceed {
					s.inputs[i].length = rapid.SampledFrom(testWLengths[testWLong:]).Draw(r, "a long length")
					break
				}
			}
		}
		return s
	}
}

func (s testWScenario) play(h *katatest.H) {
	switch s.typ {
	case 0:
		testWPlay(h, s, func(t string, _ int) string { return t })
	case 1:
		testWPlay(h, s, func(t string, i int) testWLine { return testWLine{URL: t, Qty: i + 2} })
	case 2:
		lines := make([]*testWLine, len(s.inputs))
		for i := range lines {
			lines[i] = &testWLine{URL: s.text(i), Qty: i + 2}
		}
		testWPlay(h, s, func(_ string, i int) *testWLine { return lines[i] })
	default:
		testWPlay(h, s, func(t string, _ int) testWKey { return testWKey{path: t} })
	}
}

// testWShort shows a long text by its two ends.
func testWShort(t string) string {
	rs := []rune(t)
	if len(rs) <= 90 {
		return fmt.Sprintf("%q", t)
	}
	return fmt.Sprintf("%q…(%d characters in all)…%q", string(rs[:50]), len(rs), string(rs[len(rs)-30:]))
}

func testWPlay[In comparable](h *katatest.H, s testWScenario, input func(text string, i int) In) {
	n := len(s.inputs)
	inputs := make([]In, n)
	for i := range inputs {
		inputs[i] = input(s.text(i), i)
	}
	fn := func(_ context.Context, in In) (int, error) {
		i := -1
		for j := range inputs {
			if inputs[j] == in {
				i = j
			}
		}
		if i < 0 {
			return 0, fmt.Errorf("fn got %v, which is not one of the inputs", in)
		}
		switch c := s.inputs[i]; c.does {
		case testYFail:
			return 0, testYErrs[c.kind].make(i)
		case testYPanics:
			testYPanicKinds[c.kind].do(i)
		}
		return 100 + i, nil
	}
	c := katatest.Start(h, func(ctx context.Context) ([]Outcome[In, int], error) { return Gather(ctx, inputs, fn), nil })
	if c.Broken() || !c.Returns("every call returns at once, but Gather did not return") {
		return
	}
	// No Finish: the leak check that ends the scenario is as strict.
	out, _ := c.Result()
	// Only the naming is graded here: where the outcomes are (R1) and
	// what their errors match (R3, R4) are graded elsewhere.
	for i, in := range inputs {
		if s.inputs[i].does == testYSucceed {
			continue
		}
		var err error
		for _, o := range out {
			if o.Input == in {
				err = o.Err
			}
		}
		if err == nil {
			continue
		}
		want := fmt.Sprintf("%v", in)
		if strings.Contains(err.Error(), want) {
			continue
		}
		what, rule := "failed", "a failed outcome's error contains its input formatted with %v"
		if s.req == "R4" {
			what, rule = "panicked", "a panic's error names its input like any failure: it contains the input "+
				"formatted with %v"
		}
		h.Errorf("%s: the error of input %d does not contain the input as %%v formats it: %s, whole, however long "+
			"its text, but the call for input %d (of type %s, whose %%v text is %d characters long: %s) %s, and its "+
			"error says %s: format the input with %%v and put all of its text in the message, with no cap on its "+
			"length and not %%+v, %%#v or %%q, e.g. fmt.Errorf(\"input %%d (%%v): %%w\", i, in, err)", s.req, i, rule, i,
			testWTypes[s.typ], len([]rune(want)), testWShort(want), what, testWShort(err.Error()))
		return
	}
}

func TestR3_ExploreLongInputsAreNamedWhole(t *testing.T) {
	katatest.Explore(t, 12, testDrawW("R3"), func(h *katatest.H, s testWScenario) { s.play(h) })
	// And always a struct input, where %v and %+v differ, which a draw
	// could miss.
	katatest.Replay(t, []testWScenario{{req: "R3", typ: 1, inputs: []testWInput{{length: 120, does: testYFail}}}},
		func(h *katatest.H, s testWScenario) { s.play(h) })
}

func TestR4_ExploreLongInputsAreNamedWholeAfterAPanic(t *testing.T) {
	katatest.Explore(t, 8, testDrawW("R4"), func(h *katatest.H, s testWScenario) { s.play(h) })
	katatest.Replay(t, []testWScenario{{req: "R4", typ: 1, inputs: []testWInput{{length: 120, does: testYPanics}}}},
		func(h *katatest.H, s testWScenario) { s.play(h) })
}
