// Design: an explicit state machine fed by one event channel (replies and
// clock ticks alike), and a timeout error type of its own whose Is matches
// ErrTimeout and context.DeadlineExceeded and whose Unwrap gives the failures.

package firstwins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched by the error First and Hedge return when no replica
// succeeded within the timeout.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// timeoutError says that the timeout passed, with the failures before it.
type timeoutError struct {
	after    time.Duration
	failures []error
}

func (e *timeoutError) Error() string {
	msg := fmt.Sprintf("firstwins: no success within %v", e.after)
	for _, f := range e.failures {
		msg += "; " + f.Error()
	}
	return msg
}

func (e *timeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

func (e *timeoutError) Unwrap() []error { return e.failures }

// failure is one replica's error, tagged with its index.
type failure struct {
	index int
	err   error
}

// hedging is the state of one Hedge call between events.
type hedging[T any] struct {
	calls   []func(context.Context) (T, error)
	started int
	failed  []failure // in the order they came
}

func (s *hedging[T]) allStarted() bool { return s.started == len(s.calls) }
func (s *hedging[T]) allFailed() bool  { return len(s.failed) == len(s.calls) }

// inOrder gives the failures so far in the order of calls, each tagged.
func (s *hedging[T]) inOrder() []error {
	fs := slices.Clone(s.failed)
	slices.SortFunc(fs, func(a, b failure) int { return a.index - b.index })
	errs := make([]error, len(fs))
	for k, f := range fs {
		errs[k] = fmt.Errorf("replica %d: %w", f.index, f.err)
	}
	return errs
}

type answer[T any] struct {
	index int
	value T
	err   error
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
	replicaCtx, stopReplicas := context.WithCancel(ctx)
	defer stopReplicas()

	answers := make(chan answer[T], len(calls))
	s := &hedging[T]{calls: calls}
	start := func() {
		i := s.started
		s.started++
		go func() {
			v, err := calls[i](replicaCtx)
			answers <- answer[T]{i, v, err}
		}()
	}

	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}

	for {
		// Start what is due now, and arm the hedge timer for the next one.
		start()
		for delay <= 0 && !s.allStarted() {
			start()
		}
		var hedgeC <-chan time.Time
		var hedge *clock.Timer
		if !s.allStarted() {
			hedge = clk.Timer(delay)
			hedgeC = hedge.C
		}

		startNext := false
		for !startNext {
			select {
			case a := <-answers:
				if a.err == nil {
					stopTimer(hedge)
					return a.value, nil
				}
				s.failed = append(s.failed, failure{a.index, a.err})
				if s.allFailed() {
					stopTimer(hedge)
					return zero, errors.Join(s.inOrder()...)
				}
				startNext = !s.allStarted()
			case <-hedgeC:
				startNext = true
			case <-timeoutC:
				stopTimer(hedge)
				return zero, &timeoutError{after: timeout, failures: s.inOrder()}
			case <-ctx.Done():
				stopTimer(hedge)
				return zero, errors.Join(append([]error{ctx.Err()}, s.inOrder()...)...)
			}
		}
		stopTimer(hedge)
	}
}

func stopTimer(t *clock.Timer) {
	if t != nil {
		t.Stop()
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
	replicaCtx, stopReplicas := context.WithCancel(ctx)
	defer stopReplicas()
	answers := make(chan answer[T], len(calls))
	for i, call := range calls {
		go func() {
			v, err := call(replicaCtx)
			answers <- answer[T]{i, v, err}
		}()
	}
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}

	out := make([]*Reply[T], len(calls))
	var missing error
	for got := 0; got < len(calls) && missing == nil; {
		select {
		case a := <-answers:
			out[a.index] = &Reply[T]{a.value, a.err}
			got++
		case <-timeoutC:
			missing = &timeoutError{after: timeout}
		case <-ctx.Done():
			missing = ctx.Err()
		}
	}
	replies := make([]Reply[T], len(calls))
	for i, r := range out {
		if r != nil {
			replies[i] = *r
		} else {
			replies[i] = Reply[T]{Err: missing}
		}
	}
	return replies
}
