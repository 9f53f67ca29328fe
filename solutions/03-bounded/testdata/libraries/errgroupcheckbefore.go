// Library: golang.org/x/sync v0.22.0
// Fails: R3
// Why: the loop checks ctx.Err() before each g.Go, but Go blocks while the limit is reached and does not watch ctx meanwhile, so the cancel comes while the loop waits inside Go and the item it holds starts anyway once a slot frees (R3).

package bounded

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// ErrInvalidLimit is matched by the error for a limit below 1.
var ErrInvalidLimit = errors.New("bounded: limit must be at least 1")

// ErrBusy is matched by the error TryForEach returns when it shed an item.
var ErrBusy = errors.New("bounded: every slot is busy")

// ForEach is errgroup.WithContext and SetLimit. SetLimit(0) would block
// every Go forever and a negative limit means none, so a limit below 1 is
// refused first.
func ForEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	var skipped atomic.Bool
	for _, item := range items {
		// The check the errgroup docs suggest: look at ctx before each Go.
		if gctx.Err() != nil {
			skipped.Store(true)
			break
		}
		g.Go(func() error { return fn(gctx, item) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if skipped.Load() {
		return ctx.Err()
	}
	return nil
}

// ForEachWeighted takes weight(item) units of a semaphore.Weighted before
// each call. Acquire is FIFO and gives up when its ctx ends.
func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("%w (got capacity %d)", ErrInvalidLimit, capacity)
	}
	sem := semaphore.NewWeighted(int64(capacity))
	return run(ctx, items, fn, func(ctx context.Context, item T) (func(), error) {
		w := int64(min(max(weight(item), 1), capacity))
		if err := sem.Acquire(ctx, w); err != nil {
			return nil, err
		}
		return func() { sem.Release(w) }, nil
	})
}

// Bulkhead is a semaphore.Weighted shared by every TryForEach that uses it.
type Bulkhead struct {
	sem   *semaphore.Weighted
	limit int
}

// NewBulkhead returns a Bulkhead with limit slots.
func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	return &Bulkhead{sem: semaphore.NewWeighted(int64(limit)), limit: limit}, nil
}

// TryForEach sheds an item that finds no free slot (TryAcquire).
func TryForEach[T any](ctx context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	return run(ctx, items, fn, func(context.Context, T) (func(), error) {
		if !b.sem.TryAcquire(1) {
			return nil, fmt.Errorf("%w: all %d slots in use", ErrBusy, b.limit)
		}
		return func() { b.sem.Release(1) }, nil
	})
}

// run starts each item on an errgroup.Group once take lets it. It keeps
// the first error and cancels the calls itself, before the failed call's
// slot is released: errgroup.WithContext cancels only after the goroutine
// has returned, when its deferred release has already let the next
// waiting item take the slot and start. A take error other than the ctx
// ending counts as the first error.
func run[T any](ctx context.Context, items []T, fn func(context.Context, T) error,
	take func(context.Context, T) (func(), error)) error {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		g     errgroup.Group
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			cancel()
		})
	}
	skipped := false
	for _, item := range items {
		release, err := take(rctx, item)
		if err == nil && rctx.Err() != nil {
			release()
			err = rctx.Err()
		}
		if err != nil {
			if rctx.Err() == nil {
				fail(err) // the first error
			}
			skipped = true
			break
		}
		g.Go(func() error {
			defer release()
			if err := fn(rctx, item); err != nil {
				fail(err)
			}
			return nil
		})
	}
	g.Wait()
	if first != nil {
		return first
	}
	if skipped {
		return ctx.Err()
	}
	return nil
}
