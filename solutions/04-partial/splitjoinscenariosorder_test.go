package partial

// Join's message, read as a log line: it lists every failure, in input
// order (Join's doc: "lists them all, in input order"). Each scenario is up
// to 8 outcomes, successes and failures mixed, the failures of every kind
// Join may meet: an error as it is, one wrapped with %w, a type of its own,
// a panic, a skip, a cancel, one error value shared by several outcomes,
// an error that is itself a join. Every failure's message is a text of its
// own, so where it stands in Join's message says where Join put it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testJOErr is an error type of the test's own, returned as it is.
type testJOErr struct{ k int }

func (e *testJOErr) Error() string { return fmt.Sprintf("pricing rule rejected the price (#%d)", e.k) }

// testJOKinds are the ways an outcome fails: what makes the error of
// outcome i for input in. shared is the one error value that every outcome
// of kind "shared" of a scenario fails with. Every other message names i
// in a way no other message contains.
var testJOKinds = []struct {
	how  string
	make func(i int, in string, shared error) error
}{
	{"a plain error, as it is", func(i int, _ string, _ error) error {
		return fmt.Errorf("no price yet (#%d)", i)
	}},
	{"fn's error wrapped with %w, naming the input", func(i int, in string, _ error) error {
		return fmt.Errorf("input %d (%s): %w", i, in, testErrNotFound)
	}},
	{"an error of a type of its own, as it is", func(i int, _ string, _ error) error { return &testJOErr{i} }},
	{"an error of a type of its own, wrapped", func(i int, in string, _ error) error {
		return fmt.Errorf("input %d (%s): %w", i, in, &testStatusError{500 + i})
	}},
	{"a panic, matching ErrPanic", func(i int, in string, _ error) error {
		return fmt.Errorf("input %d (%s): %w: price table %d corrupt", i, in, ErrPanic, i)
	}},
	{"a skip, matching ErrSkipped", func(i int, in string, _ error) error {
		return fmt.Errorf("input %d (%s): %w", i, in, ErrSkipped)
	}},
	{"a cancel, matching context.Canceled", func(i int, in string, _ error) error {
		return fmt.Errorf("input %d (%s): %w", i, in, context.Canceled)
	}},
	{"the one error value several outcomes share", func(_ int, _ string, shared error) error { return shared }},
	{"errors.Join of two errors, on two lines", func(i int, in string, _ error) error {
		return errors.Join(fmt.Errorf("cache miss (#%d)", i), fmt.Errorf("input %d (%s): %w", i, in, testErrNotFound))
	}},
}

// testJOShared is the kind whose outcomes share one error value.
const testJOShared = 7

// testJODrawnKinds are the kinds an outcome is drawn from, -1 a success
// (first, so that a failing scenario shrinks to the failures it needs):
// the shared error value twice, so that it is often shared.
var testJODrawnKinds = func() []int {
	kinds := []int{-1, testJOShared}
	for k := range testJOKinds {
		kinds = append(kinds, k)
	}
	return append(kinds, -1)
}()

// testJOScenario is a list of outcomes, as Join may be given them.
type testJOScenario struct {
	what   string   // how a fixed scenario was made, "" for a drawn one
	inputs []string // may repeat
	kinds  []int    // per outcome: -1 if it succeeded, else its index in testJOKinds
	values []int    // per outcome: its Value (a failure's is meaningless, often zero)
}

func (s testJOScenario) outcomes() testOutcomes {
	shared := fmt.Errorf("price service down for the whole page: %w", testErrNotFound)
	out := make(testOutcomes, len(s.inputs))
	for i, in := range s.inputs {
		out[i].Input, out[i].Value = in, s.values[i]
		if k := s.kinds[i]; k >= 0 {
			out[i].Err = testJOKinds[k].make(i, in, shared)
		}
	}
	return out
}

func (s testJOScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d outcome(s)", len(s.inputs))
	if s.what != "" {
		fmt.Fprintf(&b, ", %s", s.what)
	}
	for i, o := range s.outcomes() {
		if o.Err == nil {
			fmt.Fprintf(&b, "\n  out[%d]: Input %q, Value %d", i, o.Input, o.Value)
		} else {
			fmt.Fprintf(&b, "\n  out[%d]: Input %q, Value %d, Err %q (%s)", i, o.Input, o.Value, o.Err, testJOKinds[s.kinds[i]].how)
		}
	}
	return b.String()
}

// testDrawJO draws up to 8 outcomes over 4 inputs (equal inputs now and
// then), most of them failed, of any kind; often 8.
func testDrawJO(r *rapid.T) testJOScenario {
	var s testJOScenario
	// rapid favours the first items of a list, and the least of a range:
	// here the most outcomes.
	n := rapid.SampledFrom([]int{8, 7, 6, 5, 4, 3, 2, 1, 0}).Draw(r, "outcomes")
	for i := range n {
		s.inputs = append(s.inputs, fmt.Sprintf("sku-%d", rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("input %d", i))))
		k := rapid.SampledFrom(testJODrawnKinds).Draw(r, fmt.Sprintf("kind %d", i))
		s.kinds = append(s.kinds, k)
		v := 100 * (i + 1)
		if k >= 0 && rapid.Bool().Draw(r, fmt.Sprintf("zero value %d", i)) {
			v = 0
		}
		s.values = append(s.values, v)
	}
	return s
}

// testJOFixed are the cases that run every time, first: a panic listed
// after an ordinary failure, and every kind at once.
var testJOFixed = []testJOScenario{
	{what: "sku-1 failed with a 404, sku-2 succeeded, sku-3 panicked",
		inputs: []string{"sku-1", "sku-2", "sku-3"}, kinds: []int{1, -1, 4}, values: []int{0, 200, 0}},
	{what: "every kind of failure, a success among them, the shared error value twice",
		inputs: []string{"sku-1", "sku-2", "sku-3", "sku-1", "sku-4", "sku-5", "sku-6", "sku-7"},
		kinds:  []int{6, 5, testJOShared, -1, 0, 4, testJOShared, 8}, values: []int{0, 0, 300, 400, 0, 0, 0, 800}},
}

func (s testJOScenario) play(h *katatest.H) {
	out := s.outcomes()
	joined := Join(out)
	var failed []int
	for i, o := range out {
		if o.Err != nil {
			failed = append(failed, i)
		}
	}
	switch {
	case len(failed) == 0 && joined != nil:
		h.Errorf("Join is nil when nothing failed, but for %d outcomes, none of which failed, it returned %q",
			len(out), joined)
		return
	case len(failed) == 0:
		return
	case joined == nil:
		h.Errorf("Join matches the error of every failed outcome, but for %d outcomes, %d of which failed, it "+
			"returned nil", len(out), len(failed))
		return
	}
	for _, i := range failed {
		if !errors.Is(joined, out[i].Err) {
			h.Errorf("Join matches the error of every failed outcome (errors.Join of them all), but it does not "+
				"match the error of outcome %d (%q), %s: join every failure, each error as it is",
				i, out[i].Err, testJOKinds[s.kinds[i]].how)
			return
		}
	}
	for _, i := range failed {
		if want := (*testJOErr)(nil); errors.As(out[i].Err, &want) {
			if got := (*testJOErr)(nil); !errors.As(joined, &got) {
				h.Errorf("Join matches the error of every failed outcome, errors.As too, but errors.As finds no "+
					"*testJOErr in it, where outcome %d failed with %q: join every failure, each error as it is",
					i, out[i].Err)
				return
			}
			break
		}
	}
	text := joined.Error()
	// Find each failure's message after the one before it: a message
	// listed out of order, or left out, is not found there.
	at := make([]int, len(failed)) // where the message of failed[k] was found
	from := 0
	for k, i := range failed {
		msg := out[i].Err.Error()
		if p := strings.Index(text[from:], msg); p >= 0 {
			at[k] = from + p
			from = at[k] + len(msg)
			continue
		}
		h.Errorf("%s", testJOOrder(s, out, failed, at, k, text))
		return
	}
}

// testJOOrder says how Join's message text fails to list the failure
// failed[k] after those before it (at: where each of those was found).
func testJOOrder(s testJOScenario, out testOutcomes, failed, at []int, k int, text string) string {
	i := failed[k]
	msg := out[i].Err.Error()
	fix := "go through the outcomes once, in their order, and join each failure as you meet it " +
		"(errors.Join of the failed outcomes' errors, in input order); do not group the failures by kind " +
		"(panics first, say), sort them, or leave any out"
	if !strings.Contains(text, msg) {
		return fmt.Sprintf("Join lists every failure, in input order (its doc: \"lists them all, in input order\"), "+
			"but its message %q does not list the failure of outcome %d, %q (%s): %s",
			text, i, msg, testJOKinds[s.kinds[i]].how, fix)
	}
	need := 0
	for _, j := range failed[:k+1] {
		if out[j].Err.Error() == msg {
			need++
		}
	}
	if have := strings.Count(text, msg); have < need {
		return fmt.Sprintf("Join lists every failure, in input order (its doc: \"lists them all, in input order\"), "+
			"but outcomes %d and %d failed with one and the same error value, %q, and Join's message %q lists it "+
			"%d time(s) for %d failed outcomes: list every failed outcome, even when two share an error value",
			failed[testJOFirstWith(out, failed, msg)], i, msg, text, have, need)
	}
	// It is listed, but before a failure that comes before it.
	last := strings.LastIndex(text, msg)
	before := k - 1
	for q := range k {
		if at[q] > last {
			before = q
			break
		}
	}
	j := failed[before]
	return fmt.Sprintf("Join lists every failure, in input order (its doc: \"lists them all, in input order\"), "+
		"but its message %q lists the failure of outcome %d, %q (%s), before that of outcome %d, %q (%s), which "+
		"comes first among the inputs: %s",
		text, i, msg, testJOKinds[s.kinds[i]].how, j, out[j].Err, testJOKinds[s.kinds[j]].how, fix)
}

// testJOFirstWith is the position in failed of the first failure whose
// message is msg.
func testJOFirstWith(out testOutcomes, failed []int, msg string) int {
	for q, j := range failed {
		if out[j].Err.Error() == msg {
			return q
		}
	}
	return 0
}

func TestR3_ExploreJoinListsEveryFailureInInputOrder(t *testing.T) {
	katatest.Replay(t, testJOFixed, func(h *katatest.H, s testJOScenario) { s.play(h) })
	katatest.Explore(t, 12, testDrawJO, func(h *katatest.H, s testJOScenario) { s.play(h) })
}
