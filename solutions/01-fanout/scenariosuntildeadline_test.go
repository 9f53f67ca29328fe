package fanout

// The calls keep the caller's deadline (R5, and B1 for MapAll): each call
// gets a ctx derived from the caller's, so it carries the caller's values
// and deadline as they are, and it ends only when the caller's ctx ends or
// when Map cancels it for a reason the README gives (the first failure,
// Map returning; MapAll: only returning). A ctx of Map's own with an
// earlier deadline ("headroom for the caller") cuts off calls that would
// have answered in time.
//
// The caller's deadline here is on package time, as a real caller's is
// (Map takes no clock): katatest.CallerDeadline draws the callers and the
// calls, plays them and judges each call's ctx; this file says how Map is
// called and when it may cancel.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gokata/internal/katatest"
)

// testDLExplore is the exploration of Map's calls, or with all MapAll's.
func testDLExplore(all bool) *katatest.CallerDeadline[struct{}] {
	what := "Map"
	if all {
		what = "MapAll"
	}
	return &katatest.CallerDeadline[struct{}]{
		Words: katatest.DeadlineWords{
			Elem:      "in[%d]",
			Gets:      "each call gets a ctx derived from the caller's",
			Hint:      " (context.WithCancel(ctx))",
			Meanwhile: "the caller still waits",
			Uncalled:  "no call failed: every call of fn starts at once",
		},
		Cause:     errors.New("basket handler: pricing budget spent"),
		FailOneIn: 5,
		Show: func(c katatest.DeadlineCaller[struct{}]) string {
			return fmt.Sprintf("%s(ctx, %d elements)", what, len(c.Calls))
		},
		Rules: func(c katatest.DeadlineCaller[struct{}]) katatest.DeadlineRules {
			if all {
				return katatest.DeadlineRules{What: what, StopAt: -1, Because: "MapAll cancels nothing while calls run",
					OrWhen: "MapAll cancels it for a reason the README gives (MapAll returning)"}
			}
			return katatest.DeadlineRules{What: what, StopAt: c.Failure(0), Because: "no call had failed",
				OrWhen: "Map cancels it for a reason the README gives (the first failure, Map returning)"}
		},
		Call: func(ctx context.Context, x *katatest.DeadlineRun[struct{}]) error {
			fn := func(ctx context.Context, i int) (string, error) {
				if err := x.Answer(ctx, i); err != nil {
					return "", err
				}
				if x.Calls[i].Fails {
					return "", fmt.Errorf("pricing: status 503 for #%d", i)
				}
				return fmt.Sprintf("price of #%d", i), nil
			}
			var err error
			if all {
				_, err = MapAll(ctx, x.In(), fn)
			} else {
				_, err = Map(ctx, x.In(), fn)
			}
			return err
		},
	}
}

func TestR5_ExploreTheCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The caller's ctx has a deadline near or far (and a value, and
	// sometimes a cause): every call sees that deadline exactly, a call
	// that answers 1ns before it is not cut off, and only a failure or the
	// deadline itself ends the calls' ctx.
	d := testDLExplore(false)
	katatest.Explore(t, 7, d.Draw, d.Play)
}

func TestB1_ExploreMapAllCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The same for MapAll, where a failure cancels nothing either.
	d := testDLExplore(true)
	katatest.Explore(t, 6, d.Draw, d.Play)
}
