// Design: one engine for ForEach, ForEachWeighted and TryForEach: the load in use, the first error
// and the slots of a Bulkhead sit under one mutex, and the loop waits for room on a sync.Cond that
// every returning call broadcasts; context.AfterFunc broadcasts too, so a cancel wakes the loop.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

var ErrInvalidLimit = errors.New("bounded: limit must be at least 1")

var ErrBusy = errors.New("bounded: every slot is busy")

func ForEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("ForEach: limit %d: %w", limit, ErrInvalidLimit)
	}
	return run(ctx, items, limit, func(T) int { return 1 }, nil, fn)
}

func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("ForEachWeighted: capacity %d: %w", capacity, ErrInvalidLimit)
	}
	return run(ctx, items, capacity, weight, nil, fn)
}

type Bulkhead struct {
	mu          sync.Mutex
	limit, used int
}

func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("NewBulkhead: limit %d: %w", limit, ErrInvalidLimit)
	}
	return &Bulkhead{limit: limit}, nil
}

func (b *Bulkhead) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used == b.limit {
		return false
	}
	b.used++
	return true
}

func (b *Bulkhead) give() {
	b.mu.Lock()
	b.used--
	b.mu.Unlock()
}

func TryForEach[T any](ctx context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	return run(ctx, items, len(items), func(T) int { return 1 }, b, fn)
}

// engine is what run's loop and its calls share, all under mu.
type engine struct {
	mu    sync.Mutex
	room  *sync.Cond // broadcast when a call returns or ctx ends
	used  int
	first error
}

func run[T any](parent context.Context, items []T, capacity int, weight func(T) int, b *Bulkhead,
	fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	e := &engine{}
	e.room = sync.NewCond(&e.mu)
	stopWaking := context.AfterFunc(ctx, func() {
		e.mu.Lock()
		e.room.Broadcast()
		e.mu.Unlock()
	})
	defer stopWaking()

	var wg sync.WaitGroup
	started := 0
	for i, item := range items {
		w := min(max(weight(item), 1), capacity)
		e.mu.Lock()
		for w > capacity-e.used && ctx.Err() == nil {
			e.room.Wait()
		}
		if ctx.Err() != nil {
			e.mu.Unlock()
			break
		}
		if b != nil && !b.take() {
			e.first = fmt.Errorf("item %d: %w", i, ErrBusy)
			cancel()
			e.mu.Unlock()
			break
		}
		e.used += w
		e.mu.Unlock()

		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn(ctx, item)
			e.mu.Lock()
			defer e.mu.Unlock()
			if err != nil && e.first == nil {
				e.first = err
				cancel() // before the room comes back: the loop sees the cancel first
			}
			e.used -= w
			if b != nil {
				b.give()
			}
			e.room.Broadcast()
		}()
	}
	wg.Wait()
	if e.first != nil {
		return e.first
	}
	if started < len(items) {
		return parent.Err()
	}
	return nil
}
