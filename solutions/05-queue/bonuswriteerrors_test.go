package queue

// Explored consumer errors of RunBatches (B1: the rest is as for Run, R4):
// whichever flush hands consume the failing batch (a full batch, a timer
// flush, or the final flush once produce has returned), that error is the
// one RunBatches returns.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testFlushFailure is a RunBatches whose consume fails on the one batch
// that holds item fail, and returns nil on every other.
type testFlushFailure struct {
	capacity, consumers, size int
	every                     time.Duration // FlushEvery
	rounds                    []int         // items put at once in each round
	moves                     []bool        // after round i, the clock moves FlushEvery (every flushed by its timer)
	fail                      int           // the item whose batch fails
	how                       int           // index into testFailures
	produceErr                int           // index into testProduceErrors: what produce returns at the end
}

func (s testFlushFailure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RunBatches(capacity %d, %d consumer(s), Batch{Size: %d, FlushEvery: %v}); consume fails with %s "+
		"on the batch holding item %d, and returns nil at once on every other", s.capacity, s.consumers, s.size,
		s.every, testFailures[s.how].how, s.fail)
	next := 1
	for i, n := range s.rounds {
		fmt.Fprintf(&b, "; produce puts %s at once", testItems(next, n))
		if s.moves[i] {
			fmt.Fprintf(&b, ", the clock moves %v", s.every)
		}
		next += n
	}
	fmt.Fprintf(&b, "; then produce returns %s (the final flush)", testProduceErrors[s.produceErr].how)
	return b.String()
}

func testDrawFlushFailure(r *rapid.T) testFlushFailure {
	var s testFlushFailure
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.size = rapid.IntRange(1, 4).Draw(r, "Size")
	s.every = rapid.SampledFrom([]time.Duration{0, 0, time.Millisecond, 50 * time.Millisecond, testHuge}).Draw(r, "FlushEvery")
	s.rounds = rapid.SliceOfN(rapid.IntRange(1, 2*s.size+1), 1, 3).Draw(r, "rounds")
	total := 0
	for _, n := range s.rounds {
		total += n
		s.moves = append(s.moves, s.every > 0 && s.every < time.Hour && rapid.Bool().Draw(r, "the clock moves FlushEvery"))
	}
	if rapid.Bool().Draw(r, "the last item fails") {
		s.fail = total
	} else {
		s.fail = rapid.IntRange(1, total).Draw(r, "failing item")
	}
	s.how = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
	s.produceErr = rapid.IntRange(0, len(testProduceErrors)-1).Draw(r, "produce error")
	return s
}

func (s testFlushFailure) play(h *katatest.H) {
	perr := testProduceErrors[s.produceErr].make()
	var (
		mu       sync.Mutex
		ended    bool  // the test let produce return
		handed   int   // items handed to consume
		accepted int   // puts that returned nil
		failed   error // what consume returned for the failing batch
		batch    []int // the failing batch
		final    bool  // it was handed after produce returned
	)
	consume := func(ctx context.Context, b []int) error {
		mu.Lock()
		defer mu.Unlock()
		handed += len(b)
		if !slices.Contains(b, s.fail) {
			return nil
		}
		batch, final = slices.Clone(b), ended
		failed = testFailures[s.how].make(s.fail)
		return failed
	}
	groups := make(chan []int)
	end := sync.OnceFunc(func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		close(groups)
	})
	h.Own(end)
	produce := func(ctx context.Context, put func(int) error) error {
		for {
			select {
			case g, ok := <-groups:
				if !ok {
					return perr
				}
				for _, v := range g {
					if err := put(v); err != nil {
						return err
					}
					mu.Lock()
					accepted++
					mu.Unlock()
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	b := Batch{Size: s.size, FlushEvery: s.every}
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
		case <-call.Done(): // the failing batch stopped it: nothing more to put
		}
		synctest.Wait()
		if s.moves[i] {
			h.Advance(s.every)
		}
		next += n
	}
	end()
	if !call.Returns("produce returned and no consume call was held, yet RunBatches was still waiting: it must " +
		"return once produce and every consumer have returned") {
		return
	}
	stats, err, ok := call.Finish("RunBatches")
	if !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if failed == nil {
		h.Errorf("produce put items 1…%d and returned %s, and nothing stopped RunBatches, yet item %d was never "+
			"handed to consume: every accepted item is consumed, what is left in a batch by the final flush (an error "+
			"of produce stops nothing)", next-1, testDescribe(perr), s.fail)
		return
	}
	which := "a batch flushed before produce returned (by Size or by its timer)"
	if final {
		which = "the final flush, once produce had returned and the queue was empty"
	}
	if !errors.Is(err, failed) && perr != nil && (err == perr || errors.Is(err, perr)) {
		h.Errorf("consume failed on the batch %v, handed to it by %s, with %s, yet RunBatches returned what produce "+
			"returned, %s: an error of produce stops nothing, and a consumer error, even a later one, is the one Run "+
			"returns; keep produce's error aside and return it only if no consumer failed and nothing was cancelled",
			batch, which, testDescribe(failed), testDescribe(err))
		return
	}
	if !errors.Is(err, failed) {
		h.Errorf("consume failed on the batch %v, handed to it by %s, with %s, yet RunBatches returned %s: a consumer "+
			"error of any flush, the final flush included, is the first consumer error, and RunBatches returns it "+
			"as Run does (not nil, not what produce returned): record it (and stop everything) wherever consume is "+
			"called", batch, which, testDescribe(failed), testDescribe(err))
		return
	}
	if stats.Produced != accepted || stats.Consumed != handed || stats.Produced != stats.Consumed+stats.Dropped {
		h.Errorf("RunBatches returned %+v after consume failed on the batch %v (%s), with %d puts that returned nil "+
			"and %d items handed to consume: Produced counts the puts, Consumed the items handed to consume (the "+
			"failed batch included), and Produced == Consumed + Dropped", stats, batch, which, accepted, handed)
	}
}

func TestB1_ExploreAFailedFlushOfAnyKindIsTheError(t *testing.T) {
	katatest.Explore(t, 12, testDrawFlushFailure, func(h *katatest.H, s testFlushFailure) { s.play(h) })
	// Every run fails a full batch, a timer flush, and the final flush (with
	// one consumer, with several, and with a produce error), which a draw
	// could miss.
	ms := 50 * time.Millisecond
	katatest.Replay(t, []testFlushFailure{
		{capacity: 3, consumers: 1, size: 2, rounds: []int{3}, moves: []bool{false}, fail: 2, how: 1},
		{capacity: 2, consumers: 1, size: 3, every: ms, rounds: []int{2}, moves: []bool{true}, fail: 1, how: 0},
		{capacity: 2, consumers: 1, size: 3, rounds: []int{4}, moves: []bool{false}, fail: 4, how: 0},
		{capacity: 3, consumers: 3, size: 4, rounds: []int{3}, moves: []bool{false}, fail: 2, how: 1, produceErr: 1},
		{capacity: 1, consumers: 2, size: 2, every: ms, rounds: []int{3, 1}, moves: []bool{true, false}, fail: 4, how: 2},
	}, func(h *katatest.H, s testFlushFailure) { s.play(h) })
}
