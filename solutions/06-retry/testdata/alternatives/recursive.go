// Design: recursion instead of a loop: each attempt is one call of try,
// which pauses and calls itself for the next; the pause is a clk.AfterFunc
// that closes a channel, not a clk.Timer.

package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/benbjohnson/clock"
)

// Policy says how often and how long to wait between attempts.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	Multiplier  float64
	MaxDelay    time.Duration
	Jitter      float64
	Rand        func() float64
	Retryable   func(error) bool
	BeforeSleep func(attempt int, err error, pause time.Duration)
	MaxElapsed  time.Duration
}

// ErrExhausted is matched by the error Do returns when it ran out of
// attempts or of MaxElapsed.
var ErrExhausted = errors.New("retry: out of attempts")

type permanent struct{ error }

func (e permanent) Unwrap() error { return e.error }

// Permanent marks err as not worth retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

type retryAfter struct {
	error
	d time.Duration
}

func (e retryAfter) Unwrap() error { return e.error }

// RetryAfter marks err as retryable after exactly d. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return retryAfter{err, d}
}

// run is one call of Do: what every attempt needs.
type run[T any] struct {
	ctx   context.Context
	clk   clock.Clock
	p     Policy
	op    func(context.Context) (T, error)
	start time.Time
}

// Do calls op until it succeeds, returns an error that is not retried, or
// runs out of attempts or of MaxElapsed.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	r := run[T]{ctx: ctx, clk: clk, p: p, op: op, start: clk.Now()}
	return r.try(1, 1)
}

// try makes attempt n; step is the exponent of the backoff for its pause
// (1 after the start or a Retry-After).
func (r run[T]) try(n, step int) (T, error) {
	var zero T
	v, err := r.op(r.ctx)
	if err == nil {
		return v, nil
	}
	var pe permanent
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return zero, err
	}
	var ra retryAfter
	hinted := errors.As(err, &ra)
	if !hinted && r.p.Retryable != nil && !r.p.Retryable(err) {
		return zero, err
	}
	if n >= max(r.p.MaxAttempts, 1) {
		return zero, fmt.Errorf("%w (%d attempts), last: %w", ErrExhausted, n, err)
	}
	pause, next := r.backoff(step), step+1
	if hinted {
		pause, next = max(ra.d, 0), 1
	}
	if r.p.MaxElapsed > 0 && pause > r.p.MaxElapsed-r.clk.Since(r.start) {
		return zero, fmt.Errorf("%w (no time for a %v pause), last: %w", ErrExhausted, pause, err)
	}
	if r.p.BeforeSleep != nil {
		r.p.BeforeSleep(n, err, pause)
	}
	if pause > 0 { // no pause, no wait: an AfterFunc of 0 fires only when the clock next moves
		woke := make(chan struct{})
		t := r.clk.AfterFunc(pause, func() { close(woke) })
		select {
		case <-woke:
		case <-r.ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("%w while waiting to retry: %w", r.ctx.Err(), err)
		}
	}
	return r.try(n+1, next)
}

// backoff is the pause after the step-th failure of the backoff.
func (r run[T]) backoff(step int) time.Duration {
	p := r.p
	if p.BaseDelay <= 0 {
		return 0
	}
	limit := time.Duration(math.MaxInt64)
	if p.MaxDelay > 0 {
		limit = p.MaxDelay
	}
	m := p.Multiplier
	if m < 1 {
		m = 2
	}
	d := math.Min(float64(p.BaseDelay)*math.Pow(m, float64(step-1)), float64(limit))
	if j := math.Min(math.Max(p.Jitter, 0), 1); j > 0 {
		rnd := rand.Float64
		if p.Rand != nil {
			rnd = p.Rand
		}
		d *= 1 - j + 2*j*rnd()
	}
	if d >= float64(limit) {
		return limit
	}
	return max(time.Duration(d), 1)
}
