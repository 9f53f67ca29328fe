package bounded

import (
	"context"
	"errors"
	"strings"
	"sync"
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

// B1, the README's "a select on ctx.Done() and a free slot picks at random
// when both are ready", made to happen: capacity 3, weights 1, 1, 1 and 3.
// Items 0, 1 and 2 run (item 2 ignores its ctx, so it keeps its unit), and
// item 3 must wait for room. The test holds the first weight(3) call while
// item 0 returns nil and item 1 fails: when the loop goes on to wait for
// room, a wake-up for room and the stop are both there already. Whichever
// it takes, it must start nothing more, keep no lock, and return once item
// 2 has returned. A design that weighs item 3 at another moment (all items
// up front, or on a worker) gets the same steps without the held weight.
func TestB1_RoomAndTheStopBothThereWhenTheLoopWaits(t *testing.T) {
	const setup = "ForEachWeighted, capacity 3, weights 1, 1, 1, 3"
	katatest.Repeat(t, 24, func(h *katatest.H) {
		w := testNewWork(4)
		w.errs[1] = errors.New("thumbnail 1: 500 internal error")
		w.deaf[2] = true
		weighing := h.Gate()
		var once sync.Once
		weight := func(i int) int {
			if i != 3 {
				return 1
			}
			once.Do(func() { _ = weighing.Hold(context.Background()) })
			return 3
		}
		c := katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(4), 3, weight, w.call)
		})
		if c.Broken() {
			return
		}
		held := weighing.Waiting() == 1 && len(w.running()) == 3
		if !held {
			weighing.Release()
			testSettle(h)
		}
		if !testRunning(h, w, 3, c, setup) {
			return
		}
		w.open(0)
		w.open(1)
		testSettle(h) // a design that weighs under its lock keeps the releases waiting on it: fine
		weighing.Release()
		// The loop makes its pick before item 2 returns: a release that
		// came first would find the lock free, whatever the pick left.
		testSettle(h)
		w.open(2)
		if stuck := h.Settle(); stuck != nil {
			h.T.Errorf("%s: item 0 returned nil and item 1 failed while item 3 waited for room, so a wake-up for "+
				"room and the stop were both there when the loop looked; then goroutines of yours were stuck on a "+
				"mutex that is never unlocked: a path that returns (the stop seen after a wake-up for room) kept "+
				"the lock; unlock on every way out. Stuck:\n\t%s", setup, strings.Join(stuck, "\n\t"))
			w.openAll()
			c.Stop()
			return
		}
		if !c.Returns("%s: item 0 returned nil and item 1 failed while item 3 waited for room, so a wake-up for "+
			"room and the stop were both there when the loop looked; every call returned, but ForEachWeighted did not", setup) {
			return
		}
		if _, ok := testResult(c); !ok {
			return
		}
		if n := w.callsOf()[3]; n > 0 {
			h.T.Errorf("%s: item 3 started after item 1 had failed (a wake-up for room and the stop were both "+
				"there when the loop looked): after a failure no new call starts. After you get room, look at the "+
				"ctx you cancel on the first error (the one the calls get), not only at the caller's ctx; %s",
				setup, testRandomHint)
		}
	})
}
