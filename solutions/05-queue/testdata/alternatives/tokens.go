// Design: a mutex-guarded slice as the queue, a channel of capacity+consumers
// tokens for backpressure (a token is held from put until consume returns),
// and a buffered channel that only wakes the consumers.

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
var ErrClosed = errors.New("queue: closed")

// ErrDrainTimeout is matched by the error of RunDrainTimeout when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain timed out")

// Batch says when RunBatches hands a batch to consume.
type Batch struct {
	Size       int
	FlushEvery time.Duration
}

type pipe[T any] struct {
	ctx    context.Context
	stop   context.CancelFunc
	tokens chan struct{} // one per item queued or in a consumer's hands
	wake   chan struct{} // one per item put: a hint that the slice has one
	done   chan struct{} // closed once no put can add anything
	active sync.WaitGroup

	mu       sync.Mutex
	items    []T
	closed   bool
	err      error
	produced int
	consumed int
}

func (p *pipe[T]) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
		// Nothing recorded yet, but ctx is done: the caller cancelled, and
		// the AfterFunc that records it has not run yet. The cancel came
		// first.
		if cerr := p.ctx.Err(); cerr != nil {
			p.err = cerr
		}
	}
	p.mu.Unlock()
	p.stop()
}

func (p *pipe[T]) put(v T) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	p.active.Add(1)
	p.mu.Unlock()
	defer p.active.Done()
	if err := p.ctx.Err(); err != nil {
		return err
	}
	select {
	case p.tokens <- struct{}{}:
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
	p.mu.Lock()
	if err := p.ctx.Err(); err != nil { // stopped while we got the token
		p.mu.Unlock()
		<-p.tokens
		return err
	}
	p.items = append(p.items, v)
	p.produced++
	p.mu.Unlock()
	// A hint, never a wait: a consumer that takes an item straight from
	// the slice leaves the wake-up of its put behind, so the buffer can be
	// full, and then a consumer about to wait wakes at once anyway.
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil
}

// take returns the next item, or ok=false once the consumers must stop:
// the queue is drained and closed, or ctx is done.
func (p *pipe[T]) take(extra <-chan time.Time) (v T, ok, timedOut bool) {
	for {
		p.mu.Lock()
		if err := p.ctx.Err(); err != nil {
			if p.err == nil {
				p.err = err
			}
			p.mu.Unlock()
			return v, false, false
		}
		if len(p.items) > 0 {
			v = p.items[0]
			var zero T
			p.items[0] = zero
			p.items = p.items[1:]
			p.mu.Unlock()
			return v, true, false
		}
		p.mu.Unlock()
		select {
		case <-p.wake:
		case <-p.done:
			p.mu.Lock()
			empty := len(p.items) == 0
			p.mu.Unlock()
			if empty {
				return v, false, false
			}
		case <-p.ctx.Done():
		case <-extra:
			return v, false, true
		}
	}
}

func (p *pipe[T]) handed(n int) {
	p.mu.Lock()
	p.consumed += n
	p.mu.Unlock()
}

func start[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	produce func(context.Context, func(T) error) error, consumer func(*pipe[T])) (Stats, error) {
	if capacity < 0 || consumers < 1 {
		return Stats{}, fmt.Errorf("queue: bad arguments (capacity %d, consumers %d)", capacity, consumers)
	}
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pipe[T]{
		ctx: ctx, stop: cancel,
		tokens: make(chan struct{}, capacity+consumers),
		wake:   make(chan struct{}, capacity+consumers),
		done:   make(chan struct{}),
	}
	// The caller's cancel is recorded when it happens: a consume call that
	// ignores it and fails later must not decide what Run returns.
	unhook := context.AfterFunc(caller, func() { p.fail(caller.Err()) })
	defer unhook()
	var workers sync.WaitGroup
	for range consumers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			consumer(p)
		}()
	}
	perr := produce(ctx, p.put)
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	finished := make(chan struct{})
	go func() {
		p.active.Wait()
		close(p.done)
		workers.Wait()
		close(finished)
	}()
	if clk != nil && drainTimeout > 0 {
		t := clk.Timer(drainTimeout)
		select {
		case <-finished:
		case <-t.C:
			p.fail(ErrDrainTimeout)
			<-finished
		}
		t.Stop()
	} else {
		<-finished
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{Produced: p.produced, Consumed: p.consumed, Dropped: p.produced - p.consumed}
	if p.err != nil {
		return st, p.err
	}
	return st, perr
}

// Run connects produce to consumers goroutines through a queue of capacity items.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return start(ctx, nil, 0, capacity, consumers, produce, one(consume))
}

func one[T any](consume func(context.Context, T) error) func(*pipe[T]) {
	return func(p *pipe[T]) {
		for {
			v, ok, _ := p.take(nil)
			if !ok {
				return
			}
			p.handed(1)
			err := consume(p.ctx, v)
			if err != nil {
				p.fail(err) // before the token goes back: a put it frees must see the stop
				<-p.tokens
				return
			}
			<-p.tokens
		}
	}
}

// RunBatches is Run with consumers that hand consume batches of items.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	size := max(1, b.Size)
	return start(ctx, nil, 0, capacity, consumers, produce, func(p *pipe[T]) {
		var batch []T
		var timer *clock.Timer
		var due <-chan time.Time
		flush := func() bool {
			if timer != nil {
				timer.Stop()
				timer, due = nil, nil
			}
			if len(batch) == 0 {
				return true
			}
			out := batch
			batch = nil
			p.handed(len(out))
			if err := consume(p.ctx, out); err != nil {
				p.fail(err)
				return false
			}
			return true
		}
		defer func() {
			if timer != nil {
				timer.Stop()
			}
		}()
		for {
			v, ok, timedOut := p.take(due)
			switch {
			case timedOut:
				if !flush() {
					return
				}
			case !ok:
				if p.ctx.Err() == nil {
					flush() // closed and empty: the final flush
				}
				return
			default:
				<-p.tokens // the batch is this consumer's own: the item leaves the queue's count
				batch = append(batch, v)
				if len(batch) == 1 && b.FlushEvery > 0 {
					timer = clk.Timer(b.FlushEvery)
					due = timer.C
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
	return start(ctx, clk, drainTimeout, capacity, consumers, produce, one(consume))
}
