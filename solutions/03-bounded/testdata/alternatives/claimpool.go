// Design: an elastic pool of workers that claim the next item by index under one claim lock, the
// head claimer waiting for room on a counter (a one-slot wake-up channel, ctx-aware) and starting a
// successor only when nobody else is waiting to claim; the Bulkhead is a lock-free atomic counter
// taken by compare-and-swap.

// Package bounded calls a function for every item of a slice, with at most
// limit calls running at once, and stops at the first failure.
//
// ForEach and ForEachWeighted run an elastic pool of workers. One worker at
// a time, the claimer, holds the claim lock, waits for room for the next
// item in input order, claims it, starts a successor if nobody else is
// waiting to claim, and runs the call; then it comes back to claim. So
// there are never more workers than calls in flight plus one. TryForEach starts a
// goroutine per call that got a slot of the shared Bulkhead, and sheds the
// item that found none.
//
// No clock is involved: nothing waits for time, only for room and for ctx.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrInvalidLimit is matched (errors.Is) by the error returned for a limit
// or capacity below 1: that is a configuration mistake, not "unlimited".
var ErrInvalidLimit = errors.New("bounded: limit must be at least 1")

// ErrBusy is matched (errors.Is) by the error TryForEach returns when it shed
// an item because every slot of its Bulkhead was in use.
var ErrBusy = errors.New("bounded: every slot is busy")

// outcome keeps the first error of a run and cancels the run's ctx with it.
type outcome struct {
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func (o *outcome) fail(err error) {
	o.once.Do(func() {
		o.err = err
		o.cancel()
	})
}

// verdict is what a run returns once every call it started has returned.
func (o *outcome) verdict(parent context.Context, started, total int) error {
	if o.err != nil {
		return o.err
	}
	if started < total {
		return parent.Err()
	}
	return nil
}

// pool runs items on workers that claim them in input order. It is elastic:
// the worker that claims an item starts a successor when nobody else is
// waiting to claim, so there is always one claimer while items remain and
// never more workers than calls in flight plus one.
type pool[T any] struct {
	ctx   context.Context
	items []T
	fn    func(context.Context, T) error
	out   *outcome
	wg    sync.WaitGroup
	room  *room
	// weigh is the units of room an item takes, already in [1, capacity].
	weigh func(T) int

	claimers atomic.Int64 // workers about to claim or claiming

	claimMu sync.Mutex // the head of the line; guards next and started
	next    int
	started int
}

// claim hands out the next item, in input order, once there is room for
// it. The claimer waits for room holding the claim lock: the items behind
// the head wait too, so a heavy item is not starved.
func (p *pool[T]) claim() (item T, leave func(), more, ok bool) {
	p.claimMu.Lock()
	defer p.claimMu.Unlock()
	if p.next == len(p.items) || p.ctx.Err() != nil {
		return item, nil, false, false
	}
	leave, err := p.room.take(p.ctx, p.weigh(p.items[p.next]))
	if err != nil { // only ctx ends the wait
		return item, nil, false, false
	}
	if p.ctx.Err() != nil { // room and cancel came together
		leave()
		return item, nil, false, false
	}
	item = p.items[p.next]
	p.next++
	p.started++ // counted only once the call is sure to happen
	return item, leave, p.next < len(p.items), true
}

func (p *pool[T]) spawn() {
	p.claimers.Add(1)
	p.wg.Add(1)
	go p.work()
}

// work claims and runs items until none may start. The worker counts as a
// claimer from before it gives its room back until its claim is over.
func (p *pool[T]) work() {
	defer p.wg.Done()
	for {
		item, leave, more, ok := p.claim()
		idle := p.claimers.Add(-1)
		if !ok {
			return
		}
		if more && idle == 0 {
			p.spawn() // the next item needs a claimer while this one runs
		}
		if err := p.fn(p.ctx, item); err != nil {
			p.out.fail(err) // cancel before the room is given back
		}
		p.claimers.Add(1)
		leave()
	}
}

func runPool[T any](parent context.Context, items []T, capacity int, weigh func(T) int,
	fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	p := &pool[T]{
		ctx: ctx, items: items, fn: fn, out: &outcome{cancel: cancel},
		room: &room{free: capacity, wake: make(chan struct{}, 1)}, weigh: weigh,
	}
	if len(items) > 0 {
		p.spawn()
	}
	p.wg.Wait()
	return p.out.verdict(parent, p.started, len(items))
}

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
// are dropped. If no call failed, it returns ctx.Err() when ctx ended
// before every item had started, and nil otherwise.
//
// At most limit goroutines run calls, plus the one claimer. A panic in fn
// is not recovered.
func ForEach[T any](ctx context.Context, items []T, limit int, fn func(context.Context, T) error) error {
	if limit < 1 {
		return fmt.Errorf("%w, not %d", ErrInvalidLimit, limit)
	}
	return runPool(ctx, items, limit, func(T) int { return 1 }, fn)
}

// room is the capacity of one ForEachWeighted. Only the head claimer waits
// on it; a call that returns leaves one wake-up in a one-slot channel, so
// a wake-up that comes between the claimer's look and its wait is kept.
type room struct {
	mu   sync.Mutex
	free int
	wake chan struct{}
}

// take waits until n units are free, or ctx ends, and returns how to give
// them back.
func (r *room) take(ctx context.Context, n int) (func(), error) {
	for {
		r.mu.Lock()
		if n <= r.free {
			r.free -= n
			r.mu.Unlock()
			return func() { r.give(n) }, nil
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (r *room) give(n int) {
	r.mu.Lock()
	r.free += n
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// ForEachWeighted is ForEach with weighted items: item takes weight(item)
// units of capacity while its call runs, and the weights of the calls in
// flight never add up to more than capacity. A weight below 1 counts as 1,
// and one above capacity counts as capacity (that item runs alone).
//
// Items still start in input order: an item that does not fit waits until
// enough calls have returned, and the items behind it wait too.
//
// capacity < 1 returns an error matching ErrInvalidLimit. Errors, cancel
// and waiting are exactly as for ForEach.
func ForEachWeighted[T any](ctx context.Context, items []T, capacity int, weight func(T) int, fn func(context.Context, T) error) error {
	if capacity < 1 {
		return fmt.Errorf("%w, not a capacity of %d", ErrInvalidLimit, capacity)
	}
	weigh := func(item T) int { return min(max(weight(item), 1), capacity) }
	return runPool(ctx, items, capacity, weigh, fn)
}

// Bulkhead is a set of slots shared by every TryForEach call that uses it.
// It is safe for concurrent use: the slots in use are one atomic counter.
type Bulkhead struct {
	limit int64
	inUse atomic.Int64
}

// NewBulkhead returns a Bulkhead with limit slots. limit < 1 returns a nil
// Bulkhead and an error matching ErrInvalidLimit.
func NewBulkhead(limit int) (*Bulkhead, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w, not a bulkhead of %d", ErrInvalidLimit, limit)
	}
	return &Bulkhead{limit: int64(limit)}, nil
}

// tryTake takes a slot if one is free, in one compare-and-swap: a slot is
// never seen free by two takers, and a failed try changes nothing.
func (b *Bulkhead) tryTake() bool {
	for {
		n := b.inUse.Load()
		if n >= b.limit {
			return false
		}
		if b.inUse.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (b *Bulkhead) give() { b.inUse.Add(-1) }

// TryForEach is ForEach on the slots of b, with one difference: it never
// waits for a slot. An item that finds every slot of b in use is shed: that
// counts as the first error, so nothing starts after it, the calls in
// flight are cancelled and awaited, and the error returned matches ErrBusy
// (unless a call had failed before: the first error wins).
//
// Every call gives its slot back to b when it returns, whether it failed
// or not, so when TryForEach returns, every slot it took is free again.
func TryForEach[T any](ctx context.Context, b *Bulkhead, items []T, fn func(context.Context, T) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	out := &outcome{cancel: cancel}
	var wg sync.WaitGroup
	started := 0
	for _, item := range items {
		if ctx.Err() != nil {
			break
		}
		if !b.tryTake() {
			if ctx.Err() == nil {
				out.fail(fmt.Errorf("%w: %d of %d slots in use", ErrBusy, b.limit, b.limit))
			}
			break
		}
		if ctx.Err() != nil { // cancelled while we took the slot
			b.give()
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, item); err != nil {
				out.fail(err)
			}
			b.give() // before wg.Done: the slot is free when we return
		}()
	}
	wg.Wait()
	return out.verdict(parent, started, len(items))
}
