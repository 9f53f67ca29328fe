// Package queue runs one producer and a fixed number of consumers around a
// bounded queue, the shape of most ingestion pipelines: read records, hand
// them to workers that write them somewhere slow.
//
// Backpressure: the queue holds at most capacity items, and each consumer
// holds the one item it is consuming, so with every consumer busy exactly
// capacity+consumers puts return; the next put blocks until a consumer takes
// an item. Capacity 0 is an unbuffered hand-off.
//
// Shutdown: when produce returns, put accepts nothing more, the consumers
// drain what is queued, and Run returns after the last consume returned. A
// cancel of ctx or the first consumer error stops everything instead: a
// blocked put returns, no new consume starts, in-flight consumes see their
// ctx cancelled, and what is still queued is dropped and counted. When Run
// returns, none of its goroutines is still running.
//
// The bonus variants take an injected clock.Clock and wait only on it: a
// fresh clk.Timer for each wait, stopped when done (never Reset a mock
// timer: Reset on a fired, undrained one blocks the clock's next Add), in a
// select with ctx.Done().
package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Stats counts the items of one call of Run. When Run returns,
// Produced == Consumed + Dropped.
type Stats struct {
	Produced int // puts that returned nil: items accepted into the queue
	Consumed int // accepted items handed to consume, failed calls included
	Dropped  int // accepted items never handed to consume (cancel, consumer error, drain deadline)
}

// ErrClosed is returned by a put that starts after produce has returned.
var ErrClosed = errors.New("queue: put after produce returned")

// ErrDrainTimeout is matched by the error of [RunDrainTimeout] when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain deadline passed")

// Run calls produce once, with a put that blocks while the queue is full,
// and starts consumers goroutines that take items from the queue in FIFO
// order and call consume with one item at a time. consume is called from
// several goroutines at once, so it must be safe for concurrent use; the
// calls may finish in any order. Each accepted item is handed to consume at
// most once, and exactly once unless Run is stopped.
//
// put returns nil once the item is in the queue (with capacity 0: in a
// consumer's hands). It returns ctx.Err() of the context produce got if
// that context is done: Run cancels it when the caller cancels ctx and on
// the first consumer error. A put that starts after produce returned
// returns ErrClosed at once. put is safe for concurrent use; call it from
// produce or from goroutines that produce waits for.
//
// When produce returns, put accepts nothing more, the consumers drain the
// queue, and Run returns after the last consume returned. A cancel or the
// first consumer error stops everything instead: no new consume starts, the
// calls in flight see their ctx cancelled, and the queued items are dropped
// (counted in [Stats]). Either way Run returns only after produce and every
// goroutine it started have returned.
//
// The error is the first consumer error or, after a cancel, ctx.Err(),
// whichever came first; otherwise the error produce returned (which stops
// nothing: the accepted items are still consumed); otherwise nil. A
// negative capacity or fewer than one consumer is an error, returned
// without calling produce. A ctx already done when Run is called is a
// cancel like any other: produce is still called, and every put fails.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, nil, 0, capacity, consumers, produce, each(consume))
}

// Batch says when [RunBatches] hands a batch to consume (bonus B1).
type Batch struct {
	// Size flushes a batch as soon as it holds Size items; below 1 means 1.
	Size int
	// FlushEvery flushes a partial batch this long after its first item was
	// taken, on the injected clock; 0 or below flushes only by Size and at the end.
	FlushEvery time.Duration
}

// RunBatches is Run with consumers that take items one by one and hand them
// to consume in batches (bonus B1). Each consumer keeps its own batch and
// flushes it when it holds b.Size items, b.FlushEvery after its first item
// (a fresh timer on clk per batch), and once more, if not empty, when the
// producer has finished and the queue is empty. After a cancel or a consumer
// error a partial batch is dropped, not flushed, and its timer stopped: no
// timer stays on clk once RunBatches returns. Stats count items, not
// batches; consume may keep the slice it gets.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	size := max(b.Size, 1)
	return run(ctx, nil, 0, capacity, consumers, produce, func(q *queue[T]) {
		var batch []T
		var timer *clock.Timer
		var due <-chan time.Time // nil, so never ready, while no timer runs
		stopTimer := func() {
			if timer != nil {
				timer.Stop()
				timer, due = nil, nil
			}
		}
		defer stopTimer()
		flush := func() bool {
			stopTimer()
			if len(batch) == 0 {
				return true
			}
			out := batch
			batch = nil // a new slice: consume may keep out
			q.handed(len(out))
			if err := consume(q.ctx, out); err != nil {
				q.fail(err)
				return false
			}
			return true
		}
		for q.running() {
			select {
			case v, ok := <-q.items:
				if !q.running() {
					return // stopped: the partial batch is dropped, even if the queue closed after the stop
				}
				if !ok {
					flush() // the final flush
					return
				}
				batch = append(batch, v)
				if len(batch) == 1 && b.FlushEvery > 0 {
					timer = clk.Timer(b.FlushEvery)
					due = timer.C
				}
				if len(batch) >= size && !flush() {
					return
				}
			case <-due:
				if !flush() {
					return
				}
			case <-q.ctx.Done():
			}
		}
	})
}

// RunDrainTimeout is Run with a deadline on the drain (bonus B2): if the
// consumers have not finished drainTimeout after produce returned (on clk),
// Run stops them as on a cancel: in-flight consumes see their ctx
// cancelled, no new consume starts, the queued items are dropped and
// counted, and the error matches ErrDrainTimeout. The deadline starts when
// produce returns, not when Run starts; drainTimeout <= 0 means no deadline.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, clk, drainTimeout, capacity, consumers, produce, each(consume))
}

// queue is what one call of Run shares between the producer, the consumers
// and Run itself.
type queue[T any] struct {
	parent context.Context // the caller's
	ctx    context.Context // cancelled by the caller or by fail
	cancel context.CancelFunc
	items  chan T
	puts   sync.WaitGroup // puts in flight: items is closed once they are done

	mu       sync.Mutex
	closed   bool  // produce has returned: put accepts nothing more
	err      error // the first consumer error, cancel or drain deadline
	produced int
	consumed int
}

func run[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	produce func(context.Context, func(T) error) error, consumer func(*queue[T])) (Stats, error) {
	if capacity < 0 || consumers < 1 {
		return Stats{}, fmt.Errorf("queue: capacity %d, consumers %d: want capacity >= 0 and at least one consumer", capacity, consumers)
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := &queue[T]{parent: parent, ctx: ctx, cancel: cancel, items: make(chan T, capacity)}
	var wg sync.WaitGroup
	for range consumers {
		wg.Go(func() { consumer(q) })
	}

	perr := produce(ctx, q.put)

	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		q.puts.Wait()  // a put that started before produce returned may still be sending
		close(q.items) // no send can follow now: the consumers drain and stop
		wg.Wait()
		close(drained)
	}()
	if drainTimeout <= 0 {
		<-drained
	} else {
		t := clk.Timer(drainTimeout)
		select {
		case <-drained:
		case <-t.C:
			q.fail(ErrDrainTimeout) // stop as on a cancel, and wait for the consumers
			<-drained
		}
		t.Stop()
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	st := Stats{Produced: q.produced, Consumed: q.consumed, Dropped: q.produced - q.consumed}
	if q.err != nil {
		return st, q.err
	}
	return st, perr
}

// each is the consumer of Run: one item, one call of consume.
func each[T any](consume func(context.Context, T) error) func(*queue[T]) {
	return func(q *queue[T]) {
		for q.running() {
			select {
			case v, ok := <-q.items:
				if !ok || !q.running() {
					return // drained, or cancelled as the item arrived: dropped
				}
				q.handed(1)
				if err := consume(q.ctx, v); err != nil {
					q.fail(err)
					return
				}
			case <-q.ctx.Done():
			}
		}
	}
}

// put is the function produce gets.
func (q *queue[T]) put(v T) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.puts.Add(1)
	q.mu.Unlock()
	defer q.puts.Done()
	// With room in the queue, the select below could pick the send even
	// though ctx is done: a stopped queue accepts nothing.
	if err := q.ctx.Err(); err != nil {
		return err
	}
	select {
	case q.items <- v:
		q.mu.Lock()
		q.produced++
		q.mu.Unlock()
		return nil
	case <-q.ctx.Done():
		return q.ctx.Err()
	}
}

// running reports whether the consumers may go on; once ctx is done it
// records the cancel as Run's error (unless an earlier error is recorded).
// A select picks at random among ready cases, so a consumer asks this
// before it takes an item as well as after: a cancelled consumer would
// otherwise go on draining a full queue.
func (q *queue[T]) running() bool {
	if err := q.ctx.Err(); err != nil {
		q.fail(err)
		return false
	}
	return true
}

// handed counts n items given to consume.
func (q *queue[T]) handed(n int) {
	q.mu.Lock()
	q.consumed += n
	q.mu.Unlock()
}

// fail records err if it is the first error and stops everything. A
// cancel by the caller that came earlier wins, even if no consumer has
// looked at ctx since: a call that ignored the cancel and failed later
// does not decide what Run returns.
func (q *queue[T]) fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
		if cerr := q.parent.Err(); cerr != nil {
			q.err = cerr
		}
	}
	q.mu.Unlock()
	q.cancel()
}
