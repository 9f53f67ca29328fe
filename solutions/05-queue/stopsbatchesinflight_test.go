package queue

// B1 stops as Run does: the first failed batch cancels the ctx of every
// batch in flight in the other consumers, which RunBatches must wait for,
// and RunBatches returns that failure.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"gokata/internal/katatest"
)

func TestB1_AFailedBatchCancelsTheBatchesInFlight(t *testing.T) {
	errWrite := errors.New("db: insert failed")
	for _, consumers := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d consumers", consumers), func(t *testing.T) {
			katatest.Repeat(t, 4, func(h *katatest.H) {
				// Items 1 … consumers, one batch each (Size 1): every batch but
				// item 1's waits on its ctx; item 1's fails when the test says.
				waiting, failing := h.Gate(), h.Gate()
				consume := func(ctx context.Context, b []int) error {
					if len(b) == 1 && b[0] == 1 {
						_ = failing.Hold(context.Background())
						return errWrite
					}
					return waiting.Hold(ctx)
				}
				produce := func(ctx context.Context, put func(int) error) error {
					for v := 1; v <= consumers; v++ {
						if err := put(v); err != nil {
							return err
						}
					}
					return nil
				}
				c := katatest.Start(h, func(ctx context.Context) (Stats, error) {
					return RunBatches(ctx, h.Clk, 0, consumers, Batch{Size: 1}, produce, consume)
				})
				if c.Broken() {
					return
				}
				if !c.Reaches(failing.Waiting() == 1 && waiting.Waiting() == consumers-1,
					"precondition: RunBatches with %d consumers, Size 1 and %d items hands each consumer one batch at once",
					consumers, consumers) {
					return
				}
				failing.Release()
				if !c.Returns("the batch [1] failed with %q while %d other batch(es) were in flight, each waiting on the "+
					"ctx consume got; RunBatches did not return: a consumer error stops RunBatches as it stops Run, "+
					"so it must cancel the ctx of the batches in flight (hand consume the run's own ctx, the one a "+
					"consumer error cancels, not the caller's)", errWrite, consumers-1) {
					return
				}
				_, err, ok := c.Finish("RunBatches")
				if !ok {
					return
				}
				if !errors.Is(err, errWrite) {
					h.Errorf("the batch [1] failed with %q and the batches in flight then returned context.Canceled; "+
						"RunBatches returned %v: the first consumer error is RunBatches's error", errWrite, err)
				}
			})
		})
	}
}
