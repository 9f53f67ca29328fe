// Design: one worker per element pulling indexes from a closed jobs
// channel, and the outcome kept in a struct guarded by a mutex, where the
// first error is recorded by a check-then-act under the lock.

package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// PanicError is the value Map panics with when fn panicked.
type PanicError struct {
	Index int    // the element whose call panicked
	Value any    // what fn panicked with
	Stack []byte // the stack of the goroutine that panicked
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fanout: in[%d]: panic: %v", e.Index, e.Value)
}

// batch is the shared state of one Map or MapAll call.
type batch[Out any] struct {
	mu       sync.Mutex
	out      []Out
	errs     []error
	first    error
	panicked *PanicError
	cancel   context.CancelFunc
	failFast bool
}

func (b *batch[Out]) succeed(i int, v Out) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.out[i] = v
}

func (b *batch[Out]) fail(i int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	err = fmt.Errorf("fanout: in[%d]: %w", i, err)
	b.errs[i] = err
	if b.first == nil {
		b.first = err
		if b.failFast {
			b.cancel()
		}
	}
}

func (b *batch[Out]) panic(p *PanicError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.panicked == nil || p.Index < b.panicked.Index {
		b.panicked = p
	}
	b.cancel()
}

func run[In, Out any](parent context.Context, in []In, fn func(context.Context, In) (Out, error), failFast bool) ([]Out, error) {
	if parent.Err() != nil {
		return nil, parent.Err()
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	b := &batch[Out]{out: make([]Out, len(in)), errs: make([]error, len(in)), cancel: cancel, failFast: failFast}

	jobs := make(chan int, len(in))
	for i := range in {
		jobs <- i
	}
	close(jobs)

	var workers sync.WaitGroup
	workers.Add(len(in)) // as many workers as elements: no limit
	for range in {
		go func() {
			defer workers.Done()
			for i := range jobs {
				work(ctx, b, i, in[i], fn)
			}
		}()
	}
	workers.Wait()

	if b.panicked != nil {
		panic(b.panicked)
	}
	if b.first == nil {
		return b.out, nil
	}
	if failFast {
		return nil, b.first
	}
	return nil, errors.Join(b.errs...)
}

func work[In, Out any](ctx context.Context, b *batch[Out], i int, v In, fn func(context.Context, In) (Out, error)) {
	defer func() {
		if r := recover(); r != nil {
			b.panic(&PanicError{Index: i, Value: r, Stack: debug.Stack()})
		}
	}()
	out, err := fn(ctx, v)
	if err != nil {
		b.fail(i, err)
		return
	}
	b.succeed(i, out)
}

// Map calls fn for every element at once and returns the results in input
// order, or the first error in time.
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return run(ctx, in, fn, true)
}

// MapAll runs every call to its end and joins every error in input order.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	return run(ctx, in, fn, false)
}
