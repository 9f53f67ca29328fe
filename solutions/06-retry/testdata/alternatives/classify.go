// Design: errors sorted by one classify function into outcomes; pauses from a
// closed form that saturates by comparing logarithms; errors joined with
// errors.Join and a reversed %w order.

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

type markedPermanent struct{ error }

func (m *markedPermanent) Unwrap() error { return m.error }

// Permanent marks err as not worth retrying. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &markedPermanent{err}
}

type markedRetryAfter struct {
	error
	d time.Duration
}

func (m *markedRetryAfter) Unwrap() error { return m.error }

// RetryAfter marks err as retryable after exactly d. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return &markedRetryAfter{err, d}
}

type outcome int

const (
	giveUp     outcome = iota // return the error as it is
	backOff                   // pause by the backoff
	waitServer                // pause as the server asked
)

func classify(p Policy, err error) (outcome, time.Duration) {
	var perm *markedPermanent
	if errors.As(err, &perm) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return giveUp, 0
	}
	var ra *markedRetryAfter
	if errors.As(err, &ra) {
		return waitServer, max(ra.d, 0)
	}
	if p.Retryable != nil && !p.Retryable(err) {
		return giveUp, 0
	}
	return backOff, 0
}

// delay is the pause after the n-th failure of the backoff.
func delay(p Policy, n int) time.Duration {
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
	var d float64
	// log(Base·mⁿ⁻¹) ≥ log(limit) means d saturates; no power is computed then.
	if math.Log(float64(p.BaseDelay))+float64(n-1)*math.Log(m) >= math.Log(float64(limit)) {
		d = float64(limit)
	} else {
		d = min(float64(p.BaseDelay)*math.Pow(m, float64(n-1)), float64(limit))
	}
	j := p.Jitter
	if j < 0 {
		j = 0
	} else if j > 1 {
		j = 1
	}
	if j != 0 {
		rnd := p.Rand
		if rnd == nil {
			rnd = rand.Float64
		}
		d *= 1 - j + 2*j*rnd()
	}
	switch {
	case d >= float64(limit):
		return limit
	case d < 1:
		return 1
	}
	return time.Duration(d)
}

// Do calls op until it succeeds, returns an error that is not retried, or
// runs out of attempts or of MaxElapsed, pausing on clk between attempts.
func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	var zero T
	deadline := clk.Now().Add(p.MaxElapsed)
	useDeadline := p.MaxElapsed > 0
	n := 0 // failures of the backoff since the start or the last Retry-After
	for attempt := 1; ; attempt++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		kind, pause := classify(p, err)
		if kind == giveUp {
			return zero, err
		}
		if attempt >= max(p.MaxAttempts, 1) {
			return zero, errors.Join(ErrExhausted, err)
		}
		if kind == waitServer {
			n = 0
		} else {
			n++
			pause = delay(p, n)
		}
		if useDeadline && pause > clk.Until(deadline) {
			return zero, fmt.Errorf("%w (next pause %v passes MaxElapsed): %w", err, pause, ErrExhausted)
		}
		if p.BeforeSleep != nil {
			p.BeforeSleep(attempt, err, pause)
		}
		timer := clk.Timer(pause)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return zero, fmt.Errorf("%w (retrying after: %w)", ctx.Err(), err)
		}
	}
}
