package firstwins

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestR1_SlowSuccessBeatsFastFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		var at time.Duration
		r := katatest.Start(h, testTimed(h, &at, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, time.Second,
				testAfter(h, 0, "", errors.New("connection refused")),
				testAfter(h, 50*ms, "fresh", nil),
				testAfter(h, 10*ms, "", errors.New("503 busy")))
		}))
		if r.Broken() {
			return
		}
		h.Advance(50*ms - 1) // replicas 0 and 2 have failed; replica 1 succeeds at 50ms
		if r.Returned() {
			v, err := r.Result()
			t.Errorf("First returned (%q, %v) after %v, before replica 1 succeeded at 50ms: a failure is not an answer; "+
				"record the error and keep waiting while other replicas may still succeed", v, err, at)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("replica 1 succeeded at 50ms, but First was still waiting: return the first success at once")
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		assert.NoError(t, err, "a slow success beats a fast failure: replicas 0 and 2 failed, replica 1 succeeded")
		assert.Equal(t, "fresh", v, "First must return the value of the replica that succeeded")
	})
}

func TestR1_WinnerReturnsWhileOthersStillRun(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		slow := testNewLatch()
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, time.Second,
				slow.replica("slow", nil),
				testAfter(h, 0, "fast", nil),
				slow.replica("", errors.New("503 busy")))
		})
		if r.Broken() {
			return
		}
		if !r.Returned() {
			t.Errorf("replica 1 answered \"fast\" at once, but First was still waiting while replicas 0 and 2 were " +
				"running (they ignore ctx): return the first success at once; don't wait for the others")
			testStop(h, r, slow)
			return
		}
		if r.Panicked() {
			return
		}
		v, err := r.Result()
		assert.NoError(t, err, "replica 1 succeeded while the others were still running")
		assert.Equal(t, "fast", v, "First must return the value of the replica that succeeded first")
		slow.open() // the losers answer after First returned
		h.NoLeaks("First and its late losers")
	})
}

func TestR2_AllFailReturnsEveryError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errs := []error{
			errors.New("connection refused"),
			errors.New("503 busy"),
			errors.New("500 internal error"),
		}
		// The replicas fail in reverse order: replica 2 first, replica 0 last.
		var at time.Duration
		r := katatest.Start(h, testTimed(h, &at, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, time.Second,
				testAfter(h, 30*ms, "stale", errs[0]),
				testAfter(h, 20*ms, "", errs[1]),
				testAfter(h, 10*ms, "", errs[2]))
		}))
		if r.Broken() {
			return
		}
		h.Advance(30*ms - 1)
		if r.Returned() {
			_, err := r.Result()
			t.Errorf("First returned the error %q after %v, before the last replica failed at 30ms: "+
				"a failure is not an answer while other replicas may still succeed; "+
				"return the errors only once every replica has failed", err, at)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("every replica had failed by 30ms, but First was still waiting: " +
				"when the last replica fails, return all their errors at once")
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		require.Error(t, err, "every replica failed, so First must return an error")
		for _, e := range errs {
			if msg := katatest.LostWrap(err, e, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
				t.Errorf("every replica failed and First returned %q: %s", err, msg)
				return
			}
		}
		for i, e := range errs {
			assert.ErrorIs(t, err, e, "every replica failed: the error must match each replica's error, "+
				"replica %d's %q included (errors.Join keeps them all)", i, e)
		}
		assert.NotErrorIs(t, err, ErrTimeout, "every replica failed before the timeout: that is not a timeout")
		msg, prev := err.Error(), -1
		for i, e := range errs {
			tag := fmt.Sprintf("replica %d: %v", i, e)
			at := strings.Index(msg, tag)
			if !assert.True(t, at > prev, "every replica failed: the error must tag each replica's error with its "+
				"index in calls, in the order of calls (%q, then replica %d…); got %q", tag, i+1, msg) {
				break
			}
			prev = at
		}
		assert.Empty(t, v, "every replica failed: First must return the zero value of T, "+
			"not what a failed replica returned along with its error")
	})
}

func TestR2_FailuresAtTheSameInstantAreAllCounted(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const n = 8
		// One latch for all: opening it makes the 8 replies ready in one
		// step, so they reach First together, not one timer after another.
		all := testNewLatch()
		calls := make([]testCall, n)
		errs := make([]error, n)
		for i := range calls {
			errs[i] = fmt.Errorf("503 busy (region %d)", i)
			calls[i] = all.replica("", errs[i])
		}
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, 0, calls...)
		})
		if r.Broken() {
			return
		}
		all.open() // all 8 replicas fail at this same instant
		synctest.Wait()
		if !r.Returned() {
			t.Errorf("all %d replicas failed at the same instant, but First was still waiting: some replies "+
				"were dropped or never read. Every reply must reach First, also when several come together: "+
				"give the channel room for every replica (make(chan reply, len(calls))) and send without a "+
				"select/default that drops the reply when First is busy with another", n)
			testStop(h, r, all)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		for _, e := range errs {
			if msg := katatest.LostWrap(err, e, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
				t.Errorf("every replica failed and First returned %q: %s", err, msg)
				return
			}
		}
		for i, e := range errs {
			if !errors.Is(err, e) {
				t.Errorf("all %d replicas failed at the same instant, and First returned %q, without the error of "+
					"replica %d (%q): it returned before that failure was recorded. When the last replica fails, "+
					"the error holds every failure: decide that every replica failed only from failures already "+
					"recorded, counting each one in the same step that records its error (under one lock, or as "+
					"First reads it from the replies), never counted first and recorded after", n, err, i, e)
				break
			}
		}
		assert.Empty(t, v, "every replica failed: First must return the zero value of T")
	})
}

func TestR3_TimesOutOnTheInjectedClock(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errRefused := errors.New("connection refused")
		g := katatest.NewGate()
		var at time.Duration
		r := katatest.Start(h, testTimed(h, &at, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, 100*ms,
				testAfter(h, 10*ms, "", errRefused),
				testHeld(g, "late"),
				testHeld(g, "late"))
		}))
		if r.Broken() {
			return
		}
		if !h.StandsStill(time.Second, "First returned", r.Returned) {
			testStop(h, r)
			return
		}
		h.Advance(100*ms - 1)
		if r.Returned() {
			v, err := r.Result()
			why := "give up only when timeout has passed on clk"
			if err != nil && !errors.Is(err, ErrTimeout) {
				why = "a failure is not an answer while other replicas may still succeed"
			}
			t.Errorf("First returned (%q, %v) after %v of mock time, before its 100ms timeout had passed, "+
				"while replicas 1 and 2 were still running: %s", v, err, at, why)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("the 100ms timeout had passed on the mock clock, but First was still waiting for replicas 1 and 2 " +
				"(replica 0 had failed at 10ms): the timeout counts from the start of First, so start one clk.Timer " +
				"before the loop, not a new one for every reply, and select on it")
			testStop(h, r)
			return
		}
		if r.Panicked() {
			return
		}
		if n := g.Waiting(); n > 0 {
			t.Errorf("First gave up at the timeout, but %d replicas were still running with a live ctx: "+
				"cancel the replicas' ctx whenever First returns (defer the cancel of a context.WithCancel)", n)
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		if msg := katatest.LostWrap(err, errRefused, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
			t.Errorf("First timed out after replica 0 had failed, and returned %q: %s", err, msg)
			return
		}
		assert.ErrorIs(t, err, ErrTimeout, "after the timeout the error must match ErrTimeout")
		assert.ErrorIs(t, err, context.DeadlineExceeded, "after the timeout the error must also match "+
			"context.DeadlineExceeded, so code that checks for deadlines sees it (wrap both with %w)")
		assert.ErrorIs(t, err, errRefused, "after the timeout the error must also carry the errors of the replicas "+
			"that failed before it (replica 0: %q), so the log says what went wrong", errRefused)
		assert.Empty(t, v, "after the timeout First must return the zero value of T")
	})
}

func TestR3_ZeroTimeoutMeansNoTimeout(t *testing.T) {
	for _, timeout := range []time.Duration{0, -1, -time.Second} {
		if testNoTimeout(t, timeout); t.Failed() {
			return
		}
	}
}

func testNoTimeout(t *testing.T, timeout time.Duration) {
	katatest.Run(t, func(h *katatest.H) {
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, timeout, testAfter(h, time.Hour, "late", nil))
		})
		if r.Broken() {
			return
		}
		h.Advance(time.Hour - 1)
		if r.Returned() {
			v, err := r.Result()
			t.Errorf("with timeout %v (timeout <= 0 means no timeout) First returned (%q, %v) before its only "+
				"replica succeeded at 1h; it must wait for it: start a timer only when timeout > 0 (a nil channel "+
				"never fires in a select); a timer of a negative duration has already expired", timeout, v, err)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("with timeout %v, the only replica succeeded after 1h, but First was still waiting", timeout)
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		assert.NoError(t, err, "with timeout %v (no timeout) the replica that succeeded after 1h wins", timeout)
		assert.Equal(t, "late", v, "with timeout %v First must return the value of the replica that succeeded", timeout)
	})
}

// testKey marks the caller's ctx, to see whether the replicas' ctx derives from it.
type testKey struct{}

func TestR4_LosersAreCancelledWhenThereIsAWinner(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		g := katatest.NewGate()
		seen := &katatest.Recorder[any]{}
		loser := func(ctx context.Context) (string, error) {
			seen.Add(ctx.Value(testKey{}))
			return testHeld(g, "slow")(ctx)
		}
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			ctx = context.WithValue(ctx, testKey{}, "request 42")
			return First(ctx, h.Clk, time.Second, loser, testAfter(h, 10*ms, "fast", nil), loser)
		})
		if r.Broken() {
			return
		}
		h.Advance(10 * ms)
		if !r.Returned() {
			t.Errorf("replica 1 succeeded at 10ms, but First was still waiting while replicas 0 and 2 were running: " +
				"return the first success at once; don't wait for the others (cancelling their ctx tells them to stop)")
			testStop(h, r)
			return
		}
		if r.Panicked() {
			return
		}
		if n := g.Cancelled(); n != 2 {
			t.Errorf("replica 1 won and First returned, but the ctx of only %d of the 2 losers was cancelled: "+
				"cancel the losers' ctx as soon as there is a winner (derive it with context.WithCancel(ctx) "+
				"and defer cancel())", n)
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("First")
		if !ok {
			return
		}
		assert.NoError(t, err, "replica 1 succeeded")
		assert.Equal(t, "fast", v, "First must return the value of the replica that succeeded")
		assert.Equal(t, []any{"request 42", "request 42"}, seen.All(), "each replica's ctx must derive from "+
			"the caller's (carrying its values and its cancellation), not start from context.Background()")
	})
}

func TestR5_LateLosersDoNotLeak(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, time.Hour,
				testAfter(h, time.Second, "late", nil),
				testAfter(h, 10*ms, "fast", nil),
				testAfter(h, 500*ms, "", errors.New("503 busy")),
				testAfter(h, 700*ms, "also late", nil))
		})
		if r.Broken() {
			return
		}
		h.Advance(10 * ms)
		h.Advance(time.Second) // the losers, which ignore ctx, answer at 500ms, 700ms and 1s: two more successes
		if !r.Returned() {
			t.Errorf("every replica had answered, replica 1 successfully at 10ms, but First was still waiting")
			testStop(h, r)
			return
		}
		if r.Panicked() {
			return
		}
		v, err := r.Result()
		if !h.NoLeaks("First and its late losers") {
			return
		}
		assert.NoError(t, err, "replica 1 succeeded at 10ms")
		assert.Equal(t, "fast", v, "First must return the first success (replica 1's at 10ms), not a later one")
	})
}

func TestR5_NoTimerLeftOnTheClock(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			name   string
			call   func(g *katatest.Gate) testCall
			cancel bool
		}{
			{"a replica succeeded", func(*katatest.Gate) testCall { return testAfter(h, 0, "fast", nil) }, false},
			{"every replica failed", func(*katatest.Gate) testCall { return testAfter(h, 0, "", errors.New("503 busy")) }, false},
			{"the caller cancelled", func(g *katatest.Gate) testCall { return testHeld(g, "slow") }, true},
		}
		for _, tc := range cases {
			g := katatest.NewGate()
			r := katatest.Start(h, func(ctx context.Context) (string, error) {
				return First(ctx, h.Clk, time.Hour, tc.call(g))
			})
			if r.Broken() {
				return
			}
			if tc.cancel {
				r.Cancel()
			}
			if instant, _ := r.ReturnsAtOnce(time.Second); !instant {
				t.Errorf("%s: First should have returned at once; it was still waiting (see R1, R2 and R6)", tc.name)
				testStop(h, r)
				return
			}
			if _, _, ok := r.Finish("First"); !ok {
				return
			}
			if !testNoTimerLeft(h, "First", tc.name) {
				return
			}
		}
	})
}

func TestR6_CancelledParentReturnsAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		stubborn := testNewLatch()
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First(ctx, h.Clk, time.Hour, stubborn.replica("a", nil), stubborn.replica("b", nil))
		})
		if r.Broken() {
			return
		}
		if r.Returned() {
			v, err := r.Result()
			t.Errorf("First returned (%q, %v) before any replica answered and before the caller cancelled", v, err)
			testStop(h, r, stubborn)
			return
		}
		r.Cancel()
		if instant, took := r.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("the caller cancelled ctx, but First was still waiting for its replicas (which ignore ctx) "+
				"%v later: return at once when the caller gives up: select on ctx.Done() as well, and don't wait "+
				"for the replicas to finish (no wg.Wait on the way out; a buffered channel lets them exit)", took)
			testStop(h, r, stubborn)
			return
		}
		if r.Panicked() {
			return
		}
		v, err := r.Result()
		stubborn.open() // the replicas answer after First returned
		if !h.NoLeaks("First and its late losers") {
			return
		}
		assert.ErrorIs(t, err, context.Canceled, "the caller cancelled: the error must match ctx.Err() (context.Canceled)")
		assert.Empty(t, v, "the caller cancelled: First must return the zero value of T")
	})
}

func TestR6_ZeroCallsIsAnError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return First[string](ctx, h.Clk, time.Second)
		})
		if r.Broken() {
			return
		}
		if instant, _ := r.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("First with no calls must return ErrNoCalls at once; it was still waiting " +
				"(for a result that can never come): check len(calls) before anything else")
			testStop(h, r)
			return
		}
		_, err, ok := r.Finish("First")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, ErrNoCalls, "First with no calls must return ErrNoCalls: with no replica there is "+
			"no answer, and (zero, nil) would pass for a success")
	})
}
