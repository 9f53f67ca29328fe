// Package retry calls an operation again when it fails with a transient
// error, pausing longer after each failure (exponential backoff with jitter
// and a cap), and gives up at once when the caller cancels.
//
// Do runs every attempt on the calling goroutine, one after another, and
// starts no goroutines of its own: when Do returns, nothing of it is still
// running. All waiting happens on the injected clock.Clock, never on package
// time. A pause waits for a fresh timer and for ctx.Done() together, so a
// cancel ends the pause at once; Do then returns without another attempt.
//
// Errors fall into two groups. Never retried: errors marked with [Permanent],
// errors matching context.Canceled or context.DeadlineExceeded (someone gave
// up; Do cannot tell whose context it was), and errors that
// [Policy.Retryable] rejects. Do returns those as they are, after one
// attempt. Every other error is retried until [Policy.MaxAttempts] attempts
// have been made; then Do returns an error that matches both [ErrExhausted]
// and the last error.
//
// Every failure returns the zero value of T, whatever the operation returned
// alongside its error.
//
// With a mock clock from github.com/benbjohnson/clock, create a fresh
// clk.Timer for each pause and Stop it when done (never Reset a mock timer:
// Reset on a fired, undrained timer blocks the next Add), and select on the
// timer's channel and ctx.Done().
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

// Policy says how often and how long to wait between attempts. The zero
// value makes a single attempt. A Policy may be shared by concurrent calls
// of Do if its functions are safe for concurrent use.
//
// The pause after the n-th failed attempt (n = 1, 2, …, counted from the
// start or from the last [RetryAfter] pause) is computed like this:
//
//	L     = MaxDelay, or the largest time.Duration when MaxDelay is 0
//	d     = BaseDelay·Multiplierⁿ⁻¹, saturating at L (never overflows)
//	pause = time.Duration(float64(d)·(1 − J + 2J·r)), truncated to whole ns
//	pause = min(pause, L), and at least 1ns when BaseDelay > 0
//
// where J is Jitter and r a fresh value from Rand. With J = 0 the pause is
// exactly d and Rand is not called.
type Policy struct {
	// MaxAttempts is the number of attempts in total, including the first;
	// values below 1 mean 1.
	MaxAttempts int
	// BaseDelay is the pause after the first failed attempt, before jitter.
	// 0 retries without pausing.
	BaseDelay time.Duration
	// Multiplier is the growth of the pause per failed attempt; values
	// below 1 (the zero value included) mean 2.
	Multiplier float64
	// MaxDelay caps every pause, after jitter; 0 means no cap.
	MaxDelay time.Duration
	// Jitter is J in the formula, clamped to [0, 1]; 0 turns jitter off.
	Jitter float64
	// Rand returns r in [0, 1); nil means math/rand/v2's Float64.
	Rand func() float64
	// Retryable reports whether an error is worth another attempt. It is
	// not asked about the errors that are never retried, nor about
	// [RetryAfter] errors, which are always retried. nil means yes.
	Retryable func(error) bool
	// BeforeSleep, if not nil, is called on Do's goroutine before each
	// pause: attempt is the 1-based attempt that just failed, err its
	// error, pause the wait that follows. It is not called when no pause
	// follows: success, an error that is not retried, the last attempt, or
	// a pause that MaxElapsed does not allow.
	BeforeSleep func(attempt int, err error, pause time.Duration)
	// MaxElapsed is a budget on the clock since Do started; 0 means none.
	// When the time elapsed plus the next pause would exceed it, Do gives
	// up at once, without that pause, as if attempts were exhausted.
	MaxElapsed time.Duration
}

// ErrExhausted is matched (errors.Is) by the error Do returns when it ran out
// of attempts or of MaxElapsed; that error also matches the last error.
var ErrExhausted = errors.New("retry: attempts exhausted")

// Permanent marks err as not worth retrying: Do returns it after the attempt
// that produced it. errors.Is and errors.As see through the mark, and it
// still works when the marked error is wrapped again. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// RetryAfter marks err as retryable after exactly d, as a server's
// Retry-After header asks: the next pause is d, without jitter and not
// capped by MaxDelay (MaxElapsed still applies), and the backoff restarts,
// so the pause after the next plain failure is BaseDelay again (with
// jitter). errors.Is and errors.As see through the mark. The mark never
// overrides an error that is never retried: RetryAfter(d, Permanent(err)),
// Permanent(RetryAfter(d, err)) and RetryAfter(d, context.Canceled) are
// returned as they are, without a pause. RetryAfter(d, nil) is nil.
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

// Do calls op until it succeeds, returns an error that is not retried, or
// the attempts or MaxElapsed run out, pausing between attempts as p says.
// Each attempt gets ctx as it is; the first attempt is made even if ctx is
// already done, and op is expected to honour ctx.
//
// If ctx is done during a pause, Do returns at once, without another
// attempt, with an error that matches both ctx.Err() and the last error
// of op. On every failure the value returned is the zero value of T.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	var zero T
	start := clk.Now()
	failures := 0 // since the start or the last Retry-After: the exponent of the backoff
	for attempt := 1; ; attempt++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		if !p.retryable(err) {
			return zero, err
		}
		if attempt >= p.MaxAttempts {
			return zero, fmt.Errorf("%w after %d attempts: %w", ErrExhausted, attempt, err)
		}
		var pause time.Duration
		var ra *retryAfterError
		if errors.As(err, &ra) {
			pause, failures = max(ra.d, 0), 0
		} else {
			failures++
			pause = p.pause(failures)
		}
		// Compared as a difference: elapsed + pause can overflow.
		if p.MaxElapsed > 0 && pause > p.MaxElapsed-clk.Since(start) {
			return zero, fmt.Errorf("%w: the %v pause after attempt %d would pass MaxElapsed %v: %w",
				ErrExhausted, pause, attempt, p.MaxElapsed, err)
		}
		if p.BeforeSleep != nil {
			p.BeforeSleep(attempt, err, pause)
		}
		if cerr := sleep(ctx, clk, pause); cerr != nil {
			return zero, fmt.Errorf("retry: %w in the pause after attempt %d: %w", cerr, attempt, err)
		}
	}
}

// sleep waits d on clk, or less if ctx is done first. A fresh timer per
// pause, stopped on the way out, so nothing stays registered on the clock.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p Policy) retryable(err error) bool {
	var perm *permanentError
	if errors.As(err, &perm) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ra *retryAfterError
	return p.Retryable == nil || errors.As(err, &ra) || p.Retryable(err)
}

// pause is the wait after the n-th failure (n >= 1) of the backoff.
func (p Policy) pause(n int) time.Duration {
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
	// In float64 a huge d cannot wrap around (at worst it is +Inf); it is
	// clamped to the limit before it ever becomes a Duration.
	d := min(float64(p.BaseDelay)*math.Pow(m, float64(n-1)), float64(limit))
	if j := min(max(p.Jitter, 0), 1); j > 0 {
		r := rand.Float64
		if p.Rand != nil {
			r = p.Rand
		}
		d *= 1 - j + 2*j*r()
	}
	// float64(limit) may round up past the largest Duration: compare first.
	if d >= float64(limit) {
		return limit
	}
	return max(time.Duration(d), 1)
}
