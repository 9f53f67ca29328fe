// Library: github.com/cenkalti/backoff/v4 v4.3.0
// Fails: R1 R2 R3 R4 R5 R6 R7 B1 B2
// Why: it computes each pause from the previous one truncated to whole ns (R1); it strips the Permanent mark off the error it returns (R3); a cancel returns ctx.Err() alone, without the last error (R4), even one during the final attempt, where the attempts have run out and the error must match ErrExhausted (R2); it retries a context error that op returns while Do's ctx is live (R5); its jitter draws from math/rand, cannot be injected, spreads over d·(1±J) plus 1ns, and MaxInterval caps the interval before the jitter (R6); it returns op's value along with the error (R7); its MaxElapsedTime check adds elapsed + pause, which overflows for huge pauses (B1); it has no Retry-After (B2).

// Package retry is the kata's API on github.com/cenkalti/backoff/v4:
// ExponentialBackOff for the schedule, WithMaxRetries for the attempts,
// WithContext for the cancel, and RetryNotifyWithTimerAndData, which takes
// a Timer, so the pauses can wait on the injected clock. The glue does
// what the library cannot be told: the Retryable filter becomes
// backoff.Permanent, and exhaustion is marked with ErrExhausted.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/cenkalti/backoff/v4"
)

// Policy is the kata's policy; see the reference for the contract.
type Policy struct {
	MaxAttempts int
	BaseDelay   time.Duration
	Multiplier  float64
	MaxDelay    time.Duration
	Jitter      float64
	Rand        func() float64 // backoff/v4 draws from math/rand itself: not used
	Retryable   func(error) bool
	BeforeSleep func(attempt int, err error, pause time.Duration)
	MaxElapsed  time.Duration
}

// ErrExhausted marks running out of attempts or of MaxElapsed.
var ErrExhausted = errors.New("retry: attempts exhausted")

// Permanent is backoff.Permanent.
func Permanent(err error) error { return backoff.Permanent(err) }

// RetryAfter keeps the kata's API; backoff/v4 has no way to act on it.
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

// clockTimer is backoff.Timer on the injected clock: a fresh timer for
// each pause (never Reset a mock timer).
type clockTimer struct {
	clk clock.Clock
	t   *clock.Timer
}

func (c *clockTimer) Start(d time.Duration) {
	c.Stop()
	c.t = c.clk.Timer(d)
}

func (c *clockTimer) Stop() {
	if c.t != nil {
		c.t.Stop()
	}
}

func (c *clockTimer) C() <-chan time.Time { return c.t.C }

// Do runs op with backoff/v4's retry loop.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	eb := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.BaseDelay),
		backoff.WithMultiplier(multiplier(p.Multiplier)),
		backoff.WithMaxInterval(maxDelay(p.MaxDelay)),
		backoff.WithRandomizationFactor(min(max(p.Jitter, 0), 1)),
		backoff.WithMaxElapsedTime(p.MaxElapsed), // 0: none (the default would be 15 min)
		backoff.WithClockProvider(clk),
	)
	b := backoff.WithContext(backoff.WithMaxRetries(eb, uint64(max(p.MaxAttempts, 1)-1)), ctx)
	attempt, permanent := 0, false
	wrapped := func() (T, error) {
		attempt++
		v, err := op(ctx)
		if err != nil && p.Retryable != nil && !p.Retryable(err) {
			permanent = true
			return v, backoff.Permanent(err)
		}
		var pe *backoff.PermanentError
		permanent = errors.As(err, &pe)
		return v, err
	}
	notify := func(err error, pause time.Duration) {
		if p.BeforeSleep != nil {
			p.BeforeSleep(attempt, err, pause)
		}
	}
	v, err := backoff.RetryNotifyWithTimerAndData(wrapped, b, notify, &clockTimer{clk: clk})
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
