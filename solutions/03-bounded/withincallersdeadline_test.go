package bounded

// The calls keep the caller's deadline (R3, and B1 for ForEachWeighted):
// the ctx the calls get is derived from the caller's, so it carries the
// caller's values and deadline as they are, and it ends only when the
// caller's ctx ends or when ForEach cancels it (the first error, ForEach
// returning). A ctx of ForEach's own with an earlier deadline ("headroom
// for the caller") cuts off calls that would have finished in time.
//
// The caller's deadline here is on package time, as a real caller's is
// (ForEach takes no clock): katatest.CallerDeadline draws the callers and
// the calls, plays them and judges each call's ctx; this file says how
// ForEach is called, with room for every item at once, and what it
// returns.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDLOwn is a caller's limit (ForEachWeighted: capacity and weights).
type testDLOwn struct {
	limit   int
	weights []int // ForEachWeighted's, one an item
}

// testDLExplore is the exploration of ForEach's calls, or with weighted
// ForEachWeighted's.
func testDLExplore(weighted bool) *katatest.CallerDeadline[testDLOwn] {
	what, limit := "ForEach", "limit"
	if weighted {
		what, limit = "ForEachWeighted", "capacity"
	}
	return &katatest.CallerDeadline[testDLOwn]{
		Words: katatest.DeadlineWords{
			Elem:      "item %d",
			Gets:      "each call gets a ctx derived from the caller's",
			Hint:      " (context.WithCancel(ctx))",
			Meanwhile: "the caller still waits",
			// Uncalled: none; a stop, or the caller's deadline, came
			// before its slot: R2's and R3's other tests.
		},
		Cause:     errors.New("nightly job: time limit reached"),
		FailOneIn: 5,
		// Room for every item at once: the deadline's property does not
		// depend on the limit, and a correct design may hold a sync.Mutex
		// while an item waits for room, which stops package time in the
		// bubble (synctest cannot wait for a mutex).
		Own: func(r *rapid.T, k int, c katatest.DeadlineCaller[testDLOwn]) testDLOwn {
			n := len(c.Calls)
			if !weighted {
				return testDLOwn{limit: rapid.IntRange(n, n+1).Draw(r, fmt.Sprintf("caller %d limit", k))}
			}
			o := testDLOwn{weights: make([]int, n)}
			for i := range o.weights {
				o.weights[i] = rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d item %d weight", k, i))
				o.limit += max(o.weights[i], 1) // the capacity holds every weight (below 1 counts as 1)
			}
			o.limit += rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("caller %d spare capacity", k))
			return o
		},
		Show: func(c katatest.DeadlineCaller[testDLOwn]) string {
			return fmt.Sprintf("%s with %d items, %s %d", what, len(c.Calls), limit, c.Own.limit)
		},
		ShowCall: func(c katatest.DeadlineCaller[testDLOwn], i int) string {
			if !weighted {
				return ""
			}
			return fmt.Sprintf(" (weight %d)", c.Own.weights[i])
		},
		Rules: func(c katatest.DeadlineCaller[testDLOwn]) katatest.DeadlineRules {
			return katatest.DeadlineRules{What: what, StopAt: c.Failure(0), Because: "no call had failed",
				OrWhen: what + " cancels it for a reason the README gives (the first error, " + what + " returning)"}
		},
		Call: func(ctx context.Context, x *katatest.DeadlineRun[testDLOwn]) error {
			fn := func(ctx context.Context, i int) error {
				if err := x.Answer(ctx, i); err != nil {
					return err
				}
				if x.Calls[i].Fails {
					return fmt.Errorf("store: put #%d: status 503", i)
				}
				return nil
			}
			if weighted {
				weight := func(i int) int { return x.Own.weights[i] }
				return ForEachWeighted(ctx, x.In(), x.Own.limit, weight, fn)
			}
			return ForEach(ctx, x.In(), x.Own.limit, fn)
		},
		Returned: func(h *katatest.H, k int, x *katatest.DeadlineRun[testDLOwn], err error) bool {
			waits, fails := false, false
			for _, e := range x.Calls {
				waits, fails = waits || e.Waits, fails || e.Fails
			}
			switch {
			case !waits && !fails:
				if err != nil {
					h.Errorf("%s (caller %d) returned the error %v, although every call finished before the caller's "+
						"deadline: it returns nil when every call succeeds", what, k, err)
					return false
				}
			case waits && !fails && !errors.Is(err, context.DeadlineExceeded):
				h.Errorf("%s (caller %d) returned the error %v once the caller's deadline passed with calls waiting on it: "+
					"its error matches ctx.Err(), context.DeadlineExceeded", what, k, err)
				return false
			}
			return true
		},
	}
}

func TestR3_ExploreTheCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The caller's ctx has a deadline near or far (and a value, and
	// sometimes a cause): every call sees that deadline exactly, a call
	// that finishes 1ns before it is not cut off, and only a failure or
	// the deadline itself ends the calls' ctx.
	d := testDLExplore(false)
	katatest.Explore(t, 7, d.Draw, d.Play)
}

func TestB1_ExploreWeightedCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The same for ForEachWeighted.
	d := testDLExplore(true)
	katatest.Explore(t, 5, d.Draw, d.Play)
}
