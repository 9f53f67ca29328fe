// Design: ForEach runs min(limit, len(items)) workers that claim the next index with an atomic
// counter, and keeps the first error with compare-and-swap; ForEachWeighted's loop owns the load,
// and the calls hand their weight back on a channel; the Bulkhead is a counter under a mutex.
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

// stopper keeps the first error and cancels the calls' ctx when it comes.
type stopper struct {
	first  atomic.Pointer[error]
	cancel context.CancelFunc
}

// fail cancels on every error, not only the first: a worker whose call
// failed second must not see ctx still live (the first may not have
// cancelled yet) and claim another item.
func (s *stopper) fail(err error) {
	s.first.CompareAndSwap(nil, &err)
	s.cancel()
}

// result is ForEach's answer once every call it started has returned.
func (s *stopper) result(parent context.Context, started, items int) error {
	if p := s.first.Load(); p != nil {
		return *p
	}
	if started < items {
		return parent.Err()
	}
	return nil
}

func ForEach[T any](parent context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("ForEach: limit %d: %w", limit, ErrInvalidLimit)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s := &stopper{cancel: cancel}
	var next, started atomic.Int64
	var wg sync.WaitGroup
	workers := min(limit, len(items))
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(len(items)) {
					return
				}
				started.Add(1)
				if err := fn(ctx, items[i]); err != nil {
					s.fail(err)
				}
			}
		}()
	}
	wg.Wait()
	return s.result(parent, int(started.Load()), len(items))
}

func ForEachWeighted[T any](parent context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("ForEachWeighted: capacity %d: %w", capacity, ErrInvalidLimit)
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s := &stopper{cancel: cancel}
	returned := make(chan int, len(items)) // the weight of each call that returned
	used, started := 0, 0
	var wg sync.WaitGroup
	for _, item := range items {
		w := min(max(weight(item), 1), capacity)
		for w > capacity-used && ctx.Err() == nil {
			select {
			case r := <-returned:
				used -= r
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		used += w
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, item); err != nil {
				s.fail(err) // before the weight comes back: the loop sees the cancel first
			}
			returned <- w
		}()
	}
	wg.Wait()
	return s.result(parent, started, len(items))
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

func TryForEach[T any](parent context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s := &stopper{cancel: cancel}
	var wg sync.WaitGroup
	started := 0
	for i, item := range items {
		if ctx.Err() != nil {
			break
		}
		if !b.take() {
			s.fail(fmt.Errorf("item %d: %w", i, ErrBusy))
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.give()
			if err := fn(ctx, item); err != nil {
				s.fail(err)
			}
		}()
	}
	wg.Wait()
	return s.result(parent, started, len(items))
}
