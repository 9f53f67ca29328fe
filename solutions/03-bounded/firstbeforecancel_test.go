package bounded

// R4 when the first error is the cause of the cancel: the calls in flight
// honour their ctx and return its error the moment the failure cancels
// it. Their context errors come after the failure, so they are dropped,
// whichever goroutine gets to record first: a failure that cancels first
// and records only afterwards lets a woken call record its cancel in
// between. The window is a few instructions wide, so the scenario is
// repeated, each time on a shaken schedule.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gokata/internal/katatest"
)

func TestR4_TheFailureThatCancelsIsTheFirstError(t *testing.T) {
	katatest.Repeat(t, 24, func(h *katatest.H) {
		const n, k = 8, 2
		errBoom := errors.New("thumbnail 2: corrupt image")
		w := testNewWork(n)
		w.errs[k] = errBoom
		w.onCancel = func(i int, err error) error { return fmt.Errorf("thumbnail %d: %w", i, err) }
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(n), n, w.call) })
		if c.Broken() || !testRunning(h, w, n, c, fmt.Sprintf("limit %d, %d items", n, n)) {
			return
		}
		w.open(k) // item 2 fails; the others return their ctx's error as soon as it ends
		if !c.Returns("limit %d, %d items: item %d failed while the other calls were in flight, and ForEach did not "+
			"return: those calls return as soon as their ctx is cancelled, and the first error cancels it", n, n, k) {
			return
		}
		err, ok := testResult(c)
		if !ok || err == errBoom {
			return
		}
		if errors.Is(err, context.Canceled) {
			h.Errorf("limit %d, %d items, all in flight: item %d failed with %q, which cancelled the others, and "+
				"ForEach returned %q, %s", n, n, k, errBoom, err, testRecordBeforeCancel)
			return
		}
		if errors.Is(err, errBoom) {
			h.Errorf("limit %d, %d items, all in flight: item %d failed with %q and ForEach returned %s: ForEach "+
				"returns the first error a call returned, as it is (the same error value, not wrapped, not rebuilt)",
				n, n, k, errBoom, testXDescribe(err))
			return
		}
		h.Errorf("limit %d, %d items, all in flight: item %d failed with %q and ForEach returned %s; want that "+
			"error as it is", n, n, k, errBoom, testXDescribe(err))
	})
}

// testRecordBeforeCancel says what went wrong when a call woken by the
// cancel of the first error had its context error returned instead.
const testRecordBeforeCancel = "the error of a call that the cancel woke: the failure came first, and the " +
	"context errors it caused come after it. Record the first error before you cancel (both inside one " +
	"sync.Once, or under one lock), so a call the cancel wakes never records its error first"
