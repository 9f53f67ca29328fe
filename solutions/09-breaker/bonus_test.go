package breaker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestB1_TripsOnTheFailureRateOverTheWindow(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 2, FailureRate: 0.5, MinRequests: 4, Window: 10 * time.Second,
			OpenTimeout: 10 * time.Second})
		for i := 1; i <= 3; i++ {
			if !r.run(nil, fmt.Sprintf("success %d", i)) {
				return
			}
		}
		h.Advance(time.Second)
		if !r.fails(2, "two failures") {
			return
		}
		if !r.wantState(Closed, "FailureRate 0.5: 3 successes, then 2 failures (2 of 5 outcomes failed, 40%)",
			"with FailureRate set, the failure rate decides, and MaxFailures (2) no longer applies") {
			return
		}
		h.Advance(time.Second)
		if !r.fails(1, "a third failure") {
			return
		}
		if !r.wantState(Open, "FailureRate 0.5: 3 successes, then 3 failures (3 of 6 outcomes failed, 50%)",
			"the breaker opens when failures >= FailureRate·outcomes over the window") {
			return
		}

		r = testNew(h, Settings{FailureRate: 0.5, MinRequests: 4, Window: 10 * time.Second})
		if !r.fails(3, "three failures") ||
			!r.wantState(Closed, "FailureRate 0.5 and MinRequests 4, after 3 failures (100% of 3 outcomes)",
				"below MinRequests outcomes the rate is not trusted yet: 3 failures out of 3 calls may be bad luck") ||
			!r.fails(1, "a fourth failure") {
			return
		}
		r.wantState(Open, "FailureRate 0.5 and MinRequests 4, after 4 failures", "4 outcomes reach MinRequests, and 100% >= 50%")
	})
}

func TestB1_OutcomesLeaveTheWindow(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const window = 10 * time.Second
		s := Settings{FailureRate: 0.5, MinRequests: 3, Window: window, OpenTimeout: time.Hour}
		for _, wait := range []time.Duration{window - 1, window} {
			r := testNew(h, s)
			if !r.fails(2, "two failures at the start") {
				return
			}
			h.Advance(wait)
			if !r.run(nil, "a success") || !r.fails(1, "a failure") {
				return
			}
			if wait < window {
				if !r.wantState(Open, "Window 10s, MinRequests 3, FailureRate 0.5: 2 failures, then 10s−1ns later a success and a failure",
					"an outcome recorded at t is in the window while now < t+Window, so all 4 count (3 failed)") {
					return
				}
				continue
			}
			r.wantState(Closed, "Window 10s, MinRequests 3, FailureRate 0.5: 2 failures, then 10s later a success and a failure",
				"outcomes leave the window once now >= t+Window: only the last 2 count, fewer than MinRequests")
		}

		// The window slides with the clock: it is not a fixed slot that is
		// emptied once Window has passed since its first outcome, nor a
		// slot of the clock's own.
		for _, start := range []time.Duration{0, 4 * time.Second} {
			h.Advance(start)
			r := testNew(h, s)
			if !r.run(nil, "a success") {
				return
			}
			h.Advance(6 * time.Second)
			if !r.fails(1, "a failure 6s later") {
				return
			}
			h.Advance(6 * time.Second)
			if !r.fails(1, "a failure 12s after the success") || !r.fails(1, "a failure at the same instant") {
				return
			}
			if !r.wantState(Open, "Window 10s, MinRequests 3, FailureRate 0.5: a success, a failure 6s later, and 2 "+
				"failures 6s after that", "the window is the last 10s before each failure, whenever the first outcome "+
				"came: the success has left it, the 3 failures are in it (3 of 3 failed). Keep each outcome's time and "+
				"drop those with now >= t+Window; a window emptied every 10s forgets the failure of 6s ago") {
				return
			}
		}

		// Window 0 means 60s.
		for _, wait := range []time.Duration{time.Minute - 1, time.Minute} {
			r := testNew(h, Settings{FailureRate: 0.5, MinRequests: 2, OpenTimeout: time.Hour})
			if !r.fails(1, "a failure at the start") {
				return
			}
			h.Advance(wait)
			if !r.fails(1, "a second failure") {
				return
			}
			if wait < time.Minute {
				if !r.wantState(Open, "Window 0 (60s), MinRequests 2, FailureRate 0.5: a failure, then another 60s−1ns later",
					"Window 0 means 60 seconds: both failures are in the window") {
					return
				}
				continue
			}
			if !r.wantState(Closed, "Window 0 (60s), MinRequests 2, FailureRate 0.5: a failure, then another 60s later",
				"Window 0 means 60 seconds: the first failure has left the window, so only 1 outcome counts") {
				return
			}
		}

		// The window starts empty when the breaker closes.
		r := testNew(h, Settings{FailureRate: 0.5, MinRequests: 3, Window: time.Minute, OpenTimeout: 10 * time.Second})
		if !r.fails(3, "three failures") {
			return
		}
		h.Advance(10 * time.Second)
		if !r.wantHalfOpenAtEnd("3 failures opened the breaker with OpenTimeout 10s; 10s later", "a breaker is half-open from "+
			"exactly OpenTimeout after the failure that opened it") ||
			!r.run(nil, "a successful probe") ||
			!r.wantState(Closed, "after a successful probe with HalfOpenMaxRequests 1", "one successful probe closes the breaker") ||
			!r.fails(1, "a failure after closing") {
			return
		}
		r.wantState(Closed, "FailureRate 0.5, MinRequests 3, Window 1m: 3 failures opened the breaker; 10s later it closed, "+
			"then 1 failure", "the window starts empty when the breaker closes: the failures that opened it must not count again")
	})
}

func TestB2_RetryAfterKeepsTheBreakerOpenLonger(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		inner := errors.New("429 too many requests")
		assert.ErrorIs(t, RetryAfter(time.Second, inner), inner, "errors.Is must see through RetryAfter")
		err := RetryAfter(time.Second, nil)
		if msg := katatest.NilInside(err); msg != "" {
			t.Errorf("RetryAfter(d, nil) must be nil; it returned %s", msg)
		} else {
			assert.NoError(t, err, "RetryAfter(d, nil) must be nil")
		}

		// period checks that the breaker is open for exactly d, and half-open then.
		period := func(r *testRig, d time.Duration, situation, hint string) bool {
			t.Helper()
			h.Advance(d - 1)
			if !r.wantState(Open, fmt.Sprintf("%s; %v later", situation, d-1), hint) {
				return false
			}
			h.Advance(1)
			return r.wantHalfOpenAtEnd(fmt.Sprintf("%s; %v later", situation, d), hint)
		}

		r := testNew(h, Settings{MaxFailures: 2, OpenTimeout: timeout})
		if !r.fails(1, "a failure") ||
			!r.run(fmt.Errorf("fetch: %w", RetryAfter(30*time.Second, inner)), "a failure with Retry-After 30s, wrapped again") {
			return
		}
		if !period(r, 30*time.Second, "OpenTimeout 10s; the failure that opened the breaker carries Retry-After 30s",
			"the breaker stays open for the longer of OpenTimeout and the Retry-After (find it with errors.As)") {
			return
		}
		if !r.run(RetryAfter(45*time.Second, inner), "a probe that fails with Retry-After 45s") {
			return
		}
		if !period(r, 45*time.Second, "OpenTimeout 10s; a probe failed with Retry-After 45s",
			"a failed probe with Retry-After reopens the breaker for the longer of OpenTimeout and the Retry-After") {
			return
		}

		r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout})
		if !r.run(RetryAfter(time.Second, inner), "a failure with Retry-After 1s") {
			return
		}
		period(r, timeout, "OpenTimeout 10s; the failure that opened the breaker carries Retry-After 1s",
			"a short Retry-After does not shorten the open period: the breaker protects the dependency for at least OpenTimeout")
	})
}
