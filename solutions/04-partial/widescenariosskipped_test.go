package partial

// Input set to it, whether the call failed and whether it ran at all: out[i]
// is the outcome of inputs[i], with Input set to it, skipped inputs
// included. A stop of GatherWith that comes while it is still starting the
// calls leaves inputs whose call never started, and calls cut short that
// return ctx.Err(): their outcomes match ErrSkipped, and their Input is
// their input like any other outcome's, so a page can still say which
// prices it never asked for.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// What the call for one input does.
const (
	testSkFail    = iota // fails at once with an error of its own
	testSkPanic          // panics at once with a string
	testSkCut            // waits for its ctx to end, then returns ctx.Err()
	testSkWrapped        // waits for its ctx to end, then returns it wrapped
	testSkSucceed        // succeeds at once
)

var testSkHow = []string{
	"fails at once with &statusError{503}",
	"panics at once with \"price table corrupt\"",
	"waits for its ctx to end, then returns ctx.Err()",
	"waits for its ctx to end, then returns fmt.Errorf(\"price feed: %w\", ctx.Err())",
	"succeeds at once",
}

type testSkScenario struct {
	req   string
	opt   Options
	calls []int // what the call for input i does: testSk…
}

func (s testSkScenario) input(i int) string { return fmt.Sprintf("shelf %02d", i+1) }

func (s testSkScenario) inputs() []string {
	ins := make([]string, len(s.calls))
	for i := range ins {
		ins[i] = s.input(i)
	}
	return ins
}

func (s testSkScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "GatherWith(Options{FailFast: %v, MaxFailures: %d}) on %d inputs:", s.opt.FailFast,
		s.opt.MaxFailures, len(s.calls))
	for i, k := range s.calls {
		fmt.Fprintf(&b, "\n  the call for %q %s", s.input(i), testSkHow[k])
	}
	return b.String()
}

// testDrawSk draws a scenario of req, "B1" or "B2", with more failures at
// once than the options tolerate, so that the gather always stops, often
// while it is still starting the calls.
func testDrawSk(req string) func(*rapid.T) testSkScenario {
	return func(r *rapid.T) testSkScenario {
		s := testSkScenario{req: req}
		if req == "B1" {
			s.opt.FailFast = true
			s.opt.MaxFailures = rapid.SampledFrom([]int{0, 0, -1, 2}).Draw(r, "max failures too")
		} else {
			s.opt.MaxFailures = rapid.IntRange(1, 3).Draw(r, "max failures")
		}
		tolerates := 0
		if !s.opt.FailFast {
			tolerates = s.opt.MaxFailures
		}
		for k := range tolerates + 1 + rapid.IntRange(0, 16).Draw(r, "more failures") {
			s.calls = append(s.calls, rapid.IntRange(testSkFail, testSkPanic).Draw(r, fmt.Sprintf("fails how %d", k)))
		}
		for k := range rapid.IntRange(0, 8).Draw(r, "others") {
			s.calls = append(s.calls, rapid.IntRange(testSkCut, testSkSucceed).Draw(r, fmt.Sprintf("other %d", k)))
		}
		s.calls = rapid.Permutation(s.calls).Draw(r, "order")
		return s
	}
}

func (s testSkScenario) play(h *katatest.H) {
	ins := s.inputs()
	index := map[string]int{}
	for i, in := range ins {
		index[in] = i
	}
	called := make([]atomic.Bool, len(ins))
	fn := func(ctx context.Context, in string) (int, error) {
		i, ok := index[in]
		if !ok {
			return 0, fmt.Errorf("no such input: %q", in)
		}
		called[i].Store(true)
		switch s.calls[i] {
		case testSkFail:
			return 0, &testStatusError{503}
		case testSkPanic:
			panic("price table corrupt")
		case testSkCut, testSkWrapped:
			<-ctx.Done()
			if s.calls[i] == testSkWrapped {
				return 0, fmt.Errorf("price feed: %w", ctx.Err())
			}
			return 0, ctx.Err()
		}
		return 100 * (i + 1), nil
	}
	c := katatest.Start(h, func(ctx context.Context) (testOutcomes, error) {
		return GatherWith(ctx, ins, fn, s.opt), nil
	})
	if c.Broken() || !c.Returns("%s: more calls failed at once than GatherWith tolerates, so it stops and cancels "+
		"the calls waiting on their ctx, but it had not returned once they had", s.req) {
		return
	}
	out, _, ok := c.Finish("GatherWith")
	if !ok || len(out) != len(ins) {
		return // one outcome per input: graded by R1
	}
	for i, o := range out {
		if _, known := index[o.Input]; known {
			continue // an input's Input, maybe another's: out[i] is the outcome of inputs[i] is graded by R1
		}
		what := "never started: the gather had stopped before it"
		if called[i].Load() {
			what = testSkHow[s.calls[i]]
		}
		h.Errorf("%s: a skipped outcome lost its Input: out[i] is the outcome of inputs[i], with Input set to it, "+
			"whether it failed and whether its call ran at all, but the outcome of input %d, %q, whose call %s, has "+
			"Input %q (its error: %s): set the Input of every outcome, the ones a stop skips too, before you look "+
			"whether the gather has stopped", s.req, i, ins[i], what, o.Input, testYDescribe(o.Err))
		return
	}
}

// testSkFixed is played every run before the drawn scenarios: forty calls
// that all fail at once, so that the gather stops while it is still
// starting them and skips many, and a few calls cut short.
func testSkFixed(req string, opt Options) []testSkScenario {
	s := testSkScenario{req: req, opt: opt}
	for i := range 44 {
		switch i % 11 {
		case 3:
			s.calls = append(s.calls, testSkCut)
		case 7:
			s.calls = append(s.calls, testSkWrapped)
		default:
			s.calls = append(s.calls, testSkFail)
		}
	}
	return []testSkScenario{s}
}

func TestB1_ExploreSkippedOutcomesKeepTheirInput(t *testing.T) {
	katatest.Replay(t, testSkFixed("B1", Options{FailFast: true}), func(h *katatest.H, s testSkScenario) { s.play(h) })
	katatest.Explore(t, 6, testDrawSk("B1"), func(h *katatest.H, s testSkScenario) { s.play(h) })
}

func TestB2_ExploreSkippedOutcomesKeepTheirInput(t *testing.T) {
	katatest.Replay(t, testSkFixed("B2", Options{MaxFailures: 2}), func(h *katatest.H, s testSkScenario) { s.play(h) })
	katatest.Explore(t, 6, testDrawSk("B2"), func(h *katatest.H, s testSkScenario) { s.play(h) })
}
