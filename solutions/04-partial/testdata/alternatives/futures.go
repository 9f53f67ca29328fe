// Design: a future per input, filled and closed by the call's own goroutine; Gather reads them in
// input order, so it needs no WaitGroup; the stop is a flag and a failure count under a mutex.
package partial

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type Outcome[In, Out any] struct {
	Input In
	Value Out
	Err   error
}

var ErrPanic = errors.New("partial: fn panicked")

var ErrSkipped = errors.New("partial: skipped, the gather stopped early")

type Options struct {
	FailFast    bool
	MaxFailures int
}

func Gather[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error)) []Outcome[In, Out] {
	return GatherWith(ctx, inputs, fn, Options{})
}

// future is the outcome of one call, readable once done is closed.
type future[In, Out any] struct {
	done    chan struct{}
	outcome Outcome[In, Out]
}

// stop decides when the gather stops: after more than tolerate failures.
type stop struct {
	mu       sync.Mutex
	tolerate int // < 0: never
	failures int
	stopped  bool
	caller   context.Context // a stop once it has ended cancels nothing: the caller did
	cancel   context.CancelFunc
}

// failed counts a failure and stops the gather when there are too many.
func (s *stop) failed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	if s.tolerate >= 0 && s.failures > s.tolerate && !s.stopped && s.caller.Err() == nil {
		s.stopped = true
		s.cancel()
	}
}

func (s *stop) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &stop{tolerate: -1, caller: ctx, cancel: cancel}
	switch {
	case opt.FailFast:
		s.tolerate = 0
	case opt.MaxFailures > 0:
		s.tolerate = opt.MaxFailures
	}
	futures := make([]*future[In, Out], len(inputs))
	for i, in := range inputs {
		f := &future[In, Out]{done: make(chan struct{}), outcome: Outcome[In, Out]{Input: in}}
		futures[i] = f
		go func() {
			defer close(f.done)
			if s.isStopped() {
				f.outcome.Err = fmt.Errorf("input %d (%v): %w", i, in, ErrSkipped)
				return
			}
			v, err := protect(inner, in, fn)
			switch {
			case err == nil:
				f.outcome.Value = v
			case errors.Is(err, context.Canceled) && s.isStopped():
				f.outcome.Err = fmt.Errorf("input %d (%v): %w", i, in, ErrSkipped)
			default:
				f.outcome.Err = fmt.Errorf("input %d (%v): %w", i, in, err)
				s.failed()
			}
		}()
	}
	out := make([]Outcome[In, Out], len(inputs))
	for i, f := range futures {
		<-f.done
		out[i] = f.outcome
	}
	return out
}

// protect calls fn and turns a panic into an error, on the goroutine that panics.
func protect[In, Out any](ctx context.Context, in In, fn func(context.Context, In) (Out, error)) (v Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero Out
			v, err = zero, fmt.Errorf("%w: %v", ErrPanic, r)
		}
	}()
	return fn(ctx, in)
}

func Split[In, Out any](outcomes []Outcome[In, Out]) (ok, failed []Outcome[In, Out]) {
	for _, o := range outcomes {
		if o.Err == nil {
			ok = append(ok, o)
		} else {
			failed = append(failed, o)
		}
	}
	return ok, failed
}

func Join[In, Out any](outcomes []Outcome[In, Out]) error {
	var errs []error
	for _, o := range outcomes {
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	return errors.Join(errs...)
}
