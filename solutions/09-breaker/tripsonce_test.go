package breaker

// Failures at once: calls to a closed breaker, held in fn, all fail at the
// same moment. The breaker trips once, on the failure that brings the
// count to MaxFailures; the failures recorded after it belong to the
// closed period, which is over, and change nothing: OnStateChange sees
// closed→open once and nothing else. Repeated, with the schedule shaken: a
// decision to trip under one lock and the opening under the next shows
// only when another failure slips in between.

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"gokata/internal/katatest"
)

func TestR6_FailuresAtOnceTripTheBreakerOnce(t *testing.T) {
	var rep atomic.Int32
	katatest.Repeat(t, 10, func(h *katatest.H) {
		const timeout, calls = 10 * time.Second, 6
		maxF := 1 + int(rep.Add(1))%3 // 1 to 3, in turn
		r := testNew(h, Settings{MaxFailures: maxF, OpenTimeout: timeout})
		gate := h.Gate()
		cs := make([]katatest.ErrCall, calls)
		for i := range cs {
			cs[i] = katatest.StartErr(h, func(ctx context.Context) error {
				return r.b.Do(ctx, func(ctx context.Context) error {
					if err := gate.Hold(ctx); err != nil {
						return err
					}
					return testErrDown
				})
			})
		}
		h.Settle()
		if n := gate.Waiting(); n != calls {
			t.Errorf("%d calls to a new, closed breaker: %d ran fn; want all of them (a closed breaker lets every call through)", calls, n)
			return
		}
		gate.Release()
		if stuck := h.Settle(); stuck != nil {
			t.Errorf("%s", testStuckOnMutex(fmt.Sprintf("%d calls failing at once", calls), 0, stuck))
			return
		}
		for i, c := range cs {
			if !c.Returns("call %d of %d failing at once did not return: after fn returns, Do only records the result and returns", i+1, calls) {
				return
			}
		}
		if got, want := r.changes.All(), []testChange{{Closed, Open}}; !slices.Equal(got, want) {
			t.Errorf("%d calls to a closed breaker with MaxFailures %d failed at the same moment, and OnStateChange saw %v; "+
				"want %v: the breaker opened once, so the hook must fire once, and only for a real change (open→open is "+
				"none). A failure recorded after the one that tripped the breaker belongs to the closed period, which "+
				"is over, and changes nothing: decide that a failure trips the breaker and open it under the same lock, "+
				"so that no other failure is counted in between", calls, maxF, got, want)
			return
		}
		if !r.wantState(Open, fmt.Sprintf("%d failures at once with MaxFailures %d", calls, maxF), "they trip the breaker (R1)") {
			return
		}
		h.Advance(timeout - 1)
		if !r.wantState(Open, "1ns before the open period ends", "it lasts OpenTimeout from the failure that opened it") {
			return
		}
		h.Advance(1)
		r.wantState(HalfOpen, "the open period ended", "half-open exactly OpenTimeout after the failure that opened it")
	})
}
