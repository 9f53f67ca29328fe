// Design: a gather object whose state (outcomes by index, failure count, stopped) sits behind one
// mutex, with sync.WaitGroup.Go for the calls; errors name the input in their own words.
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

type gather[In, Out any] struct {
	opt    Options
	caller context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	done     map[int]Outcome[In, Out]
	failures int
	stopped  bool
}

func (g *gather[In, Out]) isStopped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopped
}

func (g *gather[In, Out]) record(i int, in In, v Out, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == nil:
		g.done[i] = Outcome[In, Out]{Input: in, Value: v}
	case g.stopped && errors.Is(err, context.Canceled):
		g.done[i] = Outcome[In, Out]{Input: in, Err: fmt.Errorf("price of %v not fetched: %w", in, ErrSkipped)}
	default:
		g.done[i] = Outcome[In, Out]{Input: in, Err: fmt.Errorf("price of %v: %w", in, err)}
		g.failures++
		limit := g.opt.MaxFailures
		if g.opt.FailFast {
			limit = 0
		}
		// A stop after the caller's cancel cancels nothing: the calls were
		// cut short by the caller, and keep context.Canceled.
		if !g.stopped && (g.opt.FailFast || limit > 0) && g.failures > limit && g.caller.Err() == nil {
			g.stopped = true
			g.cancel()
		}
	}
}

func GatherWith[In, Out any](ctx context.Context, inputs []In, fn func(context.Context, In) (Out, error), opt Options) []Outcome[In, Out] {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &gather[In, Out]{opt: opt, caller: ctx, cancel: cancel, done: make(map[int]Outcome[In, Out], len(inputs))}
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Go(func() {
			if g.isStopped() {
				g.mu.Lock()
				g.done[i] = Outcome[In, Out]{Input: in, Err: fmt.Errorf("price of %v not fetched: %w", in, ErrSkipped)}
				g.mu.Unlock()
				return
			}
			var (
				v   Out
				err error
			)
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panic: %v: %w", r, ErrPanic)
					}
				}()
				v, err = fn(inner, in)
			}()
			g.record(i, in, v, err)
		})
	}
	wg.Wait()
	out := make([]Outcome[In, Out], len(inputs))
	for i := range out {
		out[i] = g.done[i]
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
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d inputs failed:\n%w", len(errs), len(outcomes), errors.Join(errs...))
}
