// Design: no result channel at all; replicas record their outcome in a mutex-guarded scoreboard and close a "settled" channel when they decide the race (first success, or last failure), so no replica can ever block after First returns (Hedge and Collect included).
package firstwins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched (errors.Is) by the error First and Hedge return when
// no replica succeeded within the timeout; that error also matches
// context.DeadlineExceeded and the errors of the replicas that failed before.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// First calls every replica at once, each with a context derived from ctx,
// and returns the value of the first one that succeeds.
//
// A replica's error is recorded, not returned, while others may still
// succeed. First returns as soon as one of these happens:
//   - a replica succeeds: its value and a nil error;
//   - every replica has failed: errors.Join of their errors in the order of
//     calls, each as "replica i: err" (i is the index in calls);
//   - timeout has passed on clk (timeout <= 0 means no timeout): an error
//     matching ErrTimeout, context.DeadlineExceeded and the errors so far;
//   - ctx is done: an error matching ctx.Err() and the errors so far.
//
// On return the replicas' context is cancelled. No calls at all is ErrNoCalls.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	return Hedge(ctx, clk, timeout, 0, calls...)
}

// board is the scoreboard the replicas write; every field is guarded by mu.
type board[T any] struct {
	mu      sync.Mutex
	errs    []error // errs[i]: replica i's failure, wrapped
	failed  int
	won     bool
	value   T
	settled chan struct{} // closed by the replica that decides the race
	failure chan struct{} // one token per failure (room for all): Hedge starts the next replica
}

// run calls replica i and records its outcome. It never blocks on anything
// but the board's lock, held for a few instructions.
func (b *board[T]) run(ctx context.Context, i int, call func(context.Context) (T, error)) {
	v, err := call(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.won {
		return // the race is decided: a late answer changes nothing
	}
	if err == nil {
		b.won, b.value = true, v
		close(b.settled)
		return
	}
	b.errs[i] = fmt.Errorf("replica %d: %w", i, err)
	b.failed++
	if b.failed == len(b.errs) {
		close(b.settled)
	}
	b.failure <- struct{}{} // never blocks: at most one token per replica
}

// snapshot returns the failures recorded so far, in the order of calls.
func (b *board[T]) snapshot() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]error(nil), b.errs...)
}

// Hedge is First with hedged requests: it starts calls[0] at once, and each
// next replica when delay has passed on clk since the last one started, or
// at once when a replica fails, whichever comes first. delay <= 0 starts
// every replica at once, like First. Replicas not started when Hedge returns
// are never called. The timeout counts from the start of Hedge. Results and
// errors are as for First.
func Hedge[T any](ctx context.Context, clk clock.Clock, timeout, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	b := &board[T]{
		errs:    make([]error, len(calls)),
		settled: make(chan struct{}),
		failure: make(chan struct{}, len(calls)),
	}
	deadline, stopDeadline := wait(clk, timeout)
	defer stopDeadline()

	started := 0
	var next <-chan time.Time
	stopNext := func() {}
	defer func() { stopNext() }()
	start := func() {
		i := started
		started++
		go b.run(ctx, i, calls[i])
		stopNext()
		next, stopNext = nil, func() {}
		if started < len(calls) && delay > 0 {
			next, stopNext = wait(clk, delay)
		}
	}
	start()
	for delay <= 0 && started < len(calls) {
		start()
	}

	for {
		select {
		case <-b.settled:
			b.mu.Lock()
			won, v := b.won, b.value
			b.mu.Unlock()
			if won {
				return v, nil
			}
			return zero, errors.Join(b.snapshot()...)
		case <-b.failure:
			if started < len(calls) {
				start()
			}
		case <-next:
			start()
		case <-deadline:
			err := fmt.Errorf("%w: no replica succeeded within %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
			return zero, errors.Join(append([]error{err}, b.snapshot()...)...)
		case <-parent.Done():
			return zero, errors.Join(append([]error{parent.Err()}, b.snapshot()...)...)
		}
	}
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect calls every replica at once, each with a context derived from ctx,
// and waits until every replica has answered, timeout has passed on clk
// (timeout <= 0 means no timeout), or ctx is done. Then it cancels the
// replicas still running and returns one Reply per call, in the order of
// calls: what the replica returned if it answered in time; otherwise the
// zero value and an error matching ErrTimeout and context.DeadlineExceeded
// (the timeout passed) or ctx.Err() (ctx is done). Answers that come later
// are dropped. No calls gives an empty slice.
func Collect[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var mu sync.Mutex
	out := make([]Reply[T], len(calls))
	answered := make([]bool, len(calls))
	n, over := 0, false
	all := make(chan struct{})
	if len(calls) == 0 {
		close(all)
	}
	for i, call := range calls {
		go func() {
			v, err := call(ctx)
			mu.Lock()
			defer mu.Unlock()
			if over {
				return // too late: dropped
			}
			out[i], answered[i] = Reply[T]{v, err}, true
			if n++; n == len(calls) {
				close(all)
			}
		}()
	}
	deadline, stop := wait(clk, timeout)
	defer stop()

	var missing error
	select {
	case <-all:
	case <-deadline:
		missing = fmt.Errorf("%w: no answer within %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
	case <-parent.Done():
		missing = parent.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	over = true
	res := make([]Reply[T], len(calls))
	for i := range res {
		if answered[i] {
			res[i] = out[i]
		} else {
			res[i].Err = missing
		}
	}
	return res
}

// wait returns a channel that fires once d has passed on clk (never for
// d <= 0) and the function that stops its timer.
func wait(clk clock.Clock, d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := clk.Timer(d)
	return t.C, func() { t.Stop() }
}
