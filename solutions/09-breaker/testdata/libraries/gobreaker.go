// Library: github.com/sony/gobreaker/v2 v2.4.0
// Fails: R1 R3 R4 R5 R6 B1 B2
// Why: gobreaker reads time.Now and accepts no clock, so its open period and its window run on the real clock while the test moves the injected one: the breaker never turns half-open on the clock (R3 R4 R5 R6 B1); it calls OnStateChange with its lock held, so a hook that calls State hangs (R6); its open period is fixed, with no Retry-After (B2); it turns a panic into fmt.Errorf("%v", e) and asks IsSuccessful about it, so an IsFailure that accepts only known outage errors makes a panic a success (R1). Counting consecutive failures of returned errors and rejecting while open hold.

// Package breaker is the kata's API on github.com/sony/gobreaker/v2:
// ReadyToTrip counts consecutive failures (or the failure rate over a
// rolling window of buckets, bonus B1), IsSuccessful is the kata's
// IsFailure turned round, and IsExcluded leaves out the caller's cancels.
// gobreaker reads time.Now and takes no clock: clk is not used.
package breaker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/sony/gobreaker/v2"
)

// State is the state of a breaker.
type State int

// The states of a breaker.
const (
	Closed State = iota
	Open
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ErrOpen and ErrTooManyRequests are gobreaker's own errors.
var (
	ErrOpen            = gobreaker.ErrOpenState
	ErrTooManyRequests = gobreaker.ErrTooManyRequests
)

// Settings are the kata's settings.
type Settings struct {
	MaxFailures         int
	OpenTimeout         time.Duration
	HalfOpenMaxRequests int
	IsFailure           func(err error) bool
	OnStateChange       func(from, to State)
	FailureRate         float64
	Window              time.Duration
	MinRequests         int
}

// RetryAfter keeps the kata's API; gobreaker's open period is fixed.
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

// Breaker is a gobreaker.CircuitBreaker.
type Breaker struct {
	cb *gobreaker.CircuitBreaker[struct{}]
}

// New maps the kata's settings onto gobreaker's.
func New(clk clock.Clock, s Settings) *Breaker {
	if s.MaxFailures < 1 {
		s.MaxFailures = 5
	}
	if s.Window <= 0 {
		s.Window = 60 * time.Second
	}
	st := gobreaker.Settings{
		MaxRequests: uint32(max(s.HalfOpenMaxRequests, 1)),
		Timeout:     s.OpenTimeout, // 0 or below: 60 s, as in the kata
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= uint32(s.MaxFailures)
		},
		IsSuccessful: func(err error) bool {
			return err == nil || (s.IsFailure != nil && !s.IsFailure(err))
		},
		IsExcluded: func(err error) bool { return errors.Is(err, context.Canceled) },
	}
	if s.FailureRate > 0 {
		st.Interval = s.Window
		st.BucketPeriod = s.Window / 10
		st.ReadyToTrip = func(c gobreaker.Counts) bool {
			n := c.TotalSuccesses + c.TotalFailures
			return n >= uint32(max(s.MinRequests, 1)) && float64(c.TotalFailures) >= s.FailureRate*float64(n)
		}
	}
	if s.OnStateChange != nil {
		st.OnStateChange = func(_ string, from, to gobreaker.State) {
			s.OnStateChange(state(from), state(to))
		}
	}
	return &Breaker{cb: gobreaker.NewCircuitBreaker[struct{}](st)}
}

func state(s gobreaker.State) State {
	switch s {
	case gobreaker.StateOpen:
		return Open
	case gobreaker.StateHalfOpen:
		return HalfOpen
	}
	return Closed
}

// State is gobreaker's State.
func (b *Breaker) State() State { return state(b.cb.State()) }

// Do is gobreaker's Execute.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) error {
	_, err := b.cb.Execute(func() (struct{}, error) { return struct{}{}, fn(ctx) })
	return err
}
