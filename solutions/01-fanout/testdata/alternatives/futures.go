// Design: a future per call: each goroutine fulfils a one-slot channel of
// its own, Map reads the futures in input order, and the first failure in
// time claims the error with an atomic compare-and-swap, which is also
// what decides who cancels the others.

package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// Map calls fn(ctx, in[i]) for every i, all at once, and returns the
// results in input order; the first error cancels the others.
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return await(ctx, in, fn, true)
}

// MapAll is Map without the fail-fast: it joins every error in input order.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return await(ctx, in, fn, false)
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

type future[Out any] struct {
	v   Out
	err error
}

func await[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error), failFast bool) ([]Out, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first atomic.Int64 // the index of the first failure in time, -1 while none
	first.Store(-1)
	futures := make([]chan future[Out], len(in))
	for i, v := range in {
		futures[i] = make(chan future[Out], 1) // fulfilled once, never blocks
		go func() {
			f := settle(ctx, i, v, fn)
			if f.err != nil && first.CompareAndSwap(-1, int64(i)) && failFast {
				cancel()
			}
			futures[i] <- f
		}()
	}
	out := make([]Out, len(in))
	errs := make([]error, len(in))
	var raised *PanicError
	for i, f := range futures {
		r := <-f // waits for every call, in input order
		out[i], errs[i] = r.v, r.err
		if pe, ok := r.err.(*PanicError); ok && raised == nil {
			raised = pe
		}
	}
	if raised != nil {
		panic(raised)
	}
	i := first.Load()
	switch {
	case i < 0:
		return out, nil
	case failFast:
		return nil, errs[i]
	default:
		return nil, errors.Join(errs...)
	}
}

func settle[In, Out any](ctx context.Context, i int, v In, fn func(context.Context, In) (Out, error)) (f future[Out]) {
	defer func() {
		if r := recover(); r != nil {
			f = future[Out]{err: &PanicError{Index: i, Value: r, Stack: debug.Stack()}}
		}
	}()
	o, err := fn(ctx, v)
	if err != nil {
		return future[Out]{err: fmt.Errorf("fanout: in[%d]: %w", i, err)}
	}
	return future[Out]{v: o}
}
