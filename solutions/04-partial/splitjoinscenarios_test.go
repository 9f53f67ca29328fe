package partial

// Split and Join over many outcomes: a page of twenty prices, or a batch
// of hundreds. Each scenario is up to 300 outcomes in some order (equal
// inputs too), each a success with a value of its own or a failure with
// an error of its own, of every kind Gather gives; Split must keep their
// order, and Join must match every failure. Fixed scenarios that a draw
// could miss run first, every time.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLScenario is a list of outcomes, as Gather would return them.
type testLScenario struct {
	what   string   // how a fixed scenario was made, "" for a drawn one
	inputs []string // may repeat
	values []int
	fails  []int // per outcome: -1 if it succeeded, else how it failed (testLErr)
}

// testLKinds is how many kinds of failure testLErr makes.
var testLKinds = len(testYErrs) + 2

// testLErr is the error of a failed outcome i, as Gather makes it: it
// names the input and wraps the cause, one of testYErrs, a panic, or a
// skip. Each call makes a fresh error.
func testLErr(i int, in string, kind int) error {
	var cause error
	switch {
	case kind < len(testYErrs):
		cause = testYErrs[kind].make(i)
	case kind == len(testYErrs):
		cause = fmt.Errorf("%w: price table %d corrupt", ErrPanic, i)
	default:
		cause = ErrSkipped
	}
	return fmt.Errorf("input %d (%s): %w", i, in, cause)
}

func (s testLScenario) outcomes() testOutcomes {
	out := make(testOutcomes, len(s.inputs))
	for i, in := range s.inputs {
		out[i].Input = in
		if k := s.fails[i]; k >= 0 {
			out[i].Err = testLErr(i, in, k)
			continue
		}
		out[i].Value = s.values[i]
	}
	return out
}

func (s testLScenario) String() string {
	failed := 0
	for _, k := range s.fails {
		if k >= 0 {
			failed++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d outcome(s), %d of them failed", len(s.inputs), failed)
	if s.what != "" {
		fmt.Fprintf(&b, ": %s", s.what)
		return b.String()
	}
	const shown = 40
	for i, in := range s.inputs {
		if i == shown {
			fmt.Fprintf(&b, "\n  … and %d more", len(s.inputs)-shown)
			break
		}
		if k := s.fails[i]; k >= 0 {
			fmt.Fprintf(&b, "\n  out[%d]: Input %q, Err %q", i, in, testLErr(i, in, k))
		} else {
			fmt.Fprintf(&b, "\n  out[%d]: Input %q, Value %d", i, in, s.values[i])
		}
	}
	return b.String()
}

// testDrawL draws up to 300 outcomes, the inputs in any order, from 3, 20
// or 400 distinct ones (so equal inputs now and then), every one failing,
// one in two, or one in four.
func testDrawL(r *rapid.T) testLScenario {
	var s testLScenario
	n := rapid.IntRange(0, 300).Draw(r, "outcomes")
	distinct := rapid.SampledFrom([]int{3, 20, 400}).Draw(r, "distinct inputs")
	failing := rapid.SampledFrom([]int{0, 1, 3}).Draw(r, "1 in k+1 fails")
	for i := range n {
		s.inputs = append(s.inputs, fmt.Sprintf("sku-%d", rapid.IntRange(1, distinct).Draw(r, fmt.Sprintf("input %d", i))))
		s.values = append(s.values, rapid.IntRange(1, 99999).Draw(r, fmt.Sprintf("value %d", i)))
		k := -1
		if rapid.IntRange(0, failing).Draw(r, fmt.Sprintf("fails? %d", i)) == 0 {
			k = rapid.IntRange(0, testLKinds-1).Draw(r, fmt.Sprintf("error %d", i))
		}
		s.fails = append(s.fails, k)
	}
	return s
}

// testLFixed are outcomes a draw could miss: hundreds of them, in input
// order sku-1, sku-2, … (sku-10 comes before sku-2 as text), reversed, or
// the same input throughout.
var testLFixed = func() []testLScenario {
	build := func(what string, n int, input func(i int) string, fails func(i int) bool) testLScenario {
		s := testLScenario{what: what}
		for i := range n {
			s.inputs = append(s.inputs, input(i))
			s.values = append(s.values, 100*(n-i)+7)
			k := -1
			if fails(i) {
				k = i % testLKinds
			}
			s.fails = append(s.fails, k)
		}
		return s
	}
	up := func(i int) string { return fmt.Sprintf("sku-%d", i+1) }
	return []testLScenario{
		build("inputs sku-1 … sku-12, the 2nd, 5th, 8th and 11th failed", 12, up, func(i int) bool { return i%3 == 1 }),
		build("inputs sku-1 … sku-300, every third failed", 300, up, func(i int) bool { return i%3 == 1 }),
		build("inputs sku-300 … sku-1, all failed", 300, func(i int) string { return fmt.Sprintf("sku-%d", 300-i) },
			func(int) bool { return true }),
		build("inputs sku-1 … sku-300, none failed", 300, up, func(int) bool { return false }),
		build("input sku-7 300 times, every other one failed", 300, func(int) string { return "sku-7" },
			func(i int) bool { return i%2 == 0 }),
	}
}()

// testSameErr says whether a and b are the same error (nil or not).
func testSameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return errors.Is(a, b) && errors.Is(b, a)
}

func testSameOutcome(a, b Outcome[string, int]) bool {
	return a.Input == b.Input && a.Value == b.Value && testSameErr(a.Err, b.Err)
}

// testSplitKeepsOrder splits out and says how Split broke the order of the
// inputs, or "": ok must hold the successes and failed the failures, each
// in the order of out.
func testSplitKeepsOrder(out testOutcomes) string {
	before := slices.Clone(out)
	var want [2][]int // the indexes of the successes, of the failures
	for i, o := range before {
		if o.Err == nil {
			want[0] = append(want[0], i)
		} else {
			want[1] = append(want[1], i)
		}
	}
	ok, failed := Split(out)
	if len(ok) != len(want[0]) || len(failed) != len(want[1]) {
		return fmt.Sprintf("Split separates the successes from the failures, all of them, but of %d outcomes, %d "+
			"of which succeeded and %d failed, it returned %d successes and %d failures: keep every outcome, "+
			"however many", len(before), len(want[0]), len(want[1]), len(ok), len(failed))
	}
	for p, got := range [2]testOutcomes{ok, failed} {
		name := [2]string{"successes", "failures"}[p]
		for j, i := range want[p] {
			if testSameOutcome(got[j], before[i]) {
				continue
			}
			which := "an outcome that is none of them"
			if from := slices.IndexFunc(before, func(o Outcome[string, int]) bool { return testSameOutcome(got[j], o) }); from >= 0 {
				which = fmt.Sprintf("the outcome of input %d (%q)", from, before[from].Input)
			}
			return fmt.Sprintf("Split keeps the order of the inputs, but of %d outcomes, item %d of the %s Split "+
				"returned is %s, where the outcome of input %d (%q) belongs: go through the outcomes once, in their "+
				"order, appending each to its list, and sort nothing (sku-10 comes before sku-2 as text)",
				len(before), j, name, which, i, before[i].Input)
		}
	}
	return ""
}

func (s testLScenario) playSplit(h *katatest.H) {
	out := s.outcomes()
	before := slices.Clone(out)
	if msg := testSplitKeepsOrder(out); msg != "" {
		h.Errorf("%s", msg)
		return
	}
	for i := range out {
		if !testSameOutcome(out[i], before[i]) {
			h.Errorf("Split must leave the outcomes it was given as they were, but after Split, outcome %d is "+
				"the outcome of %q, no longer of %q: build new slices, do not sort or filter the outcomes in place",
				i, out[i].Input, before[i].Input)
			return
		}
	}
}

func (s testLScenario) playJoin(h *katatest.H) {
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
	case len(failed) > 0 && joined == nil:
		h.Errorf("Join matches the error of every failed outcome, but for %d outcomes, %d of which failed, it "+
			"returned nil", len(out), len(failed))
		return
	}
	missed := 0
	first := -1
	for _, i := range failed {
		if !errors.Is(joined, out[i].Err) {
			missed++
			if first < 0 {
				first = i
			}
		}
	}
	if missed > 0 {
		h.Errorf("Join matches the error of every failed outcome (errors.Join of them all), but of %d failures "+
			"it does not match %d, the first of them the error of outcome %d (%q): join every failure, however "+
			"many, each error as it is", len(failed), missed, first, out[first].Err)
	}
}

func TestR1_ExploreSplitKeepsTheOrderOfHundredsOfOutcomes(t *testing.T) {
	katatest.Replay(t, testLFixed, func(h *katatest.H, s testLScenario) { s.playSplit(h) })
	katatest.Explore(t, 12, testDrawL, func(h *katatest.H, s testLScenario) { s.playSplit(h) })
}

func TestR3_ExploreJoinMatchesHundredsOfFailures(t *testing.T) {
	katatest.Replay(t, testLFixed, func(h *katatest.H, s testLScenario) { s.playJoin(h) })
	katatest.Explore(t, 12, testDrawL, func(h *katatest.H, s testLScenario) { s.playJoin(h) })
}
