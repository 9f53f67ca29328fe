// Design: every call sends its index and result on a buffered channel; Gather alone receives them,
// places each by index, counts the failures and decides the stop, so the outcomes need no lock.
package partial

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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

type result[Out any] struct {
	i     int
	value Out
	err   error
}

func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var stopped atomic.Bool
	results := make(chan result[Out], len(inputs)) // room for every result: no sender ever waits
	for i, in := range inputs {
		go func() {
			if stopped.Load() {
				results <- result[Out]{i: i, err: ErrSkipped}
				return
			}
			v, err := protect(inner, in, fn)
			results <- result[Out]{i, v, err}
		}()
	}
	out := make([]Outcome[In, Out], len(inputs))
	failures := 0
	for range inputs {
		r := <-results
		o := Outcome[In, Out]{Input: inputs[r.i], Value: r.value}
		switch {
		case r.err == nil:
		case errors.Is(r.err, ErrSkipped), stopped.Load() && errors.Is(r.err, context.Canceled):
			o.Value = *new(Out)
			o.Err = fmt.Errorf("%v: %w", inputs[r.i], ErrSkipped)
		default:
			o.Value = *new(Out)
			o.Err = fmt.Errorf("%v: %w", inputs[r.i], r.err)
			failures++
			// Once the caller has cancelled, a stop cancels nothing: the
			// calls were cut short by the caller, and keep context.Canceled.
			if !stopped.Load() && ctx.Err() == nil && (opt.FailFast || opt.MaxFailures > 0 && failures > opt.MaxFailures) {
				stopped.Store(true)
				cancel()
			}
		}
		out[r.i] = o
	}
	return out
}

func protect[In, Out any](ctx context.Context, in In, fn func(context.Context, In) (Out, error)) (v Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, r)
		}
	}()
	return fn(ctx, in)
}

func Split[In, Out any](outcomes []Outcome[In, Out]) (ok, failed []Outcome[In, Out]) {
	for _, o := range outcomes {
		if o.Err != nil {
			failed = append(failed, o)
			continue
		}
		ok = append(ok, o)
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
