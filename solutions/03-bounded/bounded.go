// Package bounded calls a function for every item of a slice, with at most
// limit calls running at once, and stops at the first failure.
//
// ForEach runs the calls on goroutines it starts, one call per free slot,
// taking the items in input order. It owns those goroutines and waits for
// every one of them: when ForEach returns, none of its calls is still
// running, whatever happened (success, an error, a cancel).
//
// Every call gets a context derived from the caller's ctx. It is cancelled
// when the caller cancels ctx and when a call returns the first error, so
// the calls in flight can stop early; they are expected to honour it. After
// either event no new call starts: the items not yet started are skipped.
//
// A select on ctx.Done() and a free slot picks one at random when both are
// ready, so check ctx once more after you got the slot.
//
// No clock is involved: ForEach never waits for time, only for slots and for
// ctx.
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

// ForEach calls fn(ctx, item) for every item, with at most limit calls
// running at once. A call that returns frees its slot, and the next item
// starts at once: while items remain, min(limit, items left) calls run.
// Items start in input order; calls may end in any order.
//
// limit < 1 returns an error matching ErrInvalidLimit at once, before
// anything else, and calls nothing.
//
// The first call to return an error stops the run: no new call starts, and
// the context the calls got is cancelled. A cancel of ctx does the same; a
// ctx that is already done starts nothing. Either way ForEach waits for
// every call it started to return before it returns itself.
//
// ForEach returns the first error a call returned, as it is; later errors
// (often the context errors of the calls it cancelled) are dropped. If no
// call failed, it returns ctx.Err() when ctx ended before every item had
// started, and nil otherwise.
//
// At most limit goroutines run calls at any time (plus a constant few, none
// per waiting item): a million items cost no more goroutines than ten. A
// panic in fn is not recovered.
func ForEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	sem := make(chan struct{}, limit) // one token per running call
	return run(ctx, items, fn, func(ctx context.Context, _ T) (func(), error) {
		select {
		case sem <- struct{}{}:
			return func() { <-sem }, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// ForEachWeighted is ForEach with weighted items: item takes weight(item)
// units of capacity while its call runs, and the weights of the calls in
// flight never add up to more than capacity. A weight below 1 counts as 1,
// and one above capacity counts as capacity (that item runs alone).
//
// Items still start in input order: an item that does not fit waits until
// enough calls have returned, and the items behind it wait too, even light
// ones that would fit (so a heavy item is never starved).
//
// capacity < 1 returns an error matching ErrInvalidLimit. Errors, cancel
// and waiting are exactly as for ForEach.
func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("%w (got capacity %d)", ErrInvalidLimit, capacity)
	}
	var (
		mu   sync.Mutex
		free = capacity // units not held by a call in flight
	)
	// room holds one wake-up: a call that gives units back leaves it there
	// if the loop is not waiting yet, so the loop cannot miss it.
	room := make(chan struct{}, 1)
	return run(ctx, items, fn, func(ctx context.Context, item T) (func(), error) {
		w := min(max(weight(item), 1), capacity)
		release := func() {
			mu.Lock()
			free += w
			mu.Unlock()
			select {
			case room <- struct{}{}:
			default: // a wake-up is already waiting
			}
		}
		for {
			// Compare with what is free, not used+w with capacity: with a
			// capacity near math.MaxInt that sum overflows and "fits".
			mu.Lock()
			if w <= free {
				free -= w
				mu.Unlock()
				return release, nil
			}
			mu.Unlock()
			select {
			case <-room:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	})
}

// Bulkhead is a set of slots shared by every TryForEach call that uses it,
// for example every request that calls one dependency, so that together
// they never have more than its limit of calls in flight. It is safe for
// concurrent use.
type Bulkhead struct {
	slots chan struct{} // one token per call in flight
}

// NewBulkhead returns a Bulkhead with limit slots. limit < 1 returns a nil
// Bulkhead and an error matching ErrInvalidLimit.
func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w (got %d)", ErrInvalidLimit, limit)
	}
	return &Bulkhead{slots: make(chan struct{}, limit)}, nil
}

// TryForEach is ForEach on the slots of b, with one difference: it never
// waits for a slot. An item that finds every slot of b in use is shed: that
// counts as the first error, so nothing starts after it, the calls in
// flight are cancelled and awaited, and the error returned matches ErrBusy
// (unless a call had failed before: the first error wins).
//
// Every call gives its slot back to b when it returns, whether it failed
// or not, so when TryForEach returns, every slot it took is free again.
func TryForEach[T any](ctx context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	return run(ctx, items, fn, func(context.Context, T) (func(), error) {
		select {
		case b.slots <- struct{}{}:
			return func() { <-b.slots }, nil
		default:
			return nil, fmt.Errorf("%w: all %d slots in use", ErrBusy, cap(b.slots))
		}
	})
}

// run calls fn for the items in input order, each on a goroutine of its own
// once take has given it a slot, and stops starting calls when ctx ends or
// a call fails. take returns the slot's release, or an error: ctx.Err() if
// ctx ended while it waited, otherwise an error that counts as the first
// error (ErrBusy).
func run[T any](parent context.Context, items []T, fn func(context.Context, T) error,
	take func(context.Context, T) (release func(), err error)) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	fail := func(err error) { once.Do(func() { first = err; cancel() }) }
	started := 0
	for _, item := range items {
		release, err := take(ctx, item)
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			break
		}
		// When ctx was done and a slot free at once, select picked one
		// of the two at random: look again before starting.
		if ctx.Err() != nil {
			release()
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release() // runs after fail: the loop sees the cancel before the free slot
			if err := fn(ctx, item); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	if started < len(items) {
		return parent.Err() // ended before every item had started
	}
	return nil
}
