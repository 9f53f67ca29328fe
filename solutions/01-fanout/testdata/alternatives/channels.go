// Design: no WaitGroup and no shared slices: every goroutine sends its
// outcome on a channel with room for all of them, and Map receives exactly
// len(in) outcomes, which is what waiting for every call means here.

package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// Map calls fn(ctx, in[i]) for every i, all at once, and returns the
// results in input order; the first error cancels the others.
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return collect(ctx, in, fn, true)
}

// MapAll is Map without the fail-fast: it joins every error in input order.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return collect(ctx, in, fn, false)
}

// PanicError is the value Map panics with when fn panicked.
type PanicError struct {
	Index int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fanout: in[%d]: panic: %v", e.Index, e.Value)
}

type outcome[Out any] struct {
	index int
	value Out
	err   error
	panic *PanicError
}

func collect[In, Out any](parent context.Context, in []In, fn func(context.Context, In) (Out, error), failFast bool) ([]Out, error) {
	if err := parent.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	outcomes := make(chan outcome[Out], len(in)) // no sender ever blocks
	for i, v := range in {
		go func() {
			o := outcome[Out]{index: i}
			defer func() {
				if r := recover(); r != nil {
					o.panic = &PanicError{Index: i, Value: r, Stack: debug.Stack()}
				}
				outcomes <- o
			}()
			o.value, o.err = fn(ctx, v)
		}()
	}

	results := make([]Out, len(in))
	var firstErr error
	errs := make([]error, len(in))
	var panicked *PanicError
	for range in {
		o := <-outcomes
		switch {
		case o.panic != nil:
			if panicked == nil || o.panic.Index < panicked.Index {
				panicked = o.panic
			}
			cancel()
		case o.err != nil:
			wrapped := fmt.Errorf("fanout: in[%d]: %w", o.index, o.err)
			errs[o.index] = wrapped
			if firstErr == nil {
				firstErr = wrapped
				if failFast {
					cancel()
				}
			}
		default:
			results[o.index] = o.value
		}
	}
	if panicked != nil {
		panic(panicked)
	}
	if firstErr == nil {
		return results, nil
	}
	if failFast {
		return nil, firstErr
	}
	return nil, errors.Join(errs...)
}
