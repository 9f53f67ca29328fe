// Design: the replicas report straight into a mutex-guarded race record; a
// done channel closed once (a winner, or the last failure) wakes First, and
// a token per failure lets Hedge start the next replica early.

package firstwins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched by the error First and Hedge return when no replica
// succeeded within the timeout.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// race is what the replicas of one First or Hedge call report into.
type race[T any] struct {
	mu     sync.Mutex
	over   bool // a winner or every failure is in; later reports are dropped
	won    bool
	value  T
	errs   []error
	failed int

	done     chan struct{} // closed when over becomes true
	failures chan struct{} // one token per failure, room for all of them
}

func newRace[T any](n int) *race[T] {
	return &race[T]{errs: make([]error, n), done: make(chan struct{}), failures: make(chan struct{}, n)}
}

func (r *race[T]) report(i int, v T, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return
	}
	if err == nil {
		r.won, r.value, r.over = true, v, true
		close(r.done)
		return
	}
	r.errs[i] = fmt.Errorf("replica %d: %w", i, err)
	r.failed++
	if r.failed == len(r.errs) {
		r.over = true
		close(r.done)
		return
	}
	r.failures <- struct{}{}
}

// failuresSoFar copies the errors recorded until now, in the order of calls.
func (r *race[T]) failuresSoFar() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// First calls every replica at once and returns the first success.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	return Hedge(ctx, clk, timeout, 0, calls...)
}

// Hedge starts the replicas one delay apart, or the next at once after a
// failure, and returns the first success.
func Hedge[T any](ctx context.Context, clk clock.Clock, timeout, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var deadline <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		deadline = t.C
	}

	r := newRace[T](len(calls))
	next := 0
	var hedge *clock.Timer
	defer func() {
		if hedge != nil {
			hedge.Stop()
		}
	}()
	launch := func() {
		i := next
		next++
		go func() {
			v, err := calls[i](ctx)
			r.report(i, v, err)
		}()
		if hedge != nil {
			hedge.Stop()
			hedge = nil
		}
		if delay > 0 && next < len(calls) {
			hedge = clk.Timer(delay)
		}
	}
	launch()
	for delay <= 0 && next < len(calls) {
		launch()
	}

	for {
		var due <-chan time.Time
		if hedge != nil {
			due = hedge.C
		}
		select {
		case <-r.done:
			if r.won {
				return r.value, nil
			}
			return zero, errors.Join(r.failuresSoFar()...)
		case <-r.failures:
			if next < len(calls) {
				launch()
			}
		case <-due:
			launch()
		case <-deadline:
			timedOut := fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
			return zero, errors.Join(append([]error{timedOut}, r.failuresSoFar()...)...)
		case <-ctx.Done():
			return zero, errors.Join(append([]error{ctx.Err()}, r.failuresSoFar()...)...)
		}
	}
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect calls every replica at once and returns every answer that came
// before the deadline, in the order of calls.
func Collect[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		mu       sync.Mutex
		closed   bool
		out      = make([]Reply[T], len(calls))
		answered = make([]bool, len(calls))
		left     = len(calls)
		all      = make(chan struct{})
	)
	if left == 0 {
		return out
	}
	for i, call := range calls {
		go func() {
			v, err := call(ctx)
			mu.Lock()
			defer mu.Unlock()
			if closed {
				return // too late: the slice belongs to the caller now
			}
			out[i], answered[i] = Reply[T]{v, err}, true
			if left--; left == 0 {
				close(all)
			}
		}()
	}

	var deadline <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var missing error
	select {
	case <-all:
	case <-deadline:
		missing = fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		missing = ctx.Err()
	}

	mu.Lock()
	defer mu.Unlock()
	closed = true
	for i := range out {
		if !answered[i] {
			out[i] = Reply[T]{Err: missing}
		}
	}
	return out
}
