// Library: github.com/sourcegraph/conc v0.3.0
// GOMAXPROCS: 2
// Fails: R1 R2 R4 R5 B1 B2
// Why: conc's iter runs at most GOMAXPROCS calls at once by default, so with 2 of them the third input starts only when a call ends: the calls are not all in flight (R1), and a call that waits for the others never gets to run (R2 R4 R5 B1 B2). At GOMAXPROCS=4 only R1 B1 B2 fail; at 8, R1 still fails (the tests gather up to 40 inputs at once); at 64, more than the tests' inputs, it passes everything.

// Package partial is the kata's API on github.com/sourcegraph/conc:
// iter.Map keeps the input order, and panics.Try turns a panic in fn into
// that input's error instead of letting conc raise it again on the caller.
// The width is conc's default.
package partial

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sourcegraph/conc/iter"
	"github.com/sourcegraph/conc/panics"
)

// Outcome is the result of one input.
type Outcome[In, Out any] struct {
	Input In
	Value Out
	Err   error
}

// ErrPanic is matched by the error of an input whose call panicked.
var ErrPanic = errors.New("partial: fn panicked")

// ErrSkipped is matched by the error of an input the gather did not finish.
var ErrSkipped = errors.New("partial: skipped, the gather stopped early")

// Options tune GatherWith.
type Options struct {
	FailFast    bool
	MaxFailures int
}

// Gather is iter.Map over the inputs.
func Gather[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error)) []Outcome[In, Out] {
	return GatherWith(ctx, inputs, fn, Options{})
}

// GatherWith is iter.Map with a ctx of its own that a failure may cancel.
func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	limit := -1
	switch {
	case opt.FailFast:
		limit = 0
	case opt.MaxFailures > 0:
		limit = opt.MaxFailures
	}
	var mu sync.Mutex
	failures, stopped := 0, false
	out := make([]Outcome[In, Out], len(inputs))
	for i := range inputs {
		out[i].Input = inputs[i]
	}
	iter.ForEachIdx(out, func(i int, o *Outcome[In, Out]) {
		mu.Lock()
		skip := stopped
		mu.Unlock()
		if skip {
			o.Err = fmt.Errorf("input %d (%v): %w", i, o.Input, ErrSkipped)
			return
		}
		var v Out
		var err error
		if r := panics.Try(func() { v, err = fn(ctx, o.Input) }); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanic, r.Value)
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			o.Value = v
		case stopped && errors.Is(err, context.Canceled):
			o.Err = fmt.Errorf("input %d (%v): %w", i, o.Input, ErrSkipped)
		default:
			o.Err = fmt.Errorf("input %d (%v): %w", i, o.Input, err)
			failures++
			if limit >= 0 && failures > limit && !stopped && caller.Err() == nil { // after the caller's cancel, a stop skips nothing
				stopped = true
				cancel()
			}
		}
	})
	return out
}

// Split keeps the order.
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

// Join is errors.Join of every error.
func Join[In, Out any](outcomes []Outcome[In, Out]) error {
	var errs []error
	for _, o := range outcomes {
		errs = append(errs, o.Err)
	}
	return errors.Join(errs...)
}
