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
	panic("TODO: wrap err in a type of your own that Do can find with errors.As")
}

// RetryAfter marks err as retryable after exactly d, as a server's
// Retry-After header asks: the next pause is d, without jitter and not
// capped by MaxDelay (MaxElapsed still applies), and the backoff restarts,
// so the pause after the next plain failure is BaseDelay again (with
// jitter). errors.Is and errors.As see through the mark. The mark never
// overrides an error that is never retried: RetryAfter(d, Permanent(err)),
// Permanent(RetryAfter(d, err)) and RetryAfter(d, context.Canceled) are
// returned as they are, without a pause. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	panic("TODO: bonus B2: wrap err together with d")
}

// Do calls op until it succeeds, returns an error that is not retried, or
// the attempts or MaxElapsed run out, pausing between attempts as p says.
// Each attempt gets ctx as it is; the first attempt is made even if ctx is
// already done, and op is expected to honour ctx.
//
// If ctx is done during a pause, Do returns at once, without another
// attempt, with an error that matches both ctx.Err() and the last error
// of op. On every failure the value returned is the zero value of T.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	panic("TODO: call op, and pause on clk between failed attempts")
}
