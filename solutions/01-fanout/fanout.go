// Package fanout calls a function for every element of a slice, all at
// once, and returns the results in the order of the input: a concurrent map
// with the error semantics of errgroup.
//
// Map starts one goroutine per element and calls fn on each, so the whole
// batch takes about as long as its slowest call. fn is called concurrently
// and must be safe for that. Every call gets a context derived from the
// caller's: the first call to fail cancels it for all the others, and so
// does a cancel of the caller's ctx. fn is expected to honour its ctx and
// return early; Map waits for every call anyway, so when Map returns,
// nothing it started is still running and nothing writes to the results.
//
// out[i] is always the result of fn(ctx, in[i]), whatever order the calls
// finish in. Map never modifies in.
//
// Errors: Map returns the first error in time (not the one with the lowest
// index), wrapped so that its message names the element, as in
// "fanout: in[2]: connection refused", and errors.Is and errors.As still
// find the original. The errors of the calls it cancelled afterwards are
// dropped. On any error the result slice is nil.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Map calls fn(ctx, in[i]) for every i, all at once, and returns the
// results in input order: out[i] belongs to in[i] and len(out) == len(in).
//
// The first call to return an error cancels the ctx every other call got;
// once all calls have returned, Map returns nil and that error, wrapped
// with its index ("fanout: in[i]: …"). A cancel of the caller's ctx
// reaches every call the same way. If ctx is already done, Map calls
// nothing and returns nil, ctx.Err().
//
// Map returns only after every call of fn has returned, even a call that
// ignores its ctx, and it cancels the ctx the calls got before it returns,
// after a success too (as errgroup's Wait does). An empty in returns a
// non-nil empty slice and a nil error, without calling fn.
//
// A panic in fn (bonus B2) cancels the other calls like an error; once all
// of them have returned, Map panics on the caller's goroutine with a
// *PanicError that names the index (the lowest, if several panicked).
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, errs, first := run(ctx, in, fn, true)
	if first >= 0 {
		return nil, errs[first]
	}
	return out, nil
}

// MapAll (bonus B1) is Map without the fail-fast: a failure cancels
// nothing, every call runs to its end, and the error joins (errors.Join)
// every failure, each wrapped with its index as in Map, in input order
// whatever order they happened in. It is nil if every call succeeded; on
// any failure the result slice is nil. A cancel of the caller's ctx still
// reaches every call, an already-done ctx calls nothing, and a panic in fn
// is raised again once every call has returned, as in Map.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, errs, first := run(ctx, in, fn, false)
	if first >= 0 {
		return nil, errors.Join(errs...) // skips the nils, keeps input order
	}
	return out, nil
}

// PanicError is the value Map panics with (bonus B2) when fn panicked:
// the caller's goroutine gets the panic that happened on another one,
// with what it takes to find the bug.
type PanicError struct {
	Index int    // the element whose call panicked: in[Index]
	Value any    // the value fn panicked with
	Stack []byte // the stack of the goroutine that panicked (runtime/debug.Stack, taken in the recover)
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fanout: in[%d]: panic: %v", e.Index, e.Value)
}

// run calls fn for every element at once and waits for all the calls. With
// failFast, the first failure cancels the ctx the others got. It returns
// every error in the slot of its element, and the index of the first
// failure in time (-1 if none). If a call panicked, run panics once all the
// calls have returned.
func run[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error), failFast bool) ([]Out, []error, int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each goroutine writes only its own out[i] and errs[i]: distinct
	// elements are distinct variables, so they need no lock, and the order
	// of the input is kept whatever order the calls finish in.
	out := make([]Out, len(in))
	errs := make([]error, len(in))
	first := -1
	var once sync.Once
	var wg sync.WaitGroup
	for i, v := range in {
		wg.Add(1) // before go: Wait must not run before it
		go func() {
			defer wg.Done()
			o, err := call(ctx, i, v, fn)
			if err == nil {
				out[i] = o
				return
			}
			errs[i] = err
			once.Do(func() { first = i })
			if failFast {
				cancel()
			}
		}()
	}
	wg.Wait() // every write above happens before Wait returns
	for _, err := range errs {
		if pe, ok := err.(*PanicError); ok {
			panic(pe) // on the caller's goroutine, where it can be recovered
		}
	}
	return out, errs, first
}

// call runs fn for in[i] and turns its failure into an error that names i:
// a panic becomes a *PanicError with the stack of this goroutine, which is
// lost once the panic is raised again elsewhere.
func call[In, Out any](ctx context.Context, i int, v In, fn func(context.Context, In) (Out, error)) (o Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Index: i, Value: r, Stack: debug.Stack()}
		}
	}()
	o, err = fn(ctx, v)
	if err != nil {
		err = fmt.Errorf("fanout: in[%d]: %w", i, err)
	}
	return o, err
}
