// Library: github.com/failsafe-go/failsafe-go v0.9.8
// Fails: R3 R6 B1 B2
// Sometimes: R4
// Why: its timeout and hedge delay run on time.AfterFunc and time.NewTimer with no clock to inject, so the timeout fires on the wrong clock, early here (R3), and a hedge is not due when the clock says (B1); a failed attempt does not start the next hedge at once, it waits out the delay (B1); on the caller's cancel or the timeout it cancels the attempts and waits for them to return, so a replica that ignores its ctx holds First (R6) and Collect past its deadline (B2). A slow success beating a fast failure (CancelIf), cancelling the losers and not leaking hold (R1 R5, and R4 on most schedules); failsafe returns only the last error, so the glue joins them (R2). On some schedules a loser keeps a live ctx after First returned: the hedges and their cancel run on failsafe's own goroutines and timers, which no test can order (R4, now and then).

// Package firstwins is the kata's API on github.com/failsafe-go/failsafe-go:
// a hedge policy with one hedge per extra replica, cancelling the others
// only on a success (CancelIf), inside a timeout policy. Collect runs each
// call through a timeout policy. failsafe-go waits on time.NewTimer and
// time.AfterFunc and takes no clock: clk is not used. The glue does what
// the library cannot be told: which replica an attempt is (OnHedge sees
// each hedge's ctx before it runs), the errors joined and tagged by
// replica, and the kata's sentinel errors.
package firstwins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/hedgepolicy"
	"github.com/failsafe-go/failsafe-go/timeout"
)

// ErrTimeout is matched (errors.Is) by the error First and Hedge return when
// no replica succeeded within the timeout; that error also matches
// context.DeadlineExceeded and the errors of the replicas that failed before.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// First is Hedge with every hedge due at once.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	return Hedge(ctx, clk, timeout, 0, calls...)
}

// Hedge is hedgepolicy with len(calls)-1 hedges, delay apart, inside a
// timeout policy when timeout > 0.
func Hedge[T any](ctx context.Context, clk clock.Clock, limit, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	var mu sync.Mutex
	replica := map[context.Context]int{} // a hedge's ctx → its index in calls; the first attempt is 0
	next := 1
	errs := make([]error, len(calls))

	hedge := hedgepolicy.NewBuilderWithDelay[T](max(delay, 0)).
		WithMaxHedges(len(calls) - 1).
		CancelIf(func(_ T, err error) bool { return err == nil }). // a failure is not an answer
		OnHedge(func(e failsafe.ExecutionEvent[T]) {
			mu.Lock()
			defer mu.Unlock()
			replica[e.Context()] = next
			next++
		}).
		Build()
	policies := []failsafe.Policy[T]{hedge}
	if limit > 0 {
		policies = []failsafe.Policy[T]{timeout.New[T](limit), hedge}
	}
	v, err := failsafe.With(policies...).WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[T]) (T, error) {
		mu.Lock()
		i := replica[exec.Context()]
		mu.Unlock()
		v, err := calls[i](exec.Context())
		if err != nil {
			mu.Lock()
			errs[i] = fmt.Errorf("replica %d: %w", i, err)
			mu.Unlock()
		}
		return v, err
	})
	if err == nil {
		return v, nil
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case errors.Is(err, timeout.ErrExceeded):
		err = fmt.Errorf("%w: no replica succeeded within %v: %w", ErrTimeout, limit, context.DeadlineExceeded)
	case ctx.Err() != nil:
		err = ctx.Err()
	default: // every replica failed; failsafe returns only the last error
		return zero, errors.Join(errs...)
	}
	return zero, errors.Join(append([]error{err}, errs...)...)
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect runs every call at once, each through a timeout policy when
// timeout > 0, and waits for all of them.
func Collect[T any](ctx context.Context, clk clock.Clock, limit time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	out := make([]Reply[T], len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() {
			var policies []failsafe.Policy[T]
			if limit > 0 {
				policies = append(policies, timeout.New[T](limit))
			}
			v, err := failsafe.With(policies...).WithContext(ctx).GetWithExecution(func(exec failsafe.Execution[T]) (T, error) {
				return call(exec.Context())
			})
			if errors.Is(err, timeout.ErrExceeded) {
				err = fmt.Errorf("%w: no answer within %v: %w", ErrTimeout, limit, context.DeadlineExceeded)
			}
			out[i] = Reply[T]{v, err}
		})
	}
	wg.Wait()
	return out
}
