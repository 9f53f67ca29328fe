package queue

// B1 with several consumers that each hold a partial batch when produce
// returns: each flushes its own leftovers, so no batch handed to consume
// ever holds more than max(Size, 1) items, the final flushes included.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLeftovers is a RunBatches whose items trickle in one at a time, each
// taken by a consumer before the next is put, so that they spread over the
// consumers and several hold a partial batch when produce returns.
type testLeftovers struct {
	size       int
	flushEvery time.Duration // never reached: the clock stands still
	capacity   int
	consumers  int
	items      int
}

func (s testLeftovers) String() string {
	return fmt.Sprintf("RunBatches(capacity %d, %d consumers, Batch{Size: %d, FlushEvery: %v}); produce puts items "+
		"1…%d one at a time, letting everything settle after each put, then returns nil; the clock stands still",
		s.capacity, s.consumers, s.size, s.flushEvery, s.items)
}

func testDrawLeftovers(r *rapid.T) testLeftovers {
	var s testLeftovers
	s.size = rapid.OneOf(rapid.IntRange(2, 5), rapid.SampledFrom([]int{1, 0, -1, math.MinInt})).Draw(r, "Size")
	s.flushEvery = rapid.SampledFrom([]time.Duration{0, time.Second}).Draw(r, "FlushEvery")
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(2, 4).Draw(r, "consumers")
	s.items = rapid.IntRange(1, s.consumers*max(s.size, 1)+2).Draw(r, "items")
	return s
}

func (s testLeftovers) play(h *katatest.H) {
	batches := &testBatchLog{}
	consume := func(ctx context.Context, b []int) error {
		batches.Add(b)
		return nil
	}
	next := make(chan int)
	end := sync.OnceFunc(func() { close(next) })
	h.Own(end)
	produce := func(ctx context.Context, put func(int) error) error {
		for v := range next {
			if err := put(v); err != nil {
				return err
			}
		}
		return nil
	}
	b := Batch{Size: s.size, FlushEvery: s.flushEvery}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
	})
	synctest.Wait()
	for v := 1; v <= s.items; v++ {
		select {
		case next <- v:
			synctest.Wait()
		case <-call.Done():
			h.Errorf("RunBatches returned before produce had put its items")
			return
		}
	}
	end()
	stats, err, ok := testEnd(h, call, "produce returned and every consume call had returned, yet")
	if !ok {
		return
	}
	size := max(s.size, 1)
	got := batches.All()
	if i := slices.IndexFunc(got, func(b []int) bool { return len(b) > size }); i >= 0 {
		h.Errorf("RunBatches handed consume a batch of %d items, %v, with Batch{Size: %d}: a batch holds at most "+
			"max(Size, 1) = %d items, the final flush included. Each consumer keeps its own batch and, once the "+
			"queue is closed and empty, flushes it itself: one call per consumer with only the items that consumer "+
			"took, not the leftovers of several consumers merged into one call (all batches: %v)",
			len(got[i]), got[i], s.size, size, got)
		return
	}
	var items []int
	for _, b := range got {
		items = append(items, b...)
	}
	if !slices.Equal(testSorted(items), testSeq(1, s.items)) {
		h.Errorf("produce put items 1…%d and returned nil, but RunBatches handed consume the batches %v: every "+
			"accepted item goes to consume exactly once, the partial batches of every consumer included (each "+
			"flushes its own once the queue is closed and empty)", s.items, got)
		return
	}
	if err != nil || stats != (Stats{Produced: s.items, Consumed: s.items}) {
		h.Errorf("every item was consumed and nothing failed, yet RunBatches returned %+v, %s; want {Produced:%d "+
			"Consumed:%d Dropped:0} and nil (Stats count items, not batches)", stats, testDescribe(err), s.items, s.items)
	}
}

func TestB1_ExploreEachConsumerFlushesOnlyItsOwnLeftovers(t *testing.T) {
	// Items spread over the consumers one by one, so that when produce
	// returns several hold a partial batch: 2 and 2 with Size 3, 3+2+2+2
	// with Size 4. Each must flush its own, never more than Size at once.
	katatest.Replay(t, []testLeftovers{
		{size: 3, capacity: 1, consumers: 2, items: 4},
		{size: 4, flushEvery: time.Second, capacity: 0, consumers: 4, items: 9},
	}, func(h *katatest.H, s testLeftovers) { s.play(h) })
	katatest.Explore(t, 8, testDrawLeftovers, func(h *katatest.H, s testLeftovers) { s.play(h) })
}
