package katatest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The failing sides of Call (a call that hangs after the cancel, leaks, or
// panics) are fixtures in katatest_test.go, run by TestHarnessCatches.

func TestStartOwnsItsContext(t *testing.T) {
	Run(t, func(h *H) {
		c := Start(h, func(ctx context.Context) (string, error) { return "done", pause(ctx, h.Clk, time.Hour) })
		h.Advance(time.Minute)
		require.False(t, c.Returned(), "the pause runs until its hour is up or the ctx is cancelled")
		c.Cancel()
		instant, took := c.ReturnsAtOnce(time.Minute)
		assert.True(t, instant, "a select on ctx.Done() returns at once")
		assert.Zero(t, took)
		v, err, ok := c.Finish("pause")
		assert.True(t, ok, "no panic, no leak")
		assert.Equal(t, "done", v)
		assert.ErrorIs(t, err, context.Canceled, "Cancel cancels the context the call got")
		assert.True(t, c.Stop(), "Stop after the return only confirms nothing is left")
	})
}

func TestCancelHasACause(t *testing.T) {
	Run(t, func(h *H) {
		var ctx context.Context
		c := StartErr(h, func(c context.Context) error { ctx = c; <-c.Done(); return context.Cause(c) })
		c.Cancel()
		err, ok := c.Finish("the call")
		require.True(t, ok)
		assert.ErrorIs(t, ctx.Err(), context.Canceled, "ctx.Err() is what a cancel always gives")
		assert.ErrorIs(t, err, ErrCallerLeft, "the cause tells a return of context.Cause(ctx) apart")
		assert.NotErrorIs(t, err, context.Canceled)
	})
}

func TestReturnDoesNotCancel(t *testing.T) {
	var seen context.Context
	Run(t, func(h *H) {
		c := StartErr(h, func(ctx context.Context) error { seen = ctx; return nil })
		err, ok := c.Finish("the call")
		require.True(t, ok)
		assert.NoError(t, err)
		// Goroutines the call left waiting on ctx must still be there for
		// the leak check, so the return alone does not cancel.
		assert.NoError(t, seen.Err(), "the context stays live after the call returned")
		assert.True(t, c.Stop(), "Stop on a call that returned by itself succeeds")
		assert.ErrorIs(t, seen.Err(), context.Canceled, "Stop cancels the context")
	})
	require.NotNil(t, seen)
}

func TestContextEndsWithTheTest(t *testing.T) {
	var seen context.Context
	Run(t, func(h *H) {
		StartErr(h, func(ctx context.Context) error { seen = ctx; return nil }).Err()
	})
	require.NotNil(t, seen)
	assert.ErrorIs(t, seen.Err(), context.Canceled, "a call's context is cancelled when the test ends")
}

func TestCtxOptions(t *testing.T) {
	Run(t, func(h *H) {
		first := func(ctx context.Context) error { return ctx.Err() }
		assert.ErrorIs(t, StartErr(h, first, Cancelled()).Err(), context.Canceled,
			"Cancelled: the ctx is done before the call starts")
		assert.ErrorIs(t, StartErr(h, first, Expired()).Err(), context.DeadlineExceeded,
			"Expired: the deadline passed before the call starts")

		c := StartErr(h, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, Timeout(time.Second))
		h.Advance(time.Second - 1)
		assert.False(t, c.Returned(), "Timeout(1s): the ctx is live 1ns before the second is up")
		h.Advance(1)
		require.True(t, c.Returned(), "Timeout(1s): the ctx ends when the mock clock reaches 1s")
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	})
}

// Stop runs the clock out past a ticker that is still running: the call
// that sleeps an hour on the mock clock, with no ctx to cancel, ends.
func TestStopRunsTheClockOutPastARunningTicker(t *testing.T) {
	Run(t, func(h *H) {
		tk := h.Clk.Ticker(time.Second)
		defer tk.Stop()
		c := Go(h, func() (int, error) { h.Clk.Sleep(time.Hour); return 1, nil })
		assert.True(t, c.Stop(), "Stop moves the mock clock until the sleep ends")
		v, _ := c.Result()
		assert.Equal(t, 1, v)
	})
}

func TestGoHasNoContextToCancel(t *testing.T) {
	Run(t, func(h *H) {
		c := Go(h, func() (int, error) { h.Clk.Sleep(time.Hour); return 1, nil })
		c.Cancel() // nothing to cancel
		h.Advance(0)
		assert.False(t, c.Returned(), "Cancel does not end a Go call")
		assert.True(t, c.Stop(), "Stop moves the mock clock until the sleep ends")
		v, _ := c.Result()
		assert.Equal(t, 1, v)
	})
}

func TestFixtureReturnsStopsAHeldCall(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		g := h.Gate()
		c := Go(h, func() (int, error) { return 0, g.Hold(context.Background()) }) // ignores any ctx
		if !c.Returns("the call must return at once; it was held at the gate") {
			return
		}
		t.Error("Returns must report a call that has not returned")
	})
}

// A fake of the test's own, handed to the harness with Own: Stop releases
// it, as it does a Gate.
func TestFixtureOwnReleasesAtStop(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		latch := make(chan struct{})
		var once sync.Once
		h.Own(func() { once.Do(func() { close(latch) }) })
		c := Go(h, func() (int, error) { <-latch; return 0, nil }) // ignores any ctx
		if !c.Returns("the call must return at once; it was held in the latch") {
			return
		}
		t.Error("Returns must report a call that has not returned")
	})
}

// A call that nothing can end: Returns names it as the deadlock, in the
// test's own words first, with the line where it waits. A ticker still
// running does not keep the clock from being run out.
func TestFixtureReturnsNamesACallStuckForGood(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		tk := h.Clk.Ticker(time.Millisecond)
		defer tk.Stop()
		never := make(chan int)
		c := Go(h, func() (int, error) { return <-never, nil })
		if !c.Returns("the call must return at once; it was still waiting") {
			return
		}
		t.Error("Returns must report a call that has not returned")
	})
}

func TestFixtureReturnsIsFalseAfterAPanic(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := Go(h, func() (int, error) { panic(errors.New("boom")) })
		if c.Returns("the call must return") {
			t.Error("RETURNS TRUE: Returns must be false for a call that panicked")
		}
	})
}

func TestFixtureWaitsReportsAnEarlyReturn(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := Go(h, func() (int, error) { return 0, errors.New("gave up") })
		if !c.Waits("the call must wait for the gate") {
			return
		}
		t.Error("Waits must report a call that returned")
	})
}
