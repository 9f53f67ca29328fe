// Library: golang.org/x/sync v0.22.0
// Fails: R2 R3 B1 B2
// Why: errgroup.WithContext cancels the group on the first error of any goroutine, the producer's included, so a producer error cancels the consumers and the items already accepted are dropped instead of drained (R2). Wait returns the first error a goroutine returns, not the first thing that happened: when the caller cancels while the one consumer is busy and its consume then fails, that failure is the first error returned, and Run returns it instead of ctx.Err() (R3). RunDrainTimeout runs on the same group, so there too a producer error cancels the drain and is returned in place of a later cancel or consumer error (B2), and RunBatches too returns it in place of a consumer error of the final flush (B1). Backpressure, a consumer error, the late put and batches hold, with the glue doing the counting, ErrClosed and the drain timer.

// Package queue is the kata's API as the errgroup documentation's pipeline
// example builds it: one errgroup.WithContext holds the producer, which
// closes the channel when produce returns, and the consumers, which take
// items until it is closed or the group's ctx ends. The consumers and put
// ask ctx.Err() before each select, as the kata teaches. Any goroutine's error,
// the producer's included, cancels the group, and Wait returns the first
// one. The glue does what errgroup cannot be told: the arguments are
// checked, a late put gets ErrClosed instead of a send on a closed
// channel, the items are counted for Stats, and a timer on the clock ends
// the drain (bonus B2).
package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"golang.org/x/sync/errgroup"
)

// Stats counts the items of one call of Run.
type Stats struct {
	Produced int
	Consumed int
	Dropped  int
}

// ErrClosed is returned by a put that starts after produce has returned.
var ErrClosed = errors.New("queue: put after produce returned")

// ErrDrainTimeout is matched by the error of RunDrainTimeout when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain deadline passed")

// Run is the pipeline with one consume per item.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return pipeline(ctx, nil, 0, capacity, consumers, produce, func(ctx context.Context, items <-chan T, c *counts) error {
		for {
			if err := ctx.Err(); err != nil { // select picks at random when both are ready
				return err
			}
			select {
			case v, ok := <-items:
				if !ok || ctx.Err() != nil {
					return ctx.Err()
				}
				c.add(&c.consumed, 1)
				if err := consume(ctx, v); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
}

// Batch says when RunBatches hands a batch to consume.
type Batch struct {
	Size       int
	FlushEvery time.Duration
}

// RunBatches is the pipeline with consumers that batch.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	size := max(b.Size, 1)
	return pipeline(ctx, nil, 0, capacity, consumers, produce, func(ctx context.Context, items <-chan T, c *counts) error {
		var batch []T
		var timer *clock.Timer
		var due <-chan time.Time
		stop := func() {
			if timer != nil {
				timer.Stop()
				timer, due = nil, nil
			}
		}
		defer stop()
		flush := func() error {
			stop()
			if len(batch) == 0 {
				return nil
			}
			out := batch
			batch = nil
			c.add(&c.consumed, len(out))
			return consume(ctx, out)
		}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			select {
			case v, ok := <-items:
				if !ok {
					return flush()
				}
				if ctx.Err() != nil {
					return ctx.Err()
				}
				batch = append(batch, v)
				if len(batch) == 1 && b.FlushEvery > 0 {
					timer = clk.Timer(b.FlushEvery)
					due = timer.C
				}
				if len(batch) >= size {
					if err := flush(); err != nil {
						return err
					}
				}
			case <-due:
				if err := flush(); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
}

// RunDrainTimeout is Run with a deadline on the drain.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	if drainTimeout <= 0 {
		return Run(ctx, capacity, consumers, produce, consume)
	}
	return pipeline(ctx, clk, drainTimeout, capacity, consumers, produce, func(ctx context.Context, items <-chan T, c *counts) error {
		for {
			if err := ctx.Err(); err != nil { // select picks at random when both are ready
				return err
			}
			select {
			case v, ok := <-items:
				if !ok || ctx.Err() != nil {
					return ctx.Err()
				}
				c.add(&c.consumed, 1)
				if err := consume(ctx, v); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
}

// counts is the glue for Stats.
type counts struct {
	mu                 sync.Mutex
	produced, consumed int
}

func (c *counts) add(n *int, d int) {
	c.mu.Lock()
	*n += d
	c.mu.Unlock()
}

func pipeline[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	produce func(context.Context, func(T) error) error, consumer func(context.Context, <-chan T, *counts) error) (Stats, error) {
	if capacity < 0 || consumers < 1 {
		return Stats{}, fmt.Errorf("queue: capacity %d, consumers %d: want capacity >= 0 and at least one consumer", capacity, consumers)
	}
	g, gctx := errgroup.WithContext(ctx)
	items := make(chan T, capacity)
	var c counts

	// A put checks the closed mark and counts itself in flight under mu,
	// then sends without it, so the producer's goroutine closes the
	// channel only after the last put left, and a late put never waits.
	var mu sync.Mutex
	var inflight sync.WaitGroup
	closed := false
	put := func(v T) error {
		mu.Lock()
		if closed {
			mu.Unlock()
			return ErrClosed
		}
		inflight.Add(1)
		mu.Unlock()
		defer inflight.Done()
		if err := gctx.Err(); err != nil {
			return err
		}
		select {
		case items <- v:
			c.add(&c.produced, 1)
			return nil
		case <-gctx.Done():
			return gctx.Err()
		}
	}
	producerDone := make(chan struct{})
	g.Go(func() error {
		err := produce(gctx, put)
		mu.Lock()
		closed = true
		mu.Unlock()
		close(producerDone) // the drain deadline starts now
		inflight.Wait()     // a put that started before produce returned may still be sending
		close(items)
		return err
	})
	var running sync.WaitGroup
	running.Add(consumers)
	for range consumers {
		g.Go(func() error {
			defer running.Done()
			return consumer(gctx, items, &c)
		})
	}
	consumersDone := make(chan struct{})
	g.Go(func() error {
		running.Wait()
		close(consumersDone)
		return nil
	})
	if drainTimeout > 0 {
		g.Go(func() error { // the drain deadline: an error stops the group
			select {
			case <-producerDone:
			case <-gctx.Done():
				return nil
			}
			t := clk.Timer(drainTimeout)
			defer t.Stop()
			select {
			case <-t.C:
				return fmt.Errorf("%w after %v", ErrDrainTimeout, drainTimeout)
			case <-consumersDone:
				return nil
			case <-gctx.Done():
				return nil
			}
		})
	}
	err := g.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Produced: c.produced, Consumed: c.consumed, Dropped: c.produced - c.consumed}, err
}
