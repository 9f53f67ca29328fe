// Design: one loop owns all the state (room left, first error, calls running); each call reports its
// result on a channel, which the loop reads before every start, so no mutex and no WaitGroup; ForEach is
// ForEachWeighted with every weight 1.
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
		return fmt.Errorf("invalid limit %d: %w", limit, ErrInvalidLimit)
	}
	return coordinate(ctx, items, limit, func(T) int { return 1 }, nil, fn)
}

func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("invalid capacity %d: %w", capacity, ErrInvalidLimit)
	}
	return coordinate(ctx, items, capacity, weight, nil, fn)
}

type Bulkhead struct {
	mu          sync.Mutex
	used, limit int
}

func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("bulkhead of %d slots: %w", limit, ErrInvalidLimit)
	}
	return &Bulkhead{limit: limit}, nil
}

func (b *Bulkhead) tryTake() bool {
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
	// Room is not the limit here: the bulkhead decides, so give the loop
	// room for every item.
	return coordinate(ctx, items, max(len(items), 1), func(T) int { return 1 }, b, fn)
}

type report struct {
	weight int
	err    error
}

func coordinate[T any](parent context.Context, items []T, capacity int, weight func(T) int, b *Bulkhead,
	fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan report, min(capacity, len(items))) // at most that many calls run, so a report never blocks
	var first error
	free, running, next := capacity, 0, 0
	handle := func(r report) {
		running--
		free += r.weight
		if r.err != nil && first == nil {
			first = r.err
			cancel()
		}
	}
	for next < len(items) && first == nil && ctx.Err() == nil {
		select { // a report already in: take it before starting another call, in case it is a failure
		case r := <-done:
			handle(r)
			continue
		default:
		}
		w := min(max(weight(items[next]), 1), capacity)
		if w > free {
			select {
			case r := <-done:
				handle(r)
			case <-ctx.Done():
			}
			continue // look at the error, ctx and the room again
		}
		if b != nil && !b.tryTake() {
			first = fmt.Errorf("item %d shed: %w", next, ErrBusy)
			cancel()
			break
		}
		item := items[next]
		next++
		free -= w
		running++
		go func() {
			err := fn(ctx, item)
			if b != nil {
				b.give()
			}
			done <- report{w, err}
		}()
	}
	for running > 0 {
		handle(<-done)
	}
	switch {
	case first != nil:
		return first
	case next < len(items):
		return parent.Err()
	default:
		return nil
	}
}
