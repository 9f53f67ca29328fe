// Design: divide and conquer: a gather of several inputs starts a goroutine for each half of them
// and waits for both on a channel, down to one input per goroutine, which calls fn (a lone input gets
// a goroutine too, never the caller's); every goroutine writes only its own part of the result. The
// stop is a context cancelled with a cause.
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

// halves holds what every part of one gather shares.
type halves[In, Out any] struct {
	ctx      context.Context
	stop     context.CancelCauseFunc
	cause    error // this gather's own stop: one per gather, so a gather nested in fn tells its caller's cancel from it
	fn       func(context.Context, In) (Out, error)
	tolerate int64 // < 0: never stop
	failures atomic.Int64
}

func (g *halves[In, Out]) stopped() bool { return context.Cause(g.ctx) == g.cause }

// gather fills out[k] for inputs[k], which start at index base of the whole.
func (g *halves[In, Out]) gather(base int, inputs []In, out []Outcome[In, Out]) {
	if len(inputs) == 1 {
		g.one(base, inputs[0], &out[0])
		return
	}
	mid := len(inputs) / 2
	done := make(chan struct{}, 2)
	go func() { g.gather(base, inputs[:mid], out[:mid]); done <- struct{}{} }()
	go func() { g.gather(base+mid, inputs[mid:], out[mid:]); done <- struct{}{} }()
	<-done
	<-done
}

func (g *halves[In, Out]) one(i int, in In, o *Outcome[In, Out]) {
	o.Input = in
	if g.stopped() {
		o.Err = fmt.Errorf("input %d (%v): %w", i, in, ErrSkipped)
		return
	}
	v, err := func() (v Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: %v", ErrPanic, r)
			}
		}()
		return g.fn(g.ctx, in)
	}()
	switch {
	case err == nil:
		o.Value = v
	case g.stopped() && errors.Is(err, context.Canceled):
		o.Err = fmt.Errorf("input %d (%v): %w", i, in, ErrSkipped)
	default:
		o.Err = fmt.Errorf("input %d (%v): %w", i, in, err)
		if n := g.failures.Add(1); g.tolerate >= 0 && n > g.tolerate {
			g.stop(g.cause)
		}
	}
}

func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	inner, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	g := &halves[In, Out]{ctx: inner, stop: stop, cause: errors.New("partial: too many failures"), fn: fn, tolerate: -1}
	switch {
	case opt.FailFast:
		g.tolerate = 0
	case opt.MaxFailures > 0:
		g.tolerate = int64(opt.MaxFailures)
	}
	out := make([]Outcome[In, Out], len(inputs))
	switch len(inputs) {
	case 0:
	case 1: // a lone input's call gets a goroutine of its own too, never the caller's
		done := make(chan struct{})
		go func() { defer close(done); g.one(0, inputs[0], &out[0]) }()
		<-done
	default:
		g.gather(0, inputs, out)
	}
	return out
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
