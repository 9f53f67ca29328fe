package firstwins

// Explored B1: Hedge with no calls. The README says it of First ("First
// with no calls returns ErrNoCalls at once") and of Hedge that its results
// and errors are as for First; the stub's ErrNoCalls says it of both. So
// Hedge with no calls returns ErrNoCalls at once, whatever the timeout,
// the delay and the caller's ctx (a ctx already done may give ctx.Err()
// instead: the README does not order the two), and never touches calls[0].

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testNoCalls is one call of Hedge with no calls.
type testNoCalls struct {
	timeout, delay time.Duration
	ctx            int // 0: live; 1: already cancelled; 2: its deadline already passed
}

var testNoCallsCtx = [...]string{"a live ctx", "a ctx already cancelled", "a ctx whose deadline has already passed"}

func (s testNoCalls) String() string {
	return fmt.Sprintf("Hedge(ctx, clk, timeout %v, delay %v) with no calls, with %s", s.timeout, s.delay, testNoCallsCtx[s.ctx])
}

func testDrawNoCalls(r *rapid.T) testNoCalls {
	return testNoCalls{
		timeout: rapid.SampledFrom([]time.Duration{0, -1, -time.Second, 1, 50 * testMs, time.Hour}).Draw(r, "timeout"),
		delay:   rapid.SampledFrom([]time.Duration{0, -1, 1, 10 * testMs, time.Hour}).Draw(r, "delay"),
		ctx:     rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(r, "the caller's ctx"),
	}
}

func (s testNoCalls) play(h *katatest.H) {
	var opts []katatest.CtxOption
	var ctxErr error
	switch s.ctx {
	case 1:
		opts, ctxErr = append(opts, katatest.Cancelled()), context.Canceled
	case 2:
		opts, ctxErr = append(opts, katatest.Expired()), context.DeadlineExceeded
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) {
		return Hedge[string](ctx, h.Clk, s.timeout, s.delay)
	}, opts...)
	if c.Broken() { // it panicked (calls[0] of no calls): reported
		return
	}
	if instant, _ := c.ReturnsAtOnce(time.Hour); !instant {
		h.Errorf("Hedge with no calls was still waiting (for a replica that does not exist), with the mock clock " +
			"standing still: with no calls there is no answer to wait for. Return ErrNoCalls at once, as First " +
			"does: check len(calls) in Hedge itself, before it starts calls[0] or arms a timer")
		c.Stop()
		return
	}
	v, err, ok := c.Finish("Hedge")
	if !ok {
		return
	}
	if !errors.Is(err, ErrNoCalls) && (ctxErr == nil || !errors.Is(err, ctxErr)) {
		h.Errorf("Hedge with no calls returned (%q, %v); want ErrNoCalls, as First returns: its results and errors "+
			"are those of First, and with no replica there is no answer ((zero, nil) would pass for a success)", v, err)
		return
	}
	if v != "" {
		h.Errorf("Hedge with no calls returned %q along with its error: a failure returns the zero value of T", v)
	}
}

func TestB1_ExploreHedgeWithNoCallsIsErrNoCalls(t *testing.T) {
	// Always: a live ctx, a timeout and a delay, as a caller would write it.
	katatest.Replay(t, []testNoCalls{{timeout: time.Second, delay: 100 * testMs}}, func(h *katatest.H, s testNoCalls) { s.play(h) })
	katatest.Explore(t, 6, testDrawNoCalls, func(h *katatest.H, s testNoCalls) { s.play(h) })
}
