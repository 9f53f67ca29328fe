// Library: github.com/cenkalti/backoff/v5 v5.0.3
// Fails: R1 R2 R3 R4 R5 R6 R7 B1 B2
// Why: v5 waits on time.NewTimer and reads time.Now, with no option to inject a clock, so every pause runs on the real clock and no schedule can be tested on fake time (R1 R2 R6 R7 B1 B2); besides, it strips the Permanent mark (R3), returns context.Cause(ctx) alone after a cancel (R4) and retries a context error that op returns while ctx is live (R5).

// Package retry is the kata's API on github.com/cenkalti/backoff/v5:
// Retry with WithBackOff, WithMaxTries, WithMaxElapsedTime and WithNotify.
// v5 takes the ctx itself and knows Retry-After, but its timer option is
// unexported and it reads time.Now: it cannot run on the injected clock.
// The glue does what the library cannot be told: the Retryable filter
// becomes backoff.Permanent, and exhaustion is marked with ErrExhausted.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/cenkalti/backoff/v5"
)

// Policy is the kata's policy; see the reference for the contract.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	Multiplier  float64
	MaxDelay    time.Duration
	Jitter      float64
	Rand        func() float64 // backoff/v5 draws from math/rand/v2 itself: not used
	Retryable   func(error) bool
	BeforeSleep func(attempt int, err error, pause time.Duration)
	MaxElapsed  time.Duration
}

// ErrExhausted marks running out of attempts or of MaxElapsed.
var ErrExhausted = errors.New("retry: attempts exhausted")

// Permanent is backoff.Permanent.
func Permanent(err error) error { return backoff.Permanent(err) }

// RetryAfter marks err for a pause of d; Do hands it to v5 as a
// *backoff.RetryAfterError.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{d, err}
}

type retryAfterError struct {
	d   time.Duration
	err error
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// Do runs op with backoff/v5's Retry. clk is not used: v5 cannot take it.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval = p.BaseDelay
	eb.Multiplier = multiplier(p.Multiplier)
	eb.MaxInterval = maxDelay(p.MaxDelay)
	eb.RandomizationFactor = min(max(p.Jitter, 0), 1)
	attempt, permanent := 0, false
	wrapped := func() (T, error) {
		attempt++
		v, err := op(ctx)
		var ra *retryAfterError
		switch {
		case err == nil:
		case errors.As(err, &ra):
			return v, &backoff.RetryAfterError{Duration: ra.d}
		case p.Retryable != nil && !p.Retryable(err):
			permanent = true
			return v, backoff.Permanent(err)
		default:
			var pe *backoff.PermanentError
			permanent = errors.As(err, &pe)
		}
		return v, err
	}
	v, err := backoff.Retry(ctx, wrapped,
		backoff.WithBackOff(eb),
		backoff.WithMaxTries(uint(max(p.MaxAttempts, 1))),
		backoff.WithMaxElapsedTime(p.MaxElapsed), // 0: none (the default would be 15 min)
		backoff.WithNotify(func(err error, pause time.Duration) {
			if p.BeforeSleep != nil {
				p.BeforeSleep(attempt, err, pause)
			}
		}))
	if err != nil && !permanent && ctx.Err() == nil {
		err = fmt.Errorf("%w after %d attempts: %w", ErrExhausted, attempt, err)
	}
	return v, err
}

func multiplier(m float64) float64 {
	if m < 1 {
		return 2
	}
	return m
}

func maxDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return math.MaxInt64
	}
	return d
}
