// Package breaker stops calling a dependency that keeps failing, and lets a
// few probe calls through after a while to find out whether it is back: a
// circuit breaker.
//
// A [Breaker] is in one of three states. Closed: every call runs, and
// [Settings.MaxFailures] consecutive failures open it. Open: every call is
// rejected at once with [ErrOpen], without running, for
// [Settings.OpenTimeout]. Half-open: at most [Settings.HalfOpenMaxRequests]
// probe calls run at once (the others are rejected at once with
// [ErrTooManyRequests]); that many successful probes close the breaker, and
// one failed probe opens it again for a fresh OpenTimeout.
//
// A Breaker is safe for concurrent use by many goroutines. It starts no
// goroutines and keeps no timers: [Breaker.Do] runs fn on the caller's
// goroutine, and the breaker holds its lock only while it updates its own
// state, never while fn runs and never while it calls
// [Settings.OnStateChange]. So calls in the closed state run in parallel,
// and State answers while fn runs.
//
// Time comes from the injected clock.Clock and only from it. The move from
// open to half-open is lazy: the first Do or State that finds
// clk.Now() at or after the end of the open period makes it. Nothing
// happens at that instant by itself; no timer or goroutine is needed (and
// none may outlive a call).
//
// Generations: every state change starts a new generation. The result of a
// call counts only in the generation in which the call was let through: a
// call that ends after a state change (it started closed and the breaker
// has opened since, or it was a probe of an earlier half-open period)
// changes nothing, and it does not hold a probe's place in the new
// generation.
//
// What counts as what: fn returning nil is a success. An error matching
// context.Canceled (the caller gave up) counts as nothing: not a failure,
// not a success, and it does not reset the count of failures; a cancelled
// probe frees its place. Every other error is a failure (a
// context.DeadlineExceeded too: a dependency that makes its callers time out
// is failing), unless [Settings.IsFailure] says it is not, in which case it
// is a success. A panic in fn counts as a failure, and Do panics on with
// the same value.
package breaker

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
)

// State is the state of a breaker.
type State int

// The states of a breaker. A new breaker is Closed.
const (
	Closed   State = iota // calls run; consecutive failures are counted
	Open                  // calls are rejected with ErrOpen without running
	HalfOpen              // a few probe calls run; the rest get ErrTooManyRequests
)

// String returns "closed", "open" or "half-open".
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

// ErrOpen is matched (errors.Is) by the error Do returns, without running
// fn, while the breaker is open.
var ErrOpen = errors.New("breaker: open")

// ErrTooManyRequests is matched (errors.Is) by the error Do returns, without
// running fn, while the breaker is half-open and already runs
// HalfOpenMaxRequests probes.
var ErrTooManyRequests = errors.New("breaker: too many half-open requests")

// Settings configure a breaker. The zero value trips on 5 consecutive
// failures, stays open 60 seconds and then lets one probe through at a time.
type Settings struct {
	// MaxFailures is the number of consecutive failures that opens a
	// closed breaker; values below 1 mean 5. A success resets the count.
	// It is not used when FailureRate is set (bonus B1).
	MaxFailures int
	// OpenTimeout is how long the breaker stays open, measured on the clock
	// from the moment the failure that opened it was recorded (the moment
	// fn returned it); values of 0 or below mean 60 seconds.
	OpenTimeout time.Duration
	// HalfOpenMaxRequests is both the number of probes a half-open breaker
	// runs at once and the number of successful probes that close it;
	// values below 1 mean 1.
	HalfOpenMaxRequests int
	// IsFailure, if not nil, is asked about every error fn returns except
	// those matching context.Canceled: false makes the call a success (the
	// dependency answered, with a 404 say). nil counts every such error as a
	// failure. It is called without the breaker's lock held.
	IsFailure func(err error) bool
	// OnStateChange, if not nil, is called once for every transition, with
	// the state before and after it, on the goroutine of the Do or State
	// call that made the transition, as soon as the breaker's lock is
	// released (for the move that lets a call through, before its fn runs):
	// it may call State or Do. Transitions made at about the same time by
	// different goroutines may reach it in either order.
	OnStateChange func(from, to State)

	// FailureRate (bonus B1), if above 0, replaces MaxFailures: a closed
	// breaker opens when a failure is recorded and, counting the outcomes
	// (successes and failures) recorded in the last Window,
	// outcomes >= MinRequests and failures >= FailureRate·outcomes.
	// An outcome recorded at t is in the window while clk.Now() < t+Window.
	// The window starts empty every time the breaker closes.
	FailureRate float64
	// Window is the length of the window of FailureRate; values of 0 or
	// below mean 60 seconds.
	Window time.Duration
	// MinRequests is the number of outcomes the window needs before
	// FailureRate can open the breaker; values below 1 mean 1.
	MinRequests int
}

// RetryAfter (bonus B2) marks err as carrying a server's Retry-After of d.
// When the failure that opens the breaker (a closed breaker tripping, or a
// failed probe) is such an error, even wrapped again, the breaker stays open
// for the longer of OpenTimeout and d. errors.Is and errors.As see through
// the mark. RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	panic("TODO: bonus B2: wrap err together with d, in a type Do can find with errors.As")
}

// Breaker is a circuit breaker. Create it with New; it must not be copied
// after first use.
type Breaker struct {
	// TODO: your fields: the clock, the settings, a sync.Mutex and the
	// state it guards.
}

// New returns a closed breaker that reads the time from clk.
func New(clk clock.Clock, s Settings) *Breaker {
	panic("TODO: store clk and s, with the defaults applied")
}

// State returns the breaker's state now. If the breaker is open and its
// open period has ended (clk.Now() is at or after its end), State moves it
// to half-open first, and OnStateChange sees that transition.
func (b *Breaker) State() State {
	panic("TODO: lock, move an expired open breaker to half-open, unlock, then call the hook")
}

// Do runs fn(ctx) if the breaker lets it through, and returns fn's error as
// it is; fn runs on the caller's goroutine, without the breaker's lock
// held. Do does not look at ctx itself: fn gets it and is expected to
// honour it.
//
// Do lets fn through when the breaker is closed, or half-open with fewer
// than HalfOpenMaxRequests probes running. Otherwise it returns at once,
// without calling fn, an error matching ErrOpen (open) or ErrTooManyRequests
// (half-open and full). Like State, it first moves an open breaker whose
// open period has ended to half-open.
//
// When fn returns, its result counts (see the package doc) only if the
// breaker is still in the generation that let the call through.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) error {
	panic("TODO: let the call through or reject it; run fn without the lock; record the result for its generation")
}
