// Design: an actor: one coordinator goroutine owns every piece of state
// (the replies, the timers, which replica starts next) and hands its
// verdict to First on a channel; First itself only waits for the verdict.

package firstwins

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched by the error First and Hedge return when no replica
// succeeded within the timeout.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// First calls every replica at once and returns the first success.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	return Hedge(ctx, clk, timeout, 0, calls...)
}

type answer[T any] struct {
	i   int
	v   T
	err error
}

type verdict[T any] struct {
	v   T
	err error
}

// coordinator is the actor: only its own goroutine touches its fields.
type coordinator[T any] struct {
	ctx     context.Context
	clk     clock.Clock
	timeout time.Duration
	delay   time.Duration
	calls   []func(context.Context) (T, error)
	replies chan answer[T] // room for every replica: a late one never blocks
	errs    []error
	next    int          // the next replica to start
	hedge   *clock.Timer // fires when the next replica is due; nil when none is
}

// Hedge is First with hedged requests: each next replica starts delay
// after the last one started, or at once when a replica fails.
func Hedge[T any](ctx context.Context, clk clock.Clock, timeout, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	if len(calls) == 0 {
		var zero T
		return zero, ErrNoCalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the losers stop once First has its verdict
	c := &coordinator[T]{ctx: ctx, clk: clk, timeout: timeout, delay: delay, calls: calls,
		replies: make(chan answer[T], len(calls)), errs: make([]error, len(calls))}
	done := make(chan verdict[T], 1)
	go func() { done <- c.run() }()
	v := <-done
	return v.v, v.err
}

func (c *coordinator[T]) run() verdict[T] {
	var deadline <-chan time.Time
	if c.timeout > 0 {
		t := c.clk.Timer(c.timeout)
		defer t.Stop()
		deadline = t.C
	}
	defer func() {
		if c.hedge != nil {
			c.hedge.Stop()
		}
	}()
	c.launch()
	for c.delay <= 0 && c.next < len(c.calls) {
		c.launch()
	}
	for failed := 0; ; {
		var due <-chan time.Time
		if c.hedge != nil {
			due = c.hedge.C
		}
		select {
		case a := <-c.replies:
			if a.err == nil {
				return verdict[T]{v: a.v}
			}
			c.errs[a.i] = fmt.Errorf("replica %d: %w", a.i, a.err)
			if failed++; failed == len(c.calls) {
				return verdict[T]{err: errors.Join(c.errs...)}
			}
			if c.next < len(c.calls) {
				c.launch()
			}
		case <-due:
			c.launch()
		case <-deadline:
			err := fmt.Errorf("%w after %v (%w)", ErrTimeout, c.timeout, context.DeadlineExceeded)
			return verdict[T]{err: errors.Join(append([]error{err}, c.errs...)...)}
		case <-c.ctx.Done():
			return verdict[T]{err: errors.Join(append([]error{c.ctx.Err()}, c.errs...)...)}
		}
	}
}

// launch starts the next replica and, if one is left after it, a fresh
// timer for the one after (a mock timer is never Reset).
func (c *coordinator[T]) launch() {
	i := c.next
	c.next++
	go func() {
		v, err := c.calls[i](c.ctx)
		c.replies <- answer[T]{i, v, err}
	}()
	if c.hedge != nil {
		c.hedge.Stop()
		c.hedge = nil
	}
	if c.delay > 0 && c.next < len(c.calls) {
		c.hedge = c.clk.Timer(c.delay)
	}
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect calls every replica at once and returns what arrived by the
// deadline, in the order of calls.
func Collect[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	replies := make(chan answer[T], len(calls))
	for i, call := range calls {
		go func() {
			v, err := call(ctx)
			replies <- answer[T]{i, v, err}
		}()
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	out := make([]Reply[T], len(calls))
	pending := make(map[int]bool, len(calls))
	for i := range calls {
		pending[i] = true
	}
	for len(pending) > 0 {
		select {
		case a := <-replies:
			out[a.i] = Reply[T]{a.v, a.err}
			delete(pending, a.i)
		case <-deadline:
			for i := range pending {
				out[i].Err = fmt.Errorf("%w after %v (%w)", ErrTimeout, timeout, context.DeadlineExceeded)
			}
			return out
		case <-ctx.Done():
			for i := range pending {
				out[i].Err = ctx.Err()
			}
			return out
		}
	}
	return out
}
