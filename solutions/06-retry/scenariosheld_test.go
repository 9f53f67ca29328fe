package retry

// R4 when the cancel and the end of a pause are both there by the time Do
// waits: the scheduler may hold Do between making the pause's timer and
// waiting on it, while the caller cancels (or ctx's deadline passes) and
// the pause ends. Either may end the pause. If the pause ended first, the
// next attempt runs; if Do stops without another attempt, it stopped for
// the cancel, and its error says so: it matches both ctx.Err() and the last
// op error.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

// testBothReady is one call of Do whose op fails every attempt; Do is
// held right after it made the timer of the pause after attempt k, while
// its ctx ends and the clock reaches the end of that pause.
type testBothReady struct {
	attempts int
	base     time.Duration
	k        int
	deadline bool // ctx's deadline (clk.WithTimeout) passes at the pause's end, rather than a cancel
}

func (s testBothReady) pause(n int) time.Duration { return s.base << (n - 1) }

func (s testBothReady) String() string {
	how := "the caller cancels ctx"
	if s.deadline {
		how = "ctx's deadline passes"
	}
	return fmt.Sprintf("MaxAttempts %d, BaseDelay %v, every attempt fails; Do is held (as the scheduler may hold "+
		"it) right after it made the timer of the %v pause after attempt %d, and meanwhile %s and the clock reaches "+
		"the end of that pause; then Do goes on", s.attempts, s.base, s.pause(s.k), s.k, how)
}

func (s testBothReady) play(h *katatest.H) {
	clk := h.HeldClock()
	clk.HoldTimer(s.k) // the timer of the pause after attempt k
	errs := testErrors(s.attempts)
	op := &testOp{errs: errs}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base}
	var opts []katatest.CtxOption
	if s.deadline {
		var total time.Duration
		for n := 1; n <= s.k; n++ {
			total += s.pause(n)
		}
		opts = append(opts, katatest.Timeout(total))
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, clk, p, op.call) }, opts...)
	if c.Broken() {
		return
	}
	for n := 1; n < s.k; n++ {
		h.Advance(s.pause(n))
	}
	synctest.Wait()
	if c.Returned() || op.Calls() != s.k || clk.Gate.Waiting() != 1 {
		c.Stop() // not in the pause after attempt k: the pauses are R1's business
		return
	}
	want, how := context.Canceled, "the caller cancelled"
	if s.deadline {
		want, how = context.DeadlineExceeded, "ctx's deadline passed"
	} else {
		c.Cancel()
	}
	h.Advance(s.pause(s.k))
	clk.Gate.Release()
	if !c.Returns("%s just as the %v pause after attempt %d ended, and Do never returned", how, s.pause(s.k), s.k) {
		return
	}
	_, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	switch calls := op.Calls(); {
	case calls == s.k && (!errors.Is(err, want) || !errors.Is(err, errs[s.k-1])):
		h.Errorf("%s during the %v pause after attempt %d, as that pause ended: Do made no further attempt, so it "+
			"stopped because ctx was done, yet it returned %s; when Do stops because ctx is done, however it learned "+
			"of it (in the pause's select or right after it), the error must match both ctx.Err(), here %v, and the "+
			"last op error %q: a cancel is not running out of attempts", how, s.pause(s.k), s.k, testDescribe(err), want,
			errs[s.k-1])
	case calls == s.k+1 && s.k+1 < s.attempts && (!errors.Is(err, want) || !errors.Is(err, errs[s.k])):
		h.Errorf("%s as the pause after attempt %d ended, and Do made attempt %d (the pause ended first); then "+
			"it returned %s: with ctx done, the pause after attempt %d ends at once with an error that matches "+
			"both ctx.Err(), here %v, and the last op error %q", how, s.k, s.k+1, testDescribe(err), s.k+1, want,
			errs[s.k])
	case calls > s.k+1:
		h.Errorf("%s as the pause after attempt %d ended, yet op was called %d time(s): at most one more attempt "+
			"may start (if the pause ended first), and none after the pause that follows it", how, s.k, calls)
	}
}

func TestR4_ACancelAsThePauseEndsIsStillACancel(t *testing.T) {
	cases := []testBothReady{
		{attempts: 4, base: 10 * time.Millisecond, k: 1},
		{attempts: 4, base: 10 * time.Millisecond, k: 2, deadline: true},
		{attempts: 3, base: 5 * time.Millisecond, k: 2},
		{attempts: 2, base: time.Millisecond, k: 1, deadline: true},
		{attempts: 5, base: 7 * time.Millisecond, k: 3},
	}
	// Each case stages the race the same way every time; which of the two
	// ready events Do's select takes is the runtime's choice, so each case
	// runs in several bubbles.
	katatest.Repeat(t, 4, func(h *katatest.H) {
		for _, s := range cases {
			s.play(h)
			if h.Failed() {
				h.Logf("the scenario: %s", s)
				return
			}
		}
	})
}
