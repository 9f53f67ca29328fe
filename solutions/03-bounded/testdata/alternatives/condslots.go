// Design: slot accounting on a mutex and sync.Cond (a counter of units in use, woken by context.AfterFunc on cancel), with the first error recorded and the ctx cancelled under the same lock that gives a slot back; bonuses B1 and B2 included.

// Package bounded calls a function for every item of a slice, with at most
// limit calls running at once, and stops at the first failure.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrInvalidLimit is matched (errors.Is) by the error returned for a limit
// or capacity below 1: that is a configuration mistake, not "unlimited",
// and waiting for a slot that can never be free would hang forever.
var ErrInvalidLimit = errors.New("bounded: limit must be at least 1")

// ErrBusy is matched (errors.Is) by the error TryForEach returns when it shed
// an item because every slot of its Bulkhead was in use.
var ErrBusy = errors.New("bounded: every slot is busy")

// slots is a capacity shared by the calls of one run (ForEach) or of many
// runs (a Bulkhead). Every field is guarded by mu, and so is the state of
// the runs that use it (their first error), so that "record the error and
// cancel" and "give the units back" are one atomic step.
type slots struct {
	mu   sync.Mutex
	cond *sync.Cond
	cap  int
	used int
}

func newSlots(n int) *slots {
	s := &slots{cap: n}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// ForEach calls fn(ctx, item) for every item, with at most limit calls
// running at once. See the package documentation of the kata for the
// whole contract.
func ForEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	return run(ctx, newSlots(limit), items, func(T) int { return 1 }, false, fn)
}

// ForEachWeighted is ForEach with weighted items: item takes weight(item)
// units of capacity while its call runs (below 1 counts as 1, above
// capacity as capacity). Items start in input order.
func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("%w (got capacity %d)", ErrInvalidLimit, capacity)
	}
	w := func(item T) int { return min(max(weight(item), 1), capacity) }
	return run(ctx, newSlots(capacity), items, w, false, fn)
}

// Bulkhead is a set of slots shared by every TryForEach call that uses it.
// It is safe for concurrent use.
type Bulkhead struct {
	s *slots
}

// NewBulkhead returns a Bulkhead with limit slots. limit < 1 returns a nil
// Bulkhead and an error matching ErrInvalidLimit.
func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	return &Bulkhead{s: newSlots(limit)}, nil
}

// TryForEach is ForEach on the slots of b, except that it never waits for a
// slot: an item that finds every slot busy is shed, which counts as the
// first error (ErrBusy) unless a call had failed before.
func TryForEach[T any](ctx context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	return run(ctx, b.s, items, func(T) int { return 1 }, true, fn)
}

// run starts the items in input order, each on its own goroutine once it
// holds weight(item) units of s, and waits for every call it started.
func run[T any](parent context.Context, s *slots, items []T, weight func(T) int, try bool,
	fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	// A cancel (the caller's or the first error's) must wake the loop if
	// it waits on the cond: broadcast under the lock.
	woke := make(chan struct{})
	stopWake := context.AfterFunc(ctx, func() {
		defer close(woke)
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})

	var (
		wg    sync.WaitGroup
		first error // guarded by s.mu
	)
	started := 0
	for _, item := range items {
		w := weight(item)
		s.mu.Lock()
		for !try && ctx.Err() == nil && w > s.cap-s.used {
			s.cond.Wait()
		}
		if ctx.Err() != nil { // a cancel or a failure: start nothing more
			s.mu.Unlock()
			break
		}
		if w > s.cap-s.used { // TryForEach: every slot is busy, shed
			if first == nil {
				first = fmt.Errorf("%w: all %d slots in use", ErrBusy, s.cap)
				cancel()
			}
			s.mu.Unlock()
			break
		}
		s.used += w
		s.mu.Unlock()

		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			defer func() {
				// One critical section: the error and the cancel are
				// visible before the units are, so the loop never starts
				// an item on a slot freed by the call that failed.
				s.mu.Lock()
				if err != nil && first == nil {
					first = err
					cancel()
				}
				s.used -= w
				s.cond.Broadcast()
				s.mu.Unlock()
			}()
			err = fn(ctx, item)
		}()
	}
	wg.Wait()
	if !stopWake() {
		<-woke // the wake-up ran or is running: let it finish before returning
	}

	s.mu.Lock()
	err := first
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if started < len(items) {
		return parent.Err()
	}
	return nil
}
