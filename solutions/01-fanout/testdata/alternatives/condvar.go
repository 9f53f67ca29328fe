// Design: one state struct under a mutex, with a condition variable: each
// call records its outcome and counts itself out under the lock, the first
// failure is a check-and-set in that same critical section, and Map sleeps
// on the condition until the count reaches zero.

package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Map calls fn(ctx, in[i]) for every i, all at once, and returns the
// results in input order; the first error cancels the others.
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return gather(ctx, in, fn, true)
}

// MapAll is Map without the fail-fast: it joins every error in input order.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return gather(ctx, in, fn, false)
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

type batch[Out any] struct {
	mu      sync.Mutex
	settled *sync.Cond
	running int
	out     []Out
	errs    []error
	first   error
	panic   *PanicError
}

func gather[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error), failFast bool) ([]Out, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &batch[Out]{running: len(in), out: make([]Out, len(in)), errs: make([]error, len(in))}
	b.settled = sync.NewCond(&b.mu)
	for i, v := range in {
		go func() {
			o, err := guarded(ctx, i, v, fn)
			b.mu.Lock()
			defer b.mu.Unlock()
			b.out[i], b.errs[i] = o, err
			if pe, ok := err.(*PanicError); ok && (b.panic == nil || pe.Index < b.panic.Index) {
				b.panic = pe
			}
			if err != nil && b.first == nil {
				b.first = err
				if failFast {
					cancel()
				}
			}
			if b.running--; b.running == 0 {
				b.settled.Broadcast()
			}
		}()
	}
	b.mu.Lock()
	for b.running > 0 {
		b.settled.Wait()
	}
	b.mu.Unlock()
	switch {
	case b.panic != nil:
		panic(b.panic)
	case b.first == nil:
		return b.out, nil
	case failFast:
		return nil, b.first
	default:
		return nil, errors.Join(b.errs...)
	}
}

func guarded[In, Out any](ctx context.Context, i int, v In, fn func(context.Context, In) (Out, error)) (o Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Index: i, Value: r, Stack: debug.Stack()}
		}
	}()
	if o, err = fn(ctx, v); err != nil {
		err = fmt.Errorf("fanout: in[%d]: %w", i, err)
	}
	return o, err
}
