package bounded

// A call that fails at once, as every call does when the store rejects the
// credentials, fails while the loop is still starting items: its failure
// and the slot it gives back come while the loop is busy, not while it
// waits, so the loop meets them both at its next look. The tests below fill
// every slot, the last one with a call that fails at once: its slot comes
// back only after the failure was recorded (record, cancel, then release),
// so in every correct design no item behind it starts, on any schedule.
// Each scenario repeats that for several ForEach and TryForEach calls made
// at once, round after round, so that the schedules where the loop meets
// both the failure and the free slot come up every run.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testOnceCaller struct {
	try    bool // TryForEach on a Bulkhead of limit slots of its own, fresh each round
	limit  int
	behind int // items behind the one that fails at once
}

type testOnceScenario struct {
	callers []testOnceCaller
	rounds  int
}

func (s testOnceScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d caller(s) at once, each making %d calls in a row:", len(s.callers), s.rounds)
	for c, cl := range s.callers {
		what := fmt.Sprintf("ForEach(ctx, %d items, limit %d, fn)", cl.limit+cl.behind, cl.limit)
		if cl.try {
			what = fmt.Sprintf("TryForEach(ctx, a fresh Bulkhead of %d slots, %d items, fn)", cl.limit, cl.limit+cl.behind)
		}
		fmt.Fprintf(&b, "\n  caller %d: %s; items 0 to %d wait until their ctx ends, item %d fails at once, "+
			"items %d to %d must never start", c+1, what, cl.limit-2, cl.limit-1, cl.limit, cl.limit+cl.behind-1)
	}
	return b.String()
}

// testDrawOnce draws callers of ForEach, or of TryForEach if try.
func testDrawOnce(try bool) func(*rapid.T) testOnceScenario {
	return func(r *rapid.T) testOnceScenario {
		var s testOnceScenario
		for c := range rapid.IntRange(1, 3).Draw(r, "callers") {
			s.callers = append(s.callers, testOnceCaller{
				try:    try,
				limit:  rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("limit %d", c)),
				behind: rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("behind %d", c)),
			})
		}
		s.rounds = rapid.IntRange(4, 8).Draw(r, "rounds")
		return s
	}
}

// testOnceRound is what one call of a caller did.
type testOnceRound struct {
	calls []int
	err   error
}

func testPlayOnce(h *katatest.H, s testOnceScenario, req string) {
	results := make([][]testOnceRound, len(s.callers))
	var calls []katatest.ErrCall
	for c, cl := range s.callers {
		n := cl.limit + cl.behind
		calls = append(calls, katatest.StartErr(h, func(ctx context.Context) error {
			for range s.rounds {
				w := testNewWork(n)
				w.errs[cl.limit-1] = fmt.Errorf("thumb-%d: %w", cl.limit-1, &testXStatus{403})
				w.open(cl.limit - 1)
				var err error
				if cl.try {
					b, berr := NewBulkhead(cl.limit)
					if berr != nil {
						return berr
					}
					err = TryForEach(ctx, b, testItems(n), w.call)
				} else {
					err = ForEach(ctx, testItems(n), cl.limit, w.call)
				}
				results[c] = append(results[c], testOnceRound{calls: w.callsOf(), err: err})
			}
			return nil
		}))
	}
	for c, x := range calls {
		if x.Broken() || !x.Returns("caller %d: item %d failed at once, and the calls in flight return as soon as "+
			"their ctx ends, but the call did not return: cancel the calls' ctx on the first error", c+1,
			s.callers[c].limit-1) {
			katatest.Unwind(h, calls...)
			return
		}
	}
	for c, x := range calls {
		if err, ok := testResult(x); !ok {
			return
		} else if err != nil {
			h.Errorf("caller %d: NewBulkhead(%d) returned %v: any limit of 1 or more is valid", c+1,
				s.callers[c].limit, err)
			return
		}
	}
	for c, cl := range s.callers {
		api := "ForEach"
		if cl.try {
			api = "TryForEach"
		}
		for r, res := range results[c] {
			var late []int
			for i := cl.limit; i < len(res.calls); i++ {
				if res.calls[i] > 0 {
					late = append(late, i)
				}
			}
			if len(late) > 0 {
				others := fmt.Sprintf("items 0 to %d held the other slots, so ", cl.limit-2)
				if cl.limit == 1 {
					others = ""
				}
				h.Errorf("%s: after a call fails, no new call starts, but caller %d's call %d of %s (limit %d) "+
					"started item(s) %v after item %d failed at once: %sthe slot item "+
					"%d came back to was item %d's, given back only after its failure was recorded and the calls' "+
					"ctx cancelled. After you take a slot, look at the ctx you cancel on the first error (the one "+
					"the calls get), not only at the caller's ctx; %s", req, c+1, r+1, api, cl.limit, late,
					cl.limit-1, others, cl.limit, cl.limit-1, testRandomHint)
				return
			}
		}
	}
}

func TestR3_ExploreNothingStartsAfterACallThatFailsAtOnce(t *testing.T) {
	katatest.Explore(t, 16, testDrawOnce(false), func(h *katatest.H, s testOnceScenario) { testPlayOnce(h, s, "R3") })
}

func TestB2_ExploreTryForEachStartsNothingAfterACallThatFailsAtOnce(t *testing.T) {
	katatest.Explore(t, 16, testDrawOnce(true), func(h *katatest.H, s testOnceScenario) { testPlayOnce(h, s, "B2") })
}
