// Design: no channel for the items: a slice guarded by a mutex with a
// sync.Cond, woken by context.AfterFunc on a stop and by clk.AfterFunc when
// a batch is due; a put may add an item while len < capacity + idle consumers.

package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Stats counts the items of one call of Run.
type Stats struct {
	Produced int
	Consumed int
	Dropped  int
}

// ErrClosed is returned by a put that starts after produce has returned.
var ErrClosed = errors.New("queue: put on a closed queue")

// ErrDrainTimeout is matched by the error of RunDrainTimeout when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: the drain took too long")

// Batch says when RunBatches hands a batch to consume.
type Batch struct {
	Size       int
	FlushEvery time.Duration
}

type condQueue[T any] struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	cond     *sync.Cond
	items    []T
	capacity int
	idle     int  // consumers waiting for an item
	putting  int  // puts in flight
	closed   bool // produce has returned
	stopped  bool // cancelled, a consumer failed, or the drain deadline passed
	err      error
	produced int
	consumed int
}

// stopLocked stops everything with err unless an error came first.
func (q *condQueue[T]) stopLocked(err error) {
	if q.err == nil {
		q.err = err
	}
	q.stopped = true
	q.cond.Broadcast()
}

// haltedLocked reports whether the consumers and puts must stop. It looks
// at ctx as well: the AfterFunc that marks the stop runs on a goroutine of
// its own and may come later than a consumer released by the cancel.
func (q *condQueue[T]) haltedLocked() bool {
	if !q.stopped {
		if err := q.ctx.Err(); err != nil {
			q.stopLocked(err)
		}
	}
	return q.stopped
}

// stop records err (unless an error came first), then cancels ctx, and
// only then marks the stop: a put woken by the mark returns ctx.Err(),
// which must not be nil by then.
func (q *condQueue[T]) stop(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
		// Nothing recorded yet, but ctx is done: the caller cancelled, and
		// the AfterFunc that records it has not run yet. The cancel came
		// first.
		if cerr := q.ctx.Err(); cerr != nil {
			q.err = cerr
		}
	}
	q.mu.Unlock()
	q.cancel()
	q.mu.Lock()
	q.stopLocked(err)
	q.mu.Unlock()
}

func (q *condQueue[T]) put(v T) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.putting++
	defer func() {
		q.putting--
		q.cond.Broadcast()
	}()
	for !q.haltedLocked() && len(q.items) >= q.capacity+q.idle {
		q.cond.Wait()
	}
	if q.haltedLocked() {
		return q.ctx.Err()
	}
	q.items = append(q.items, v)
	q.produced++
	return nil
}

// next waits for an item. It returns ok=false when the consumer must end:
// stopped, or closed with nothing left to come. due, if not nil, reports
// that the consumer's batch timer fired (then ok is false and fired true).
func (q *condQueue[T]) next(due *bool) (v T, ok, fired bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		switch {
		case q.haltedLocked():
			return v, false, false
		case len(q.items) > 0:
			v = q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			q.cond.Broadcast() // room for a put
			return v, true, false
		case due != nil && *due:
			*due = false
			return v, false, true
		case q.closed && q.putting == 0:
			return v, false, false
		}
		q.idle++
		if q.putting > 0 {
			// A put waiting for room may hand this consumer an item. Only
			// then: idle consumers that woke each other would spin.
			q.cond.Broadcast()
		}
		q.cond.Wait()
		q.idle--
	}
}

func (q *condQueue[T]) handed(n int) {
	q.mu.Lock()
	q.consumed += n
	q.mu.Unlock()
}

func runCond[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	produce func(context.Context, func(T) error) error, consumer func(*condQueue[T])) (Stats, error) {
	if capacity < 0 {
		return Stats{}, fmt.Errorf("queue: negative capacity %d", capacity)
	}
	if consumers < 1 {
		return Stats{}, fmt.Errorf("queue: %d consumers; need at least one", consumers)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := &condQueue[T]{ctx: ctx, cancel: cancel, capacity: capacity}
	q.cond = sync.NewCond(&q.mu)
	unhook := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.stopLocked(ctx.Err())
		q.mu.Unlock()
	})
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			consumer(q)
		}()
	}
	perr := produce(ctx, q.put)
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	if drainTimeout > 0 {
		finished := make(chan struct{})
		go func() {
			wg.Wait()
			close(finished)
		}()
		t := clk.Timer(drainTimeout)
		select {
		case <-finished:
		case <-t.C:
			q.stop(ErrDrainTimeout)
			<-finished
		}
		t.Stop()
	} else {
		wg.Wait()
	}
	unhook()
	q.mu.Lock()
	defer q.mu.Unlock()
	st := Stats{Produced: q.produced, Consumed: q.consumed, Dropped: q.produced - q.consumed}
	if q.err != nil {
		return st, q.err
	}
	return st, perr
}

func single[T any](consume func(context.Context, T) error) func(*condQueue[T]) {
	return func(q *condQueue[T]) {
		for {
			v, ok, _ := q.next(nil)
			if !ok {
				return
			}
			q.handed(1)
			if err := consume(q.ctx, v); err != nil {
				q.stop(err)
				return
			}
		}
	}
}

// Run connects produce to consumers goroutines through a queue of capacity items.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return runCond(ctx, nil, 0, capacity, consumers, produce, single(consume))
}

// RunBatches is Run with consumers that hand consume batches of items.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	size := max(b.Size, 1)
	return runCond(ctx, nil, 0, capacity, consumers, produce, func(q *condQueue[T]) {
		var batch []T
		var due bool // guarded by q.mu
		var timer *clock.Timer
		gen := 0 // which batch the running timer belongs to
		stopTimer := func() {
			if timer != nil {
				timer.Stop()
				timer = nil
			}
			q.mu.Lock()
			gen++
			due = false
			q.mu.Unlock()
		}
		defer stopTimer()
		flush := func() bool {
			stopTimer()
			if len(batch) == 0 {
				return true
			}
			out := batch
			batch = nil
			q.handed(len(out))
			if err := consume(q.ctx, out); err != nil {
				q.stop(err)
				return false
			}
			return true
		}
		for {
			v, ok, fired := q.next(&due)
			switch {
			case fired:
				if !flush() {
					return
				}
			case !ok:
				q.mu.Lock()
				stopped := q.haltedLocked()
				q.mu.Unlock()
				if !stopped {
					flush() // closed and empty: the final flush
				}
				return
			default:
				batch = append(batch, v)
				if len(batch) == 1 && b.FlushEvery > 0 {
					q.mu.Lock()
					mine := gen
					q.mu.Unlock()
					timer = clk.AfterFunc(b.FlushEvery, func() {
						q.mu.Lock()
						if gen == mine {
							due = true
							q.cond.Broadcast()
						}
						q.mu.Unlock()
					})
				}
				if len(batch) >= size && !flush() {
					return
				}
			}
		}
	})
}

// RunDrainTimeout is Run with a deadline on the drain, drainTimeout after
// produce returned.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return runCond(ctx, clk, drainTimeout, capacity, consumers, produce, single(consume))
}
