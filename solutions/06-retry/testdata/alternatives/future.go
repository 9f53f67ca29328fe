// Design: a backoff object (Next, Reset) that owns the arithmetic, and each
// pause a future: a goroutine waits on the clock or ctx and delivers the
// outcome on a channel of its own, which Do receives.

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
var ErrExhausted = errors.New("retry: gave up")

type permanentErr struct{ err error }

func (e *permanentErr) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentErr) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentErr{err}
}

type afterErr struct {
	d   time.Duration
	err error
}

func (e *afterErr) Error() string { return fmt.Sprintf("%v (retry after %v)", e.err, e.d) }
func (e *afterErr) Unwrap() error { return e.err }

// RetryAfter marks err as retryable after exactly d. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &afterErr{d, err}
}

// backoff hands out the pauses of one call of Do.
type backoff struct {
	p     Policy
	cap   time.Duration
	limit float64 // cap in float64, which may round up past the largest Duration
	next  float64 // the next pause before jitter, already capped
}

func newBackoff(p Policy) *backoff {
	b := &backoff{p: p, cap: math.MaxInt64}
	if p.MaxDelay > 0 {
		b.cap = p.MaxDelay
	}
	b.limit = float64(b.cap)
	b.Reset()
	return b
}

// Reset starts again from BaseDelay.
func (b *backoff) Reset() { b.next = math.Min(float64(b.p.BaseDelay), b.limit) }

// Next is the pause after the next failure.
func (b *backoff) Next() time.Duration {
	if b.p.BaseDelay <= 0 {
		return 0
	}
	d := b.next
	m := b.p.Multiplier
	if m < 1 {
		m = 2
	}
	b.next = math.Min(b.next*m, b.limit)
	if j := math.Min(math.Max(b.p.Jitter, 0), 1); j > 0 {
		r := rand.Float64
		if b.p.Rand != nil {
			r = b.p.Rand
		}
		d *= 1 - j + 2*j*r()
	}
	if d >= b.limit {
		return b.cap
	}
	return max(time.Duration(d), 1)
}

// wait is the future of one pause: it delivers nil when d has passed on
// clk, or ctx.Err() if ctx ends first. Its goroutine ends either way.
func wait(ctx context.Context, clk clock.Clock, d time.Duration) <-chan error {
	out := make(chan error, 1)
	go func() {
		t := clk.Timer(d)
		defer t.Stop()
		select {
		case <-t.C:
			out <- nil
		case <-ctx.Done():
			out <- ctx.Err()
		}
	}()
	return out
}

// Do calls op until it succeeds, returns an error that is not retried, or
// runs out of attempts or of MaxElapsed.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	var zero T
	start := clk.Now()
	b := newBackoff(p)
	attempts := max(p.MaxAttempts, 1)
	for n := 1; ; n++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		var perm *permanentErr
		var ra *afterErr
		switch {
		case errors.As(err, &perm), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return zero, err
		case errors.As(err, &ra):
		case p.Retryable != nil && !p.Retryable(err):
			return zero, err
		}
		if n == attempts {
			return zero, fmt.Errorf("%w: %d of %d attempts failed: %w", ErrExhausted, n, attempts, err)
		}
		var pause time.Duration
		if ra != nil {
			pause = max(ra.d, 0)
			b.Reset()
		} else {
			pause = b.Next()
		}
		if p.MaxElapsed > 0 && clk.Since(start) > p.MaxElapsed-pause {
			return zero, fmt.Errorf("%w: a %v pause would pass MaxElapsed: %w", ErrExhausted, pause, err)
		}
		if p.BeforeSleep != nil {
			p.BeforeSleep(n, err, pause)
		}
		if werr := <-wait(ctx, clk, pause); werr != nil {
			return zero, fmt.Errorf("retry: stopped after attempt %d: %w (last error: %w)", n, werr, err)
		}
	}
}
