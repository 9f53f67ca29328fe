// Design: an actor loop: one goroutine owns the queue, the blocked puts,
// the idle consumers and the outcome; put and the consumers only send it
// requests and wait for its answers, so nothing is shared under a lock.

package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
var ErrClosed = errors.New("queue: no more puts")

// ErrDrainTimeout is matched by the error of RunDrainTimeout when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain deadline")

// Batch says when RunBatches hands a batch to consume.
type Batch struct {
	Size       int
	FlushEvery time.Duration
}

type putReq[T any] struct {
	v     T
	reply chan error
}

// takeResp is what a consumer gets: an item, or why there is none.
type takeResp[T any] struct {
	v         T
	ok        bool
	drained   bool // closed and empty: the final flush
	withdrawn bool // the consumer gave up waiting (its batch is due)
}

type takeReq[T any] struct{ reply chan takeResp[T] }

// actor is one call of Run. Only its loop touches the fields below loop.
type actor[T any] struct {
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
	capacity int
	puts     chan putReq[T]
	takes    chan takeReq[T]
	withdraw chan chan takeResp[T]
	fails    chan error
	closing  chan struct{} // closed when produce has returned
	quit     chan struct{} // closed when Run no longer needs the loop
	gone     chan struct{} // closed when the loop has ended
	consumed atomic.Int64

	// loop's own state
	queue    []T
	blocked  []putReq[T]
	idle     []chan takeResp[T]
	closed   bool
	stopped  bool
	err      error
	produced int
}

func (a *actor[T]) put(v T) error {
	r := putReq[T]{v, make(chan error, 1)}
	select {
	case a.puts <- r:
		return <-r.reply
	case <-a.gone:
		return ErrClosed
	}
}

// take asks for the next item; due, if not nil, makes the consumer give up
// waiting when it fires.
func (a *actor[T]) take(due <-chan time.Time) takeResp[T] {
	reply := make(chan takeResp[T], 1)
	a.takes <- takeReq[T]{reply}
	select {
	case resp := <-reply:
		return resp
	case <-due:
		a.withdraw <- reply
		return <-reply // withdrawn, or the item the loop sent just before
	}
}

func (a *actor[T]) fail(err error) { a.fails <- err }

// stop ends everything with err unless an error came first; a cancel of
// the caller's ctx that came first wins over a later error.
func (a *actor[T]) stop(err error) {
	if a.stopped {
		return
	}
	if cerr := a.parent.Err(); cerr != nil {
		err = cerr
	}
	a.stopped, a.err = true, err
	a.cancel()
	for _, p := range a.blocked {
		p.reply <- a.ctx.Err()
	}
	a.blocked = nil
	for _, c := range a.idle {
		c <- takeResp[T]{}
	}
	a.idle = nil
}

// serve hands items to idle consumers and moves blocked puts into the room
// that frees, for as long as it can.
func (a *actor[T]) serve() {
	if !a.stopped && a.ctx.Err() != nil {
		a.stop(a.ctx.Err())
	}
	if a.stopped {
		for _, c := range a.idle {
			c <- takeResp[T]{}
		}
		a.idle = nil
		return
	}
	for len(a.idle) > 0 && len(a.queue)+len(a.blocked) > 0 {
		var v T
		if len(a.queue) > 0 {
			v, a.queue = a.queue[0], a.queue[1:]
		} else { // capacity 0, or every queued item taken: the oldest put goes straight to the consumer
			p := a.blocked[0]
			a.blocked = a.blocked[1:]
			v = p.v
			a.produced++
			p.reply <- nil
		}
		a.idle[0] <- takeResp[T]{v: v, ok: true}
		a.idle = a.idle[1:]
	}
	for len(a.blocked) > 0 && len(a.queue) < a.capacity {
		p := a.blocked[0]
		a.blocked = a.blocked[1:]
		a.queue = append(a.queue, p.v)
		a.produced++
		p.reply <- nil
	}
	if a.closed && len(a.queue) == 0 && len(a.blocked) == 0 {
		for _, c := range a.idle {
			c <- takeResp[T]{drained: true}
		}
		a.idle = nil
	}
}

func (a *actor[T]) loop() {
	defer close(a.gone)
	closing, done := a.closing, a.ctx.Done()
	for {
		if a.stopped {
			done = nil // stays closed: without this the loop would spin on it
		}
		select {
		case r := <-a.puts:
			switch {
			case a.closed:
				r.reply <- ErrClosed
			case a.stopped || a.ctx.Err() != nil:
				a.serve() // records the stop
				r.reply <- a.ctx.Err()
			default:
				a.blocked = append(a.blocked, r)
			}
		case r := <-a.takes:
			a.idle = append(a.idle, r.reply)
		case reply := <-a.withdraw:
			for i, c := range a.idle {
				if c == reply {
					a.idle = append(a.idle[:i], a.idle[i+1:]...)
					reply <- takeResp[T]{withdrawn: true}
					break
				}
			}
		case err := <-a.fails:
			a.stop(err)
		case <-done:
			a.stop(a.ctx.Err())
		case <-closing:
			a.closed, closing = true, nil
		case <-a.quit:
			return
		}
		a.serve()
	}
}

func run[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	produce func(context.Context, func(T) error) error, consumer func(*actor[T])) (Stats, error) {
	if capacity < 0 || consumers < 1 {
		return Stats{}, fmt.Errorf("queue: want capacity >= 0 and consumers >= 1, got %d and %d", capacity, consumers)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &actor[T]{parent: ctx, ctx: cctx, cancel: cancel, capacity: capacity,
		puts: make(chan putReq[T]), takes: make(chan takeReq[T]), withdraw: make(chan chan takeResp[T]),
		fails: make(chan error), closing: make(chan struct{}), quit: make(chan struct{}), gone: make(chan struct{})}
	go a.loop()
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			consumer(a)
		}()
	}
	perr := produce(cctx, a.put)
	close(a.closing)
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	if drainTimeout > 0 {
		t := clk.Timer(drainTimeout)
		select {
		case <-done:
		case <-t.C:
			a.fail(ErrDrainTimeout)
			<-done
		}
		t.Stop()
	} else {
		<-done
	}
	close(a.quit)
	<-a.gone // the loop's state is ours now
	consumed := int(a.consumed.Load())
	st := Stats{Produced: a.produced, Consumed: consumed, Dropped: a.produced - consumed}
	if a.err != nil {
		return st, a.err
	}
	return st, perr
}

// Run connects produce to consumers goroutines through a queue of capacity items.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, nil, 0, capacity, consumers, produce, func(a *actor[T]) {
		for {
			r := a.take(nil)
			if !r.ok {
				return
			}
			a.consumed.Add(1)
			if err := consume(a.ctx, r.v); err != nil {
				a.fail(err)
				return
			}
		}
	})
}

// RunBatches is Run with consumers that hand consume batches of items.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	size := max(b.Size, 1)
	return run(ctx, nil, 0, capacity, consumers, produce, func(a *actor[T]) {
		var batch []T
		var timer *clock.Timer
		var due <-chan time.Time
		defer func() {
			if timer != nil {
				timer.Stop()
			}
		}()
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
			a.consumed.Add(int64(len(out)))
			if err := consume(a.ctx, out); err != nil {
				a.fail(err)
				return false
			}
			return true
		}
		for {
			r := a.take(due)
			switch {
			case r.ok:
				batch = append(batch, r.v)
				if len(batch) == 1 && b.FlushEvery > 0 {
					timer = clk.Timer(b.FlushEvery)
					due = timer.C
				}
				if len(batch) >= size && !flush() {
					return
				}
			case r.withdrawn:
				if !flush() {
					return
				}
			case r.drained:
				flush()
				return
			default: // stopped: the partial batch is dropped
				return
			}
		}
	})
}

// RunDrainTimeout is Run with a deadline on the drain.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, clk, drainTimeout, capacity, consumers, produce, func(a *actor[T]) {
		for {
			r := a.take(nil)
			if !r.ok {
				return
			}
			a.consumed.Add(1)
			if err := consume(a.ctx, r.v); err != nil {
				a.fail(err)
				return
			}
		}
	})
}
