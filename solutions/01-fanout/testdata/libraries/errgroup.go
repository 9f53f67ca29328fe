// Library: golang.org/x/sync v0.22.0
// Fails: R5 B1 B2
// Why: errgroup.WithContext calls fn even when the caller's ctx is already done (R5); MapAll, on a plain errgroup.Group so that a failure cancels nothing, hands the calls the caller's ctx, which nothing cancels when MapAll returns (B1); and since v0.16.0 errgroup leaves a panic in fn alone, so the panic ends the whole process instead of reaching the caller (B2).

// Package fanout is the kata's API on golang.org/x/sync/errgroup, written
// the way most people write it: a group with a context, one Go per
// element, each writing its own slot, and Wait.
package fanout

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Map is errgroup.WithContext with an index-aligned result slice. There is
// no up-front ctx.Err() check: errgroup has none either.
func Map[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	g, ctx := errgroup.WithContext(ctx)
	out := make([]Out, len(in))
	for i, v := range in {
		g.Go(func() error {
			o, err := fn(ctx, v)
			if err != nil {
				return fmt.Errorf("fanout: in[%d]: %w", i, err)
			}
			out[i] = o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// MapAll is a plain errgroup.Group (no context, so a failure cancels
// nothing) that keeps every error in its element's slot.
func MapAll[In, Out any](ctx context.Context, in []In, fn func(context.Context, In) (Out, error)) ([]Out, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var g errgroup.Group
	out := make([]Out, len(in))
	errs := make([]error, len(in))
	for i, v := range in {
		g.Go(func() error {
			o, err := fn(ctx, v)
			if err != nil {
				errs[i] = fmt.Errorf("fanout: in[%d]: %w", i, err)
				return nil
			}
			out[i] = o
			return nil
		})
	}
	_ = g.Wait() // the errors are in errs
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// PanicError is part of the kata's API; errgroup never produces one.
type PanicError struct {
	Index int
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("fanout: in[%d]: panic: %v", e.Index, e.Value)
}
