package ratelimit

// R6 once time has passed since the last token was taken: the deadline is
// an instant, compared with the instant the token is due, so what counts is
// how long the token is from now, not how long after the last one it comes.

import (
	"errors"
	"testing"

	"gokata/internal/katatest"
)

func TestR6_ADeadlineAfterTheTokenWaitsAlsoLaterOn(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 1, 1)
		if !l.Allow() {
			return // a new limiter with burst 1 has a token: graded by R1
		}
		h.Advance(500 * testMs)
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(800*testMs))
		if testBroken(h, w) {
			return
		}
		if w.Returned() {
			if err := w.Err(); errors.Is(err, ErrWouldExceedDeadline) {
				t.Errorf("1 per second, burst 1: a token taken at 0; at 500ms Wait with a deadline 800ms later (at "+
					"1.3s) failed at once with %q, but its token is due at 1s, 500ms from now, before the deadline: "+
					"a later deadline waits for the token. Compare the deadline with the instant the token is due "+
					"(or with its wait from clk.Now()), not with an interval: not with the time since the last "+
					"token, not with now + 1/r", err)
			}
			return // another answer at once: graded by the other R6 tests
		}
		// When it wakes is graded by the other tests of R3 and R6.
		w.Stop()
	})
}
