package bounded

import (
	"context"
	"errors"
	"testing"

	"gokata/internal/katatest"
)

// Limit 2, 3 items: items 0 and 1 run, and the loop waits for a slot for
// item 2. Then item 0 returns nil and item 1 fails, at the same instant:
// the loop may be woken by the free slot and find the stop only then. Which
// comes first depends on the schedule, so the scenario is repeated; either
// way ForEach must return once every call it started has returned.
func testSuccessAndFailureWhileTheLoopWaits(t *testing.T, what string,
	each func(ctx context.Context, items []int, limit int, fn func(context.Context, int) error) error) {
	katatest.Repeat(t, 24, func(h *katatest.H) {
		errBoom := errors.New("thumbnail 1: 500 internal error")
		w := testNewWork(3)
		w.errs[1] = errBoom
		c := katatest.StartErr(h, func(ctx context.Context) error { return each(ctx, testItems(3), 2, w.call) })
		if c.Broken() || !testRunning(h, w, 2, c, what+", limit 2, 3 items") {
			return
		}
		w.open(0)
		w.open(1)
		if stuck := h.Settle(); stuck != nil {
			h.T.Errorf("%s, limit 2, 3 items: while the loop waited for a slot for item 2, item 0 returned nil and "+
				"item 1 failed at the same instant, and then goroutines of yours were stuck on a mutex that is never "+
				"unlocked: a path that returns (a stop seen after a wake-up for a free slot) kept the lock; unlock "+
				"on every way out. Stuck:\n\t%v", what, stuck)
			w.openAll()
			c.Stop()
			return
		}
		w.openAll() // item 2, if the free slot came first
		if !c.Returns("%s, limit 2, 3 items: while the loop waited for a slot for item 2, item 0 returned nil and "+
			"item 1 failed at the same instant; every call returned, but %s did not", what, what) {
			return
		}
		testResult(c) // which error it returns is R4's business
	})
}

func TestR3_ASuccessAndAFailureTogetherWhileTheLoopWaits(t *testing.T) {
	testSuccessAndFailureWhileTheLoopWaits(t, "ForEach", ForEach[int])
}

func TestB1_ASuccessAndAFailureTogetherWhileTheLoopWaits(t *testing.T) {
	testSuccessAndFailureWhileTheLoopWaits(t, "ForEachWeighted",
		func(ctx context.Context, items []int, capacity int, fn func(context.Context, int) error) error {
			return ForEachWeighted(ctx, items, capacity, func(int) int { return 1 }, fn)
		})
}
