// Package partial runs one request per input, all at once, and reports every
// outcome: a page can show the prices that came back and say which ones did
// not, instead of failing as a whole because one call went wrong.
//
// [Gather] starts one goroutine per input and returns only after every call
// has returned, so nothing it started is still running when it returns (no
// orphaned tasks). out[i] is always the outcome of inputs[i], whatever order
// the calls finish in; equal inputs are separate inputs, with a call and an
// outcome each.
//
// One failure cancels nothing: every call gets the caller's ctx (or, with
// [Options], a context derived from it), and the calls of the other inputs
// run to their end. When the caller cancels ctx, the calls still running see
// it through their ctx and Gather waits for them to return.
//
// A failed outcome's error names its input and wraps the cause with %w, so
// errors.Is and errors.As still find it. A panic in fn does not crash the
// program: it becomes that input's error, which names the input like any
// other and matches [ErrPanic].
//
// The goroutine that runs the call for input i may write out[i] without a
// lock: distinct elements of a slice are distinct variables. A recover
// catches a panic only in a deferred function on the goroutine that
// panicked, so it belongs in the goroutine that calls fn, not in Gather.
package partial

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Outcome is what the call for one input produced.
type Outcome[In, Out any] struct {
	Input In    // the input, as given
	Value Out   // what fn returned; meaningful only when Err is nil
	Err   error // nil on success; otherwise names Input and wraps the cause
}

// ErrPanic is matched (errors.Is) by the error of an input whose call
// panicked; the error's message names the input and shows the panic value.
var ErrPanic = errors.New("partial: fn panicked")

// ErrSkipped is matched by the error of an input that was not run to its end
// because the gather stopped early (bonus: [Options]).
var ErrSkipped = errors.New("partial: skipped, the gather stopped early")

// Options change when the gather stops early. The zero value never stops:
// that is [Gather].
//
// Stopping cancels the context given to the calls still running and starts
// no new call. A call that then returns an error matching context.Canceled,
// and an input whose call never started, get an error matching [ErrSkipped]
// (and not context.Canceled: the caller did not cancel). A call that
// finishes anyway keeps its own value or error. Stopping never cancels the
// caller's ctx, and Gather still waits for every call.
type Options struct {
	// FailFast stops at the first failure (bonus B1), whatever MaxFailures
	// says.
	FailFast bool
	// MaxFailures, if above 0, stops once more than MaxFailures inputs have
	// failed (bonus B2). Skipped inputs do not count; panics do.
	MaxFailures int
}

// Gather calls fn once for each input, all at the same time, each on its own
// goroutine with the caller's ctx, and returns one outcome per input in input
// order, once every call has returned. A failure or a panic cancels nothing.
// If ctx is cancelled, the calls see it through their ctx; Gather still waits
// for each of them (fn is expected to honour ctx), and keeps what each call
// returned. No inputs means no calls and an empty result.
//
// The error of a failed input wraps the cause with %w and names the input,
// for example fmt.Errorf("input %d (%v): %w", i, in, err).
func Gather[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error)) []Outcome[In, Out] {
	return GatherWith(ctx, inputs, fn, Options{})
}

// GatherWith is [Gather] with options to stop early (bonus B1, B2).
func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	tolerate := int64(len(inputs)) // more failures than inputs never happen: never stop
	if opt.FailFast {
		tolerate = 0
	} else if opt.MaxFailures > 0 {
		tolerate = int64(opt.MaxFailures)
	}
	// The cause of the cancel when this gather stops early: a fresh error per
	// gather. A gather run inside another's fn sees that one's stop through
	// its ctx with that one's cause: a cancel by its caller, not a stop.
	errStopped := errors.New("partial: the gather stopped early")
	inner, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	stopped := func() bool { return context.Cause(inner) == errStopped }

	// Every goroutine writes only its own element: distinct elements are
	// distinct variables, so there is no lock, and wg.Wait publishes them.
	out := make([]Outcome[In, Out], len(inputs))
	var failures atomic.Int64
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &out[i]
			o.Input = in
			if stopped() {
				o.Err = inputError(i, in, ErrSkipped)
				return
			}
			v, err := call(inner, in, fn)
			if err == nil {
				o.Value = v
				return
			}
			if stopped() && errors.Is(err, context.Canceled) {
				o.Err = inputError(i, in, ErrSkipped)
				return
			}
			o.Err = inputError(i, in, err)
			if failures.Add(1) > tolerate {
				stop(errStopped)
			}
		}()
	}
	wg.Wait()
	return out
}

// call runs fn and turns a panic into an error. recover works only in a
// deferred function on the goroutine that panics, so it has to be here, not
// in Gather.
func call[In, Out any](ctx context.Context, in In, fn func(context.Context, In) (Out, error)) (v Out, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero Out
			v, err = zero, fmt.Errorf("%w: %v", ErrPanic, r)
		}
	}()
	return fn(ctx, in)
}

func inputError[In any](i int, in In, err error) error {
	return fmt.Errorf("input %d (%v): %w", i, in, err)
}

// Split separates the successes from the failures, both in input order.
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

// Join returns an error that matches (errors.Is, errors.As) the error of
// every failed outcome and lists them all, in input order; nil if none
// failed.
func Join[In, Out any](outcomes []Outcome[In, Out]) error {
	errs := make([]error, 0, len(outcomes))
	for _, o := range outcomes {
		errs = append(errs, o.Err)
	}
	return errors.Join(errs...) // drops the nils; nil if all are nil
}
