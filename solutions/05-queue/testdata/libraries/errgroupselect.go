// Library: golang.org/x/sync v0.22.0
// Fails: R2 R3 R4 B1 B2
// Why: as errgroup.go, a producer error cancels the group and drops the accepted items (R2), and is returned in place of a consumer error of the final flush of RunBatches (B1); besides, a select on the channel and ctx.Done() picks at random when both are ready, so after a cancel, a consumer error or the drain deadline the consumers still take queued items and puts with room still succeed (R3 R4 B2).

// Package queue is errgroup.go with the consumers and put as most code
// writes them: a select on the channel and ctx.Done(), with no ctx.Err()
// check first.
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
			select {
			case v, ok := <-items:
				if !ok {
					return nil
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
			select {
			case v, ok := <-items:
				if !ok {
					return flush()
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
			select {
			case v, ok := <-items:
				if !ok {
					return nil
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
