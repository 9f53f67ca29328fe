// Design: an explicit state machine (attempt, decide, pause) over a backoff
// that grows step by step in float64; exhaustion is an error type of its own.

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
var ErrExhausted = errors.New("retry: attempts exhausted")

type permanent struct{ cause error }

func (e permanent) Error() string { return "permanent: " + e.cause.Error() }
func (e permanent) Unwrap() error { return e.cause }

// Permanent marks err as not worth retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

type retryAfter struct {
	after time.Duration
	cause error
}

func (e retryAfter) Error() string {
	return fmt.Sprintf("%v (retry after %v)", e.cause, e.after)
}
func (e retryAfter) Unwrap() error { return e.cause }

// RetryAfter marks err as retryable after exactly d. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return retryAfter{d, err}
}

// exhausted is the error of a retry that ran out of attempts or time: it
// is ErrExhausted, and it unwraps to the last error.
type exhausted struct {
	attempts int
	last     error
}

func (e *exhausted) Error() string {
	return fmt.Sprintf("retry: gave up after %d attempts: %v", e.attempts, e.last)
}
func (e *exhausted) Is(target error) bool { return target == ErrExhausted }
func (e *exhausted) Unwrap() error        { return e.last }

type state int

const (
	attempting state = iota
	deciding
	pausing
)

// backoff is the growing part of the pause.
type backoff struct {
	p     Policy
	limit float64
	next  float64 // d for the next plain failure, before jitter
}

func newBackoff(p Policy) *backoff {
	limit := float64(math.MaxInt64)
	if p.MaxDelay > 0 {
		limit = float64(p.MaxDelay)
	}
	b := &backoff{p: p, limit: limit}
	b.reset()
	return b
}

func (b *backoff) reset() { b.next = min(float64(b.p.BaseDelay), b.limit) }

// pause returns the pause for this failure and grows d for the next one.
func (b *backoff) pause() time.Duration {
	if b.p.BaseDelay <= 0 {
		return 0
	}
	d := b.next
	m := b.p.Multiplier
	if m < 1 {
		m = 2
	}
	b.next = min(b.next*m, b.limit)
	j := math.Max(0, math.Min(1, b.p.Jitter))
	if j > 0 {
		r := b.p.Rand
		if r == nil {
			r = rand.Float64
		}
		d = d * (1 - j + 2*j*r())
	}
	if d >= b.limit {
		if b.p.MaxDelay > 0 {
			return b.p.MaxDelay
		}
		return math.MaxInt64
	}
	if d < 1 {
		return 1
	}
	return time.Duration(d)
}

// Do calls op until it succeeds, returns an error that is not retried, or
// runs out of attempts or of MaxElapsed, pausing on clk between attempts.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	var zero T
	began := clk.Now()
	b := newBackoff(p)
	attempts := max(p.MaxAttempts, 1)
	var (
		n     int
		v     T
		err   error
		pause time.Duration
	)
	st := attempting
	for {
		switch st {
		case attempting:
			n++
			v, err = op(ctx)
			st = deciding
		case deciding:
			if err == nil {
				return v, nil
			}
			var perm permanent
			var ra retryAfter
			isRA := errors.As(err, &ra)
			switch {
			case errors.As(err, &perm), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
				return zero, err
			case !isRA && p.Retryable != nil && !p.Retryable(err):
				return zero, err
			case n >= attempts:
				return zero, &exhausted{n, err}
			}
			if isRA {
				pause = max(ra.after, 0)
				b.reset()
			} else {
				pause = b.pause()
			}
			if p.MaxElapsed > 0 && pause > p.MaxElapsed-clk.Since(began) {
				return zero, &exhausted{n, err}
			}
			st = pausing
		case pausing:
			if p.BeforeSleep != nil {
				p.BeforeSleep(n, err, pause)
			}
			t := clk.Timer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return zero, errors.Join(ctx.Err(), err)
			case <-t.C:
				t.Stop()
			}
			st = attempting
		}
	}
}
