package retry

// B2 with a sentinel error every call shares: a Retry-After mark belongs
// to the error value RetryAfter returned, and to nothing else. A mark that
// was never paused (the attempts ran out, the error was never retried, or
// the value was built and dropped) is not waiting for the next error that
// matches the same sentinel: a later call of Do whose op fails with that
// sentinel, without RetryAfter, pauses its plain backoff.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

var testErrThrottled = errors.New("429 too many requests")

func TestB2_AMarkNeverPausedIsNotTakenByALaterCall(t *testing.T) {
	leave := []struct {
		name, how string
		do        func(h *katatest.H) bool // leaves a RetryAfter(time.Hour, testErrThrottled) unpaused
	}{
		{"AttemptsRanOut", "a call of Do whose last attempt failed with RetryAfter(1h, errThrottled) (MaxAttempts 1)", func(h *katatest.H) bool {
			op := func(context.Context) (string, error) { return "", RetryAfter(time.Hour, testErrThrottled) }
			c := katatest.Start(h, func(ctx context.Context) (string, error) {
				return Do(ctx, h.Clk, Policy{MaxAttempts: 1}, op)
			})
			return testLeftBehind(c)
		}},
		{"NeverRetried", "a call of Do whose op returned RetryAfter(1h, Permanent(errThrottled)), never retried", func(h *katatest.H) bool {
			op := func(context.Context) (string, error) { return "", RetryAfter(time.Hour, Permanent(testErrThrottled)) }
			c := katatest.Start(h, func(ctx context.Context) (string, error) {
				return Do(ctx, h.Clk, Policy{MaxAttempts: 5, BaseDelay: time.Millisecond}, op)
			})
			return testLeftBehind(c)
		}},
		{"Dropped", "RetryAfter(1h, errThrottled) built and dropped, never returned by any op", func(h *katatest.H) bool {
			_ = RetryAfter(time.Hour, testErrThrottled)
			return true
		}},
	}
	for _, l := range leave {
		t.Run(l.name, func(t *testing.T) {
			katatest.Run(t, func(h *katatest.H) {
				if !l.do(h) {
					return
				}
				p := Policy{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, Multiplier: 2}
				errs := []error{fmt.Errorf("stock lookup 1: %w", testErrThrottled)}
				why := func(int) string {
					return "the op failed with an error wrapping a sentinel that " + l.how + " had marked before; " +
						"this error came from no RetryAfter, so the pause is the backoff, BaseDelay 10ms. A mark " +
						"belongs to the error value RetryAfter returned: carry d in that value (a type errors.As " +
						"finds), never in a table shared by every call and looked up by the error it wraps"
				}
				(testPlan{policy: p, errs: errs, want: []time.Duration{10 * time.Millisecond}, nohook: true, why: why}).run(h)
			})
		})
	}
}

// testLeftBehind ends the call of Do that leaves a mark unpaused. Whether
// it returned at once is R2's and R3's to say: here it only sets the
// scene, so a call still running is stopped and the scene skipped.
func testLeftBehind(c *katatest.Call[string]) bool {
	synctest.Wait()
	if !c.Returned() {
		c.Stop()
		return false
	}
	_, _, ok := c.Finish("Do")
	return ok
}
