package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"gokata/internal/katatest"
)

// A hook that takes its time (it ships a log line, it records a metric)
// belongs to its own call: calls of Do sharing the Policy each run their
// own hook and pause on their own, whatever another call's hook is doing.
func TestR1_AHookStillRunningHoldsUpNoOtherCall(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		const both = "two calls of Do share a Policy; while the BeforeSleep of one was still running, the other "
		errSlow, errFast := errors.New("503 from the slow replica"), errors.New("503 from the fast replica")
		held := h.Gate()
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 2, BaseDelay: 10 * ms, BeforeSleep: func(attempt int, err error, pause time.Duration) {
			hooks.record(attempt, err, pause)
			if errors.Is(err, errSlow) {
				_ = held.Hold(context.Background()) // this call's hook is still shipping its log line
			}
		}}
		opOf := func(err error) func(context.Context) (string, error) {
			n := 0
			return func(context.Context) (string, error) {
				if n++; n == 1 {
					return "", err
				}
				return "ok", nil
			}
		}
		slow := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, opOf(errSlow)) })
		if slow.Broken() {
			return
		}
		if !slow.Reaches(held.Waiting() == 1, "BeforeSleep was not called before the pause after attempt 1 (attempt 1 "+
			"failed with a retryable error; with the mock clock stopped, the hook saw %v)", hooks.All()) {
			return
		}
		fast := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, opOf(errFast)) })
		if h.Settle() != nil {
			t.Errorf(both +
				"failed its attempt 1 and then waited, with the mock clock stopped, for something the first call " +
				"holds (a lock): each call runs its own hook and pause, and never waits for another call's hook; " +
				"do not hold a lock that all calls share while the hook runs")
			katatest.Unwind(h, slow, fast)
			return
		}
		if fast.Returned() && fast.Panicked() {
			return
		}
		if len(hooks.All()) != 2 {
			t.Errorf(both+
				"failed its attempt 1, and its own BeforeSleep was not called (the hook saw %v): each call runs its "+
				"hook on its own goroutine, and never waits for another call's hook; do not hold a lock that "+
				"all calls share while the hook runs", hooks.All())
			katatest.Unwind(h, slow, fast)
			return
		}
		h.Advance(10 * ms)
		if !fast.Returns(both +
			"paused its 10ms and tried again, and attempt 2 succeeded, but Do did not return: a call's pause and " +
			"attempts never wait for another call's hook") {
			katatest.Unwind(h, slow)
			return
		}
		v, err := fast.Result() // collected with a leak check once the other call returned too
		if err != nil || v != "ok" {
			t.Errorf("attempt 2 succeeded, but Do returned (%q, %s); want (\"ok\", nil)", v, testDescribe(err))
			katatest.Unwind(h, slow)
			return
		}
		held.Release()
		h.Advance(10 * ms)
		if !slow.Returns("the slow hook returned and the call paused its 10ms; attempt 2 succeeded, but Do did " +
			"not return") {
			return
		}
		_, _, _ = slow.Finish("Do")
	})
}
