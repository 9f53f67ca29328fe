// Design: failures are sorted by a classify step into a verdict (give up, back off, wait exactly), and the pauses come from a resettable schedule object, with value-type error marks and the loop owning only the attempt count and the budget (B1 and B2 included).
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
	return permanent{err}
}

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// RetryAfter marks err as retryable after exactly d, as a server's
// Retry-After header asks: the next pause is d, without jitter and not
// capped by MaxDelay (MaxElapsed still applies), and the backoff restarts,
// so the pause after the next plain failure is BaseDelay again (with
// jitter). errors.Is and errors.As see through the mark. RetryAfter(d, nil)
// is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return retryAfter{err, d}
}

type retryAfter struct {
	error
	d time.Duration
}

func (r retryAfter) Unwrap() error { return r.error }

// verdict is what Do does after a failed attempt.
type verdict int

const (
	giveUp      verdict = iota // return the error as it is
	backOff                    // pause by the schedule
	waitExactly                // pause exactly the Retry-After, then restart the schedule
)

// classify decides what a failure is worth, and the Retry-After if any.
func (p *Policy) classify(err error) (verdict, time.Duration) {
	if errors.As(err, new(permanent)) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return giveUp, 0
	}
	var ra retryAfter
	if errors.As(err, &ra) {
		return waitExactly, max(ra.d, 0)
	}
	if p.Retryable != nil && !p.Retryable(err) {
		return giveUp, 0
	}
	return backOff, 0
}

// schedule hands out the backoff pauses one by one; reset starts it over.
type schedule struct {
	base, limit time.Duration
	mult, j     float64
	rand        func() float64
	n           int // failures since the start or the last reset
}

func newSchedule(p *Policy) *schedule {
	s := &schedule{base: p.BaseDelay, limit: time.Duration(math.MaxInt64), mult: p.Multiplier, j: min(max(p.Jitter, 0), 1), rand: p.Rand}
	if p.MaxDelay > 0 {
		s.limit = p.MaxDelay
	}
	if s.mult < 1 {
		s.mult = 2
	}
	if s.rand == nil {
		s.rand = rand.Float64
	}
	return s
}

func (s *schedule) reset() { s.n = 0 }

// next is the pause after one more failure.
func (s *schedule) next() time.Duration {
	s.n++
	if s.base <= 0 {
		return 0
	}
	lim := float64(s.limit)
	// Saturate in float64, where growth ends at +Inf instead of wrapping.
	d := math.Min(float64(s.base)*math.Pow(s.mult, float64(s.n-1)), lim)
	if s.j > 0 {
		d *= 1 - s.j + 2*s.j*s.rand()
	}
	if d >= lim { // float64(MaxInt64) rounds up: compare before converting
		return s.limit
	}
	return max(time.Duration(d), 1)
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
	var zero T
	attempts := max(p.MaxAttempts, 1)
	sched := newSchedule(&p)
	began := clk.Now()
	attempt := 0
	for {
		attempt++
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		what, after := p.classify(err)
		if what == giveUp {
			return zero, err
		}
		if attempt == attempts {
			return zero, fmt.Errorf("%w (%d attempts): %w", ErrExhausted, attempt, err)
		}
		pause := after
		if what == waitExactly {
			sched.reset()
		} else {
			pause = sched.next()
		}
		if p.MaxElapsed > 0 {
			left := p.MaxElapsed - clk.Since(began) // no overflow: a difference
			if pause > left {
				return zero, fmt.Errorf("%w: a %v pause would pass MaxElapsed %v: %w", ErrExhausted, pause, p.MaxElapsed, err)
			}
		}
		if p.BeforeSleep != nil {
			p.BeforeSleep(attempt, err, pause)
		}
		t := clk.Timer(pause)
		select {
		case <-t.C:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return zero, fmt.Errorf("retry: pause after attempt %d ended by %w: %w", attempt, ctx.Err(), err)
		}
	}
}
