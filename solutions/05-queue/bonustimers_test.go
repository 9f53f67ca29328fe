package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testBatchStop is a RunBatches that ends with consumers holding partial
// batches, each with its FlushEvery timer running: by a cancel, by a
// consumer error, or by the drain. However it ends, no timer may be left on
// the clock once RunBatches returned.
type testBatchStop struct {
	capacity  int
	consumers int
	size      int
	every     time.Duration
	before    []int         // rounds put at once, each followed by FlushEvery on the clock: every batch flushed
	held      bool          // one more item, alone, whose batch's consume is in flight at the end
	last      int           // items of the last round: not a multiple of Size, so a partial batch is left
	lag       time.Duration // the clock after the last round, less than FlushEvery
	end       string        // "cancel", "error" or "drain"
	lingers   bool          // after a stop, produce goes on for FlushEvery on the clock before it returns
}

const (
	testEndCancel = "cancel"
	testEndError  = "error"
	testEndDrain  = "drain"
)

func (s testBatchStop) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RunBatches(capacity %d, %d consumer(s), Batch{Size: %d, FlushEvery: %v})", s.capacity,
		s.consumers, s.size, s.every)
	next := 1
	for _, n := range s.before {
		fmt.Fprintf(&b, "; produce puts %s at once, then the clock moves %v (every batch is flushed)",
			testItems(next, n), s.every)
		next += n
	}
	if s.held {
		fmt.Fprintf(&b, "; produce puts item %d alone, the clock moves %v and its batch's consume is held", next, s.every)
		next++
	}
	fmt.Fprintf(&b, "; produce puts %s at once, then the clock moves %v (their batches wait for their timers)",
		testItems(next, s.last), s.lag)
	switch s.end {
	case testEndCancel:
		b.WriteString("; then the caller cancels")
	case testEndError:
		b.WriteString("; then the held consume fails with an error")
	default:
		b.WriteString("; then produce returns (the final flush)")
	}
	if s.lingers {
		fmt.Fprintf(&b, "; produce goes on, not watching ctx, while the clock moves %v, then returns", s.every)
	}
	return b.String()
}

// testItems names the n items from first on.
func testItems(first, n int) string {
	if n == 1 {
		return fmt.Sprintf("item %d", first)
	}
	return fmt.Sprintf("items %d…%d", first, first+n-1)
}

func testDrawBatchStop(r *rapid.T) testBatchStop {
	var s testBatchStop
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.size = rapid.IntRange(2, 4).Draw(r, "Size")
	s.every = rapid.SampledFrom([]time.Duration{time.Millisecond, 50 * time.Millisecond, time.Hour}).Draw(r, "FlushEvery")
	s.before = rapid.SliceOfN(rapid.IntRange(1, 2*s.size), 0, 2).Draw(r, "rounds before")
	s.end = rapid.SampledFrom([]string{testEndCancel, testEndCancel, testEndError, testEndError, testEndDrain}).Draw(r, "end")
	s.held = s.end == testEndError || (s.end == testEndCancel && rapid.Bool().Draw(r, "a consume in flight"))
	s.last = s.size*rapid.IntRange(0, 1).Draw(r, "full batches in the last round") +
		rapid.IntRange(1, s.size-1).Draw(r, "items left over")
	s.lag = s.every * time.Duration(rapid.IntRange(0, 3).Draw(r, "quarters of FlushEvery")) / 4
	s.lingers = s.end != testEndDrain && rapid.Bool().Draw(r, "produce lingers after the stop")
	return s
}

// testFlushFailed is the error of the held consume when it fails.
type testFlushFailed struct{ batch []int }

func (e *testFlushFailed) Error() string { return fmt.Sprintf("store: batch %v rejected", e.batch) }

func (s testBatchStop) play(h *katatest.H) {
	gate := h.Gate()
	heldItem := 0 // the item whose batch's consume is held; 0: none
	if s.held {
		for _, n := range s.before {
			heldItem += n
		}
		heldItem++
	}
	var failed error          // what the held consume returned, once the test let it fail
	var accepted atomic.Int64 // puts that returned nil
	var calls atomic.Int64    // calls of consume
	linger := make(chan struct{})
	consume := func(ctx context.Context, b []int) error {
		calls.Add(1)
		if heldItem == 0 || !slices.Contains(b, heldItem) {
			return nil
		}
		if err := gate.Hold(ctx); err != nil {
			return err
		}
		failed = &testFlushFailed{batch: slices.Clone(b)}
		return failed
	}
	groups := make(chan []int)
	produce := func(ctx context.Context, put func(int) error) error {
		for {
			select {
			case g, ok := <-groups:
				if !ok {
					return nil
				}
				for _, v := range g {
					if err := put(v); err != nil {
						return err
					}
					accepted.Add(1)
				}
			case <-ctx.Done():
				if s.lingers {
					<-linger // produce may: Run waits for it
				}
				return ctx.Err()
			}
		}
	}
	b := Batch{Size: s.size, FlushEvery: s.every}
	var running int // timers still running the instant RunBatches returned
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		stats, err := RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
		running = h.Clk.StopRunning() // right away: nothing else has run since
		return stats, err
	})
	if call.Broken() {
		return
	}
	next := 1
	send := func(n int) bool {
		g := testSeq(next, next+n-1)
		next += n
		select {
		case groups <- g:
			synctest.Wait()
			return true
		case <-call.Done():
			h.Errorf("RunBatches returned before produce had put its items (it was putting %v)", g)
			return false
		}
	}
	for _, n := range s.before {
		if !send(n) {
			return
		}
		h.Advance(s.every)
	}
	if s.held {
		if !send(1) {
			return
		}
		h.Advance(s.every)
	}
	if !send(s.last) {
		return
	}
	h.Advance(s.lag)
	var after string
	switch s.end {
	case testEndCancel:
		after = "the caller cancelled while consumers held partial batches"
		call.Cancel()
	case testEndError:
		after = "a consume failed while other consumers held partial batches"
		gate.Release()
	default:
		after = "produce returned and the partial batches were flushed"
		close(groups)
	}
	if s.lingers {
		synctest.Wait() // the stop has reached every consumer
		before := calls.Load()
		h.Advance(s.every)
		if n := calls.Load() - before; n > 0 {
			h.Errorf("%s, produce went on for %v on the clock before it returned (it may: RunBatches waits for it), "+
				"and meanwhile %d consume call(s) started: the partial batches' timers fired after the stop and "+
				"their batches were handed to consume. After a stop no consume starts and a partial batch is "+
				"dropped: a consumer waits on ctx.Done() as well as on the items and its timer",
				after, s.every, n)
			close(linger)
			call.Stop()
			return
		}
		close(linger)
	}
	if !call.Returns("%s, RunBatches was still waiting: it must return once produce and every consumer "+
		"have returned, without waiting on the clock", after) {
		return
	}
	stats, err, ok := call.Finish("RunBatches")
	if !ok {
		return
	}
	var want string
	switch {
	case s.end == testEndCancel && !errors.Is(err, context.Canceled):
		want = "ctx.Err(), context.Canceled (a consume that then returns its ctx's error comes after the cancel)"
	case s.end == testEndError && (failed == nil || !errors.Is(err, failed)):
		want = fmt.Sprintf("that very consumer error, %s (the first consumer error, not ctx.Err() of the cancel it caused)",
			testDescribe(failed))
	case s.end == testEndDrain && err != nil:
		want = "nil: produce returned nil and every batch was consumed"
	}
	if want != "" {
		h.Errorf("RunBatches returned %s after %s; want %s: RunBatches stops and reports errors as Run does, "+
			"whichever way the consumers hold their batches", testDescribe(err), after, want)
		return
	}
	if n := int(accepted.Load()); stats.Produced != n || stats.Produced != stats.Consumed+stats.Dropped {
		h.Errorf("RunBatches returned %+v after %s, with %d puts that returned nil: Produced counts them, and "+
			"Produced == Consumed + Dropped (a partial batch dropped at a stop counts its items as Dropped)",
			stats, after, n)
		return
	}
	if running != 0 {
		h.Errorf("RunBatches returned after %s, but %d FlushEvery timer(s) of a consumer were still running on clk when it "+
			"returned (each would fire later, into nothing; one more pending timer per call in a long-lived "+
			"service): every batch timer must be stopped when done, on every way out of a consumer, also when a "+
			"stop drops the partial batch, not only when the batch is flushed (defer the stop), and before "+
			"RunBatches returns, not by a goroutine that outlives it", after, running)
		return
	}
	if moved := h.PendingTimer(); moved != 0 { // a ticker, or a clk.WithTimeout never cancelled
		h.Errorf("RunBatches returned after %s, but a FlushEvery timer of a consumer was still pending on clk (it "+
			"would fire %v later, into nothing; one more pending timer per call in a long-lived service): every "+
			"batch timer must be stopped when done, on every way out of a consumer, also when a stop drops the "+
			"partial batch, not only when the batch is flushed (defer the stop)", after, moved)
	}
}

func TestB1_ExploreNoBatchTimerOutlivesRunBatches(t *testing.T) {
	katatest.Explore(t, 10, testDrawBatchStop, func(h *katatest.H, s testBatchStop) { s.play(h) })
	// Every run tries a cancel and a consumer error with a partial batch
	// waiting for its timer, which a draw could miss.
	katatest.Replay(t, []testBatchStop{
		{capacity: 2, consumers: 1, size: 3, every: 100 * time.Millisecond, last: 1, end: testEndCancel},
		{capacity: 1, consumers: 2, size: 3, every: 100 * time.Millisecond, before: []int{4}, held: true, last: 2,
			lag: 50 * time.Millisecond, end: testEndError},
		{capacity: 2, consumers: 2, size: 3, every: 100 * time.Millisecond, last: 2, lag: 50 * time.Millisecond,
			end: testEndCancel, lingers: true},
		{capacity: 1, consumers: 2, size: 3, every: 100 * time.Millisecond, before: []int{4}, held: true, last: 2,
			lag: 50 * time.Millisecond, end: testEndError, lingers: true},
	}, func(h *katatest.H, s testBatchStop) { s.play(h) })
	// A timer stopped by a goroutine that outlives the call (one started by
	// the cancel) wins the race with the return on some schedules only.
	cancelled := testBatchStop{capacity: 2, consumers: 2, size: 3, every: 100 * time.Millisecond, before: []int{1},
		last: 1, end: testEndCancel}
	katatest.Repeat(t, 16, func(h *katatest.H) { cancelled.play(h) })
}
