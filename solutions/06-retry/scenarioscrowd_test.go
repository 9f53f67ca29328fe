package retry

// Many calls of Do pausing at once: an outage seen by hundreds of requests
// at the same moment. Each call follows its own Policy, whatever the other
// calls are doing: its attempts, its pauses and its cancel are its own.
//
// A call that waits for something the other calls hold (a lock, a slot on
// a channel made outside the test's bubble) is not durably blocked, so
// synctest.Wait, and with it Advance, Returns and ReturnsAtOnce, would
// wait for ever: these tests settle with h.Settle and move the clock with
// h.Clk.Add.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gokata/internal/katatest"
)

// testCrowd is the number of calls of Do that pause at the same instant.
const testCrowd = 300

// testCrowdStart starts n calls of Do, sharing p and h.Clk, each with an op
// of its own that fails fails times with errors of its own. The caller
// settles them (h.Settle).
func testCrowdStart(h *katatest.H, p Policy, n, fails int) ([]*katatest.Call[string], []*testOp) {
	calls := make([]*katatest.Call[string], n)
	ops := make([]*testOp, n)
	for i := range calls {
		errs := make([]error, fails)
		for k := range errs {
			errs[k] = fmt.Errorf("call %d, attempt %d: 503 from the inventory service", i+1, k+1)
		}
		op := &testOp{errs: errs}
		ops[i] = op
		calls[i] = katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	}
	return calls, ops
}

// testCrowdEnd ends the calls: it cancels them all and, once they have
// returned, checks that none panicked (reported) and nothing is left
// running (reported). Whether a cancel ends a pause at once is R4's
// business: calls still running after the cancel are stopped with
// katatest.Unwind, which moves the clock on and reports only a call that
// never returns.
func testCrowdEnd(h *katatest.H, calls []*katatest.Call[string]) bool {
	for _, c := range calls {
		c.Cancel()
	}
	h.Settle()
	for _, c := range calls {
		if !c.Returned() {
			katatest.Unwind(h, calls...)
			return false
		}
		if c.Panicked() {
			return false
		}
	}
	return h.NoLeaks("the calls of Do")
}

func TestR2_ManyCallsPausingAtOnceEachMakeAllTheirAttempts(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms}
		calls, ops := testCrowdStart(h, p, testCrowd, 3)
		// A call held by the others (not durably blocked) is R1's and R4's
		// business; the clock cannot move then, so this test stops.
		held := h.Settle() != nil
		for i, c := range calls {
			if c.Returned() && !c.Panicked() {
				_, err := c.Result()
				t.Errorf("%d calls of Do failed at the same instant (an outage seen by many requests), each with "+
					"MaxAttempts 3 and BaseDelay 10ms; call %d returned after %d attempt(s), without pausing, with "+
					"%s: each call has its own attempts, however many other calls are pausing: pause, and give up "+
					"only when this call's MaxAttempts attempts have run out", testCrowd, i+1, ops[i].Calls(),
					testDescribe(err))
				katatest.Unwind(h, calls...)
				return
			}
		}
		// The attempts run out: pauses of 10ms and 20ms, then attempt 3
		// fails too. No cancel, so a pause that a cancel cannot end (R4's
		// business) does not fail this requirement.
		for _, d := range []time.Duration{10 * ms, 20 * ms} {
			if held {
				testCrowdEnd(h, calls) // one cancel for all, then Unwind only if some never return
				return
			}
			h.Clk.Add(d)
			held = h.Settle() != nil
		}
		for i, c := range calls {
			if !c.Returned() {
				t.Errorf("%d calls of Do failed at the same instant, each with MaxAttempts 3 and BaseDelay 10ms, "+
					"and every attempt failed; 30ms later on the mock clock (the pauses of 10ms and 20ms), call "+
					"%d had made %d attempt(s) and had not returned: after its last attempt fails, Do returns at "+
					"once, however many other calls are pausing", testCrowd, i+1, ops[i].Calls())
				testCrowdEnd(h, calls) // cancels them all: one leak check, not one per call
				return
			}
			if c.Panicked() {
				continue // reported already
			}
			if _, err := c.Result(); ops[i].Calls() != 3 || !errors.Is(err, ErrExhausted) || !errors.Is(err, ops[i].errs[2]) {
				t.Errorf("%d calls of Do failed at the same instant, each with MaxAttempts 3 and every attempt "+
					"failing; call %d made %d attempt(s) and returned %s: each call makes its own 3 attempts and "+
					"then returns an error matching ErrExhausted and its last op error %q", testCrowd, i+1,
					ops[i].Calls(), testDescribe(err), ops[i].errs[2])
				testCrowdEnd(h, calls)
				return
			}
		}
		testCrowdEnd(h, calls)
	})
}

func TestR1_ManyCallsPausingAtOnceEachPauseTheirOwnPause(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 2, BaseDelay: 10 * ms}
		calls, ops := testCrowdStart(h, p, testCrowd, 1)
		if h.Settle() != nil {
			t.Errorf("%d calls of Do failed at the same instant, each to pause BaseDelay 10ms; with the mock clock "+
				"stopped, some of them were waiting, not for their pause's timer or their ctx, but for something the "+
				"other calls hold (a lock, a slot): a call's pause is the one its Policy gives, on a timer of its "+
				"own, and never waits for other calls or their pauses", testCrowd)
			katatest.Unwind(h, calls...)
			return
		}
		// A call that returned at once gave up early: R2's business.
		h.Clk.Add(10*ms - 1)
		h.Settle()
		for i, op := range ops {
			if op.Calls() > 1 {
				t.Errorf("%d calls of Do failed at the same instant, each to pause BaseDelay 10ms; call %d started "+
					"attempt 2 before 10ms had passed on the mock clock", testCrowd, i+1)
				katatest.Unwind(h, calls...)
				return
			}
		}
		h.Clk.Add(1)
		h.Settle()
		late := 0
		for i, c := range calls {
			if !c.Returned() && ops[i].Calls() == 1 {
				late++
			}
		}
		if late > 0 {
			t.Errorf("%d calls of Do failed at the same instant, each to pause BaseDelay 10ms; when 10ms had passed "+
				"on the mock clock, %d of them had still not started attempt 2: a call's pause is the one its "+
				"Policy gives, on a timer of its own, and never waits for other calls or their pauses",
				testCrowd, late)
			katatest.Unwind(h, calls...)
			return
		}
		for i, c := range calls {
			if !c.Returned() {
				t.Errorf("call %d of %d: attempt 2 succeeded, but Do did not return: return the value as soon as op "+
					"succeeds", i+1, testCrowd)
				katatest.Unwind(h, calls...)
				return
			}
		}
		if !testCrowdEnd(h, calls) {
			return
		}
		for i, c := range calls {
			if v, err := c.Result(); ops[i].Calls() == 2 && (err != nil || v != "ok") {
				t.Errorf("call %d of %d: attempt 2 succeeded, but Do returned (%q, %s); want (\"ok\", nil)",
					i+1, testCrowd, v, testDescribe(err))
				return
			}
		}
	})
}

func TestR4_ACancelEndsThePauseHoweverManyCallsArePausing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 3, BaseDelay: 200 * ms}
		calls, _ := testCrowdStart(h, p, testCrowd-1, 3)
		h.Settle()
		// One more, the last to fail and pause. The clock stands still
		// from here on: a call held by the others may be blocked where
		// the bubble's clock cannot move.
		more, ops := testCrowdStart(h, p, 1, 3)
		h.Settle()
		calls = append(calls, more...)
		last, op := more[0], ops[0]
		if last.Returned() || op.Calls() != 1 {
			katatest.Unwind(h, calls...) // it gave up or did not pause: R1's and R2's business
			return
		}
		last.Cancel()
		h.Settle()
		if !last.Returned() {
			t.Errorf("%d calls of Do were pausing at once, each for 200ms after its attempt 1 failed; the caller of "+
				"the last one to pause cancelled during its pause, and Do was still waiting with the mock clock "+
				"stopped: a cancel ends the pause at once, however many other calls are pausing; nothing but the "+
				"pause's timer and ctx.Done() may hold a call in its pause", testCrowd)
			katatest.Unwind(h, calls...)
			return
		}
		_, err := last.Result()
		switch {
		case last.Panicked():
		case op.Calls() != 1:
			t.Errorf("cancel during the pause after attempt 1 of one of %d pausing calls: no attempt may start "+
				"after the cancel, yet op was called %d time(s)", testCrowd, op.Calls())
		case !errors.Is(err, context.Canceled) || !errors.Is(err, op.errs[0]):
			t.Errorf("cancel during the pause after attempt 1 of one of %d pausing calls: Do returned %s; the "+
				"error must match both context.Canceled and the last op error %q", testCrowd, testDescribe(err),
				op.errs[0])
		}
		testCrowdEnd(h, calls)
	})
}
