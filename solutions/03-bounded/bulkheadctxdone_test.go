package bounded

// B2 with R4: a request whose ctx has already ended finds every slot of
// the bulkhead busy. No call failed and no item started, so the answer is
// ctx.Err(), not ErrBusy: a shed counts as the first error only while ctx
// is live. A client told "busy" retries a request its caller gave up on.

import (
	"context"
	"errors"
	"testing"

	"gokata/internal/katatest"
)

func TestB2_ACtxAlreadyDoneWinsOverABusyBulkhead(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  katatest.CtxOption
		want error
	}{
		{"already cancelled", katatest.Cancelled(), context.Canceled},
		{"past its deadline", katatest.Expired(), context.DeadlineExceeded},
	} {
		katatest.Run(t, func(h *katatest.H) {
			b, err := NewBulkhead(1)
			if err != nil || b == nil {
				return // graded by the other B2 tests
			}
			held := testNewWork(1)
			a := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), held.call) })
			if a.Broken() {
				return
			}
			if got := held.running(); len(got) != 1 {
				held.openAll()
				return // the first request's item must run: graded by the other B2 tests
			}
			w := testNewWork(2)
			w.openAll()
			c := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(2), w.call) }, tc.opt)
			if !c.Returns("TryForEach with a ctx %s, on a bulkhead whose only slot another request holds, did not return", tc.name) {
				held.openAll()
				return
			}
			held.openAll()
			if !a.Returns("the request holding the slot did not return after its call did") {
				return
			}
			got, ok := testResult(c)
			if !ok {
				return
			}
			if !errors.Is(got, tc.want) && !errors.Is(got, ErrBusy) {
				return // a ctx already done gives ctx.Err(): graded by the other tests of R4 and B2
			}
			if errors.Is(got, ErrBusy) {
				h.Errorf("a bulkhead of 1 slot, held by another request; TryForEach over 2 items with a ctx %s "+
					"returned %s: no call failed and ctx ended before any item started, so it returns ctx.Err() "+
					"(%v), as ForEach does. A shed counts as the first error only while ctx is live: when the try "+
					"finds no slot, record ErrBusy only if ctx has not ended", tc.name, testXDescribe(got), tc.want)
				return
			}
			if n := w.started(); n > 0 {
				h.Errorf("TryForEach with a ctx %s called fn %d time(s): a ctx already done starts nothing", tc.name, n)
			}
		})
	}
}
