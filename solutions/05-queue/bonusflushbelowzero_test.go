package queue

// Bonus B1, over the values the README allows for FlushEvery: "0 or below
// means no timer", like drainTimeout for B2. A timer armed for any
// FlushEvery other than 0 fires at once for a negative one (a config that
// says -1 for "off"), and every batch is flushed with its first item.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testNoTimerBatch struct {
	size       int
	flushEvery time.Duration // 0 or below
	capacity   int
	consumers  int
	rounds     []int           // items put at once in each round
	waits      []time.Duration // how far the clock moves after each round
}

func (s testNoTimerBatch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RunBatches(capacity %d, %d consumer(s), Batch{Size: %d, FlushEvery: %v})", s.capacity, s.consumers,
		s.size, s.flushEvery)
	next := 1
	for i, n := range s.rounds {
		fmt.Fprintf(&b, "; produce puts %s at once, the clock moves %v", testItems(next, n), s.waits[i])
		next += n
	}
	b.WriteString("; then produce returns")
	return b.String()
}

func testDrawNoTimerBatch(r *rapid.T) testNoTimerBatch {
	s := testNoTimerBatch{
		size: rapid.IntRange(2, 4).Draw(r, "Size"),
		flushEvery: rapid.SampledFrom([]time.Duration{-1, -time.Millisecond, -time.Hour, math.MinInt64, 0}).
			Draw(r, "FlushEvery"),
		capacity:  rapid.IntRange(0, 3).Draw(r, "capacity"),
		consumers: rapid.IntRange(1, 2).Draw(r, "consumers"),
	}
	s.rounds = rapid.SliceOfN(rapid.IntRange(1, 5), 1, 3).Draw(r, "rounds")
	s.waits = rapid.SliceOfN(rapid.SampledFrom([]time.Duration{1, time.Millisecond, time.Hour}), len(s.rounds),
		len(s.rounds)).Draw(r, "waits")
	return s
}

func (s testNoTimerBatch) play(h *katatest.H) {
	batches := &testBatchLog{}
	consume := func(ctx context.Context, b []int) error {
		batches.Add(b)
		return nil
	}
	groups := make(chan []int)
	end := sync.OnceFunc(func() { close(groups) })
	h.Own(end)
	produce := func(ctx context.Context, put func(int) error) error {
		for g := range groups {
			for _, v := range g {
				if err := put(v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	b := Batch{Size: s.size, FlushEvery: s.flushEvery}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
	})
	if call.Broken() {
		return
	}
	next := 1
	for i, n := range s.rounds {
		select {
		case groups <- testSeq(next, next+n-1):
		case <-call.Done():
			h.Errorf("RunBatches returned before produce had put its items")
			return
		}
		synctest.Wait()
		h.Advance(s.waits[i])
		next += n
		if i := slices.IndexFunc(batches.All(), func(b []int) bool { return len(b) != s.size }); i >= 0 {
			h.Errorf("B1: a flush timer ran for FlushEvery %v, which means no timer: consume got the batch %v, of %d item(s), while "+
				"produce still ran, after items 1…%d and the clock moving %v: with FlushEvery 0 or below a batch "+
				"is flushed only when it holds Size (%d) items, and at the end; arm a timer only when FlushEvery "+
				"is above 0 (a timer of a negative duration fires at once)", s.flushEvery, batches.All()[i],
				len(batches.All()[i]), next-1, s.waits[i], s.size)
			call.Stop()
			return
		}
	}
	end()
	stats, err, ok := testEnd(h, call, "produce returned and nothing held the consumers, yet")
	if !ok {
		return
	}
	var items []int
	partial := 0
	for _, b := range batches.All() {
		items = append(items, b...)
		if len(b) != s.size {
			partial++
		}
	}
	if !slices.Equal(testSorted(items), testSeq(1, next-1)) || partial > s.consumers ||
		slices.ContainsFunc(batches.All(), func(b []int) bool { return len(b) == 0 }) {
		h.Errorf("B1: Batch{Size: %d, FlushEvery: %v}: RunBatches handed consume the batches %v for items 1…%d; want "+
			"each item once, full batches, and at most one partial batch per consumer, none empty, in the final "+
			"flush", s.size, s.flushEvery, batches.All(), next-1)
		return
	}
	assert.NoError(h, err, "every batch was consumed: RunBatches must return nil")
	assert.Equal(h, Stats{Produced: next - 1, Consumed: next - 1}, stats, "Stats count items, not batches")
}

func TestB1_ExploreFlushEveryZeroOrBelowMeansNoTimer(t *testing.T) {
	katatest.Explore(t, 10, testDrawNoTimerBatch, func(h *katatest.H, s testNoTimerBatch) { s.play(h) })
}
