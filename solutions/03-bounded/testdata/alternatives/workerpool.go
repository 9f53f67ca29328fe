// Design: ForEach runs min(limit, len(items)) workers fed by an unbuffered jobs channel, with the first
// error under a mutex; ForEachWeighted keeps the load under a mutex and wakes the loop through a
// one-slot channel; the Bulkhead is an atomic counter taken with compare-and-swap.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var ErrInvalidLimit = errors.New("bounded: limit must be at least 1")

var ErrBusy = errors.New("bounded: every slot is busy")

// firstError keeps the first error and cancels the calls' ctx with it.
type firstError struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
}

func (f *firstError) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
		f.cancel()
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

func ForEach[T any](parent context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("ForEach: limit %d: %w", limit, ErrInvalidLimit)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	first := &firstError{cancel: cancel}
	var started atomic.Int64
	jobs := make(chan T)
	var wg sync.WaitGroup
	for range min(limit, len(items)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for item := range jobs {
				if ctx.Err() != nil {
					continue // the feeder's select may have picked the send after a cancel
				}
				started.Add(1)
				if err := fn(ctx, item); err != nil {
					first.set(err)
				}
			}
		}()
	}
feed:
	for _, item := range items {
		if ctx.Err() != nil {
			break
		}
		select {
		case jobs <- item:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := first.get(); err != nil {
		return err
	}
	if started.Load() < int64(len(items)) {
		return parent.Err()
	}
	return nil
}

func ForEachWeighted[T any](parent context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("ForEachWeighted: capacity %d: %w", capacity, ErrInvalidLimit)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	first := &firstError{cancel: cancel}
	var (
		mu   sync.Mutex
		load int
		wg   sync.WaitGroup
	)
	wake := make(chan struct{}, 1)
	fits := func(w int) bool {
		mu.Lock()
		defer mu.Unlock()
		if w > capacity-load {
			return false
		}
		load += w
		return true
	}
	started := 0
loop:
	for _, item := range items {
		w := min(max(weight(item), 1), capacity)
		for !fits(w) {
			select {
			case <-wake:
			case <-ctx.Done():
				break loop
			}
		}
		if ctx.Err() != nil {
			mu.Lock()
			load -= w
			mu.Unlock()
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn(ctx, item)
			if err != nil {
				first.set(err)
			}
			mu.Lock()
			load -= w
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default: // a wake-up is pending already
			}
		}()
	}
	wg.Wait()
	if err := first.get(); err != nil {
		return err
	}
	if started < len(items) {
		return parent.Err()
	}
	return nil
}

type Bulkhead struct {
	limit int64
	used  atomic.Int64
}

func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("NewBulkhead: limit %d: %w", limit, ErrInvalidLimit)
	}
	return &Bulkhead{limit: int64(limit)}, nil
}

func (b *Bulkhead) tryTake() bool {
	for {
		n := b.used.Load()
		if n >= b.limit {
			return false
		}
		if b.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func TryForEach[T any](parent context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	first := &firstError{cancel: cancel}
	var wg sync.WaitGroup
	started := 0
	for i, item := range items {
		if ctx.Err() != nil {
			break
		}
		if !b.tryTake() {
			first.set(fmt.Errorf("item %d: %w", i, ErrBusy))
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.used.Add(-1)
			if err := fn(ctx, item); err != nil {
				first.set(err)
			}
		}()
	}
	wg.Wait()
	if err := first.get(); err != nil {
		return err
	}
	if started < len(items) {
		return parent.Err()
	}
	return nil
}
