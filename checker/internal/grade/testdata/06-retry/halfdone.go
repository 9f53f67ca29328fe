// Fixture: half done: exact backoff, attempts, Permanent and Retryable work (R1–R3); the pause is clk.Sleep, context errors are retried, there is no cap or jitter, failures return the op's value, MaxElapsed is ignored and RetryAfter is a no-op.
// Want: R1=pass R2=pass R3=pass R4=assertion R5=assertion R6=assertion R7=assertion B1=assertion B2=assertion

package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"
)

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

var ErrExhausted = errors.New("retry: attempts exhausted")

type permanent struct{ err error }

func (e permanent) Error() string { return e.err.Error() }
func (e permanent) Unwrap() error { return e.err }

func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

func RetryAfter(d time.Duration, err error) error { return err }

func Do[T any](ctx context.Context, clk clock.Clock, p Policy, op func(context.Context) (T, error)) (T, error) {
	attempts := max(p.MaxAttempts, 1)
	m := p.Multiplier
	if m < 1 {
		m = 2
	}
	for attempt := 1; ; attempt++ {
		v, err := op(ctx)
		if err == nil {
			return v, nil
		}
		var perm permanent
		if errors.As(err, &perm) || (p.Retryable != nil && !p.Retryable(err)) {
			return v, err
		}
		if attempt == attempts {
			return v, fmt.Errorf("%w: %w", ErrExhausted, err)
		}
		pause := time.Duration(float64(p.BaseDelay) * math.Pow(m, float64(attempt-1)))
		if p.BeforeSleep != nil {
			p.BeforeSleep(attempt, err, pause)
		}
		if pause > 0 {
			clk.Sleep(pause)
		}
	}
}
