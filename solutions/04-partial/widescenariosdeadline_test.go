package partial

// The calls keep the caller's deadline (R2, and B1, B2 for GatherWith):
// every call gets the caller's ctx or one derived from it, so it carries
// the caller's values and deadline as they are, and it ends only when the
// caller's ctx ends or when GatherWith stops (FailFast, MaxFailures). A
// ctx of Gather's own with an earlier deadline ("a margin to render the
// page") cuts off calls that would have answered in time.
//
// The caller's deadline here is on package time, as a real caller's is
// (Gather takes no clock): katatest.CallerDeadline draws the callers and
// the calls, plays them and judges each call's ctx; this file says how
// Gather is called and when GatherWith may stop.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDLErr is the error of a call that fails.
var testDLErr = errors.New("pricing: 404: no price")

// testDLExplore is the exploration of item's calls: R2 Gather's, B1
// GatherWith's with FailFast, B2 GatherWith's with MaxFailures (or none).
// A caller's own part is its options, nil for Gather.
func testDLExplore(item string) *katatest.CallerDeadline[*Options] {
	what := func(c katatest.DeadlineCaller[*Options]) string {
		if c.Own == nil {
			return "Gather"
		}
		return "GatherWith"
	}
	return &katatest.CallerDeadline[*Options]{
		Words: katatest.DeadlineWords{
			Elem:      "input %d",
			Gets:      "every call gets the caller's ctx or one derived from it",
			Meanwhile: "the other calls keep the caller's ctx",
			Uncalled:  "no stop: it calls fn once per input, all at the same time",
		},
		Cause:     errors.New("product page: pricing budget spent"),
		FailOneIn: 4,
		Own: func(r *rapid.T, k int, c katatest.DeadlineCaller[*Options]) *Options {
			switch item {
			case "B1":
				return &Options{FailFast: true, MaxFailures: rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d MaxFailures", k))}
			case "B2":
				return &Options{MaxFailures: rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d MaxFailures", k))}
			}
			return nil
		},
		Show: func(c katatest.DeadlineCaller[*Options]) string {
			call := "Gather(ctx, inputs, fn)"
			if c.Own != nil {
				call = fmt.Sprintf("GatherWith(ctx, inputs, fn, %+v)", *c.Own)
			}
			return fmt.Sprintf("%s with %d inputs", call, len(c.Calls))
		},
		// GatherWith may stop once more inputs than it tolerates have
		// failed; Gather never stops.
		Rules: func(c katatest.DeadlineCaller[*Options]) katatest.DeadlineRules {
			rules := katatest.DeadlineRules{What: what(c), StopAt: -1, Because: "no failure cancels anything in Gather",
				OrWhen: "GatherWith stops (FailFast, MaxFailures)"}
			if c.Own == nil {
				return rules
			}
			tolerate := len(c.Calls)
			if c.Own.FailFast {
				tolerate = 0
			} else if c.Own.MaxFailures > 0 {
				tolerate = c.Own.MaxFailures
			}
			rules.StopAt = c.Failure(tolerate)
			rules.Because = fmt.Sprintf("GatherWith had not stopped (%+v)", *c.Own)
			return rules
		},
		Call: func(ctx context.Context, x *katatest.DeadlineRun[*Options]) error {
			fn := func(ctx context.Context, i int) (string, error) {
				if err := x.Answer(ctx, i); err != nil {
					return "", err
				}
				if x.Calls[i].Fails {
					return "", fmt.Errorf("input %d: %w", i, testDLErr)
				}
				return fmt.Sprintf("price of #%d", i), nil
			}
			if x.Own == nil {
				Gather(ctx, x.In(), fn)
			} else {
				GatherWith(ctx, x.In(), fn, *x.Own)
			}
			return nil
		},
	}
}

func TestR2_ExploreTheCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The caller's ctx has a deadline near or far (and a value, and
	// sometimes a cause): every call sees that deadline exactly, a call
	// that answers 1ns before it is not cut off, and only the deadline
	// itself ends the calls' ctx.
	d := testDLExplore("R2")
	katatest.Explore(t, 7, d.Draw, d.Play)
}

func TestB1_ExploreFailFastKeepsTheCallersDeadlineUntilItStops(t *testing.T) {
	// The same for GatherWith with FailFast: until the first failure, the
	// calls keep the caller's ctx and its deadline.
	d := testDLExplore("B1")
	katatest.Explore(t, 5, d.Draw, d.Play)
}

func TestB2_ExploreMaxFailuresKeepsTheCallersDeadlineUntilItStops(t *testing.T) {
	// The same with MaxFailures (or none): until more inputs than that
	// have failed, the calls keep the caller's ctx and its deadline.
	d := testDLExplore("B2")
	katatest.Explore(t, 5, d.Draw, d.Play)
}
