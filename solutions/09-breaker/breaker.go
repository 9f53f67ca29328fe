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
	"slices"
	"strconv"
	"sync"
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

// Breaker is a circuit breaker. Create it with New; it must not be copied
// after first use.
type Breaker struct {
	clk clock.Clock
	s   Settings

	mu        sync.Mutex
	state     State
	gen       uint64    // bumped by every state change
	failures  int       // closed: consecutive failures
	outcomes  []outcome // closed, with FailureRate: the window, oldest first
	probes    int       // half-open: probes running
	successes int       // half-open: probes that succeeded
	openUntil time.Time // open: when it turns half-open
}

type outcome struct {
	at     time.Time
	failed bool
}

// result is what a finished call counts as.
type result int

const (
	ignored result = iota // cancelled by the caller
	succeeded
	failed
)

// change is a transition to report to OnStateChange; from == to means none.
type change struct{ from, to State }

// New returns a closed breaker that reads the time from clk.
func New(clk clock.Clock, s Settings) *Breaker {
	if s.MaxFailures < 1 {
		s.MaxFailures = 5
	}
	if s.OpenTimeout <= 0 {
		s.OpenTimeout = 60 * time.Second
	}
	s.HalfOpenMaxRequests = max(s.HalfOpenMaxRequests, 1)
	if s.Window <= 0 {
		s.Window = 60 * time.Second
	}
	s.MinRequests = max(s.MinRequests, 1)
	return &Breaker{clk: clk, s: s}
}

// State returns the breaker's state now. If the breaker is open and its
// open period has ended (clk.Now() is at or after its end), State moves it
// to half-open first, and OnStateChange sees that transition.
func (b *Breaker) State() State {
	b.mu.Lock()
	c := b.expire()
	s := b.state
	b.mu.Unlock()
	b.notify(c)
	return s
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
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	gen, err := b.admit()
	if err != nil {
		return err
	}
	// Deferred, so that a panic in fn counts as a failure and gives its
	// probe's place back; the panic then goes on up.
	res := failed
	defer func() { b.record(gen, res, err) }()
	err = fn(ctx)
	res = b.judge(err)
	return err
}

// admit lets a call through, or says why not, and returns the generation
// the call belongs to.
func (b *Breaker) admit() (uint64, error) {
	b.mu.Lock()
	c := b.expire()
	var err error
	if b.state == Open {
		err = ErrOpen
	} else if b.state == HalfOpen {
		if b.probes >= b.s.HalfOpenMaxRequests {
			err = ErrTooManyRequests
		} else {
			b.probes++ // the probe's place, given back by record
		}
	}
	gen := b.gen
	b.mu.Unlock()
	b.notify(c)
	return gen, err
}

// judge says what fn's error counts as. It runs without the lock, since it
// may call IsFailure.
func (b *Breaker) judge(err error) result {
	if err == nil {
		return succeeded
	}
	if errors.Is(err, context.Canceled) { // the caller gave up: no news
		return ignored
	}
	if b.s.IsFailure != nil && !b.s.IsFailure(err) {
		return succeeded
	}
	return failed
}

// record counts the result of a call let through in generation gen.
func (b *Breaker) record(gen uint64, res result, err error) {
	b.mu.Lock()
	var c change
	if gen == b.gen { // a call from an earlier generation changes nothing
		now := b.clk.Now()
		switch b.state {
		case Closed:
			if res != ignored && b.closedTrips(now, res == failed) {
				c = b.open(now, err)
			}
		case HalfOpen:
			b.probes--
			switch res {
			case succeeded:
				if b.successes++; b.successes >= b.s.HalfOpenMaxRequests {
					c = b.set(Closed)
				}
			case failed:
				c = b.open(now, err)
			}
		}
	}
	b.mu.Unlock()
	b.notify(c)
}

// closedTrips counts an outcome of the closed state and reports whether it
// opens the breaker.
func (b *Breaker) closedTrips(now time.Time, fail bool) bool {
	if b.s.FailureRate <= 0 {
		if !fail {
			b.failures = 0
			return false
		}
		b.failures++
		return b.failures >= b.s.MaxFailures
	}
	b.outcomes = append(b.outcomes, outcome{now, fail})
	// Drop what has left the window; the outcome just added is always in it.
	i := slices.IndexFunc(b.outcomes, func(o outcome) bool { return now.Before(o.at.Add(b.s.Window)) })
	b.outcomes = b.outcomes[i:]
	if !fail || len(b.outcomes) < b.s.MinRequests {
		return false
	}
	failures := 0
	for _, o := range b.outcomes {
		if o.failed {
			failures++
		}
	}
	return float64(failures) >= b.s.FailureRate*float64(len(b.outcomes))
}

// expire moves an open breaker whose open period has ended to half-open:
// the lazy transition, made by whichever call comes first.
func (b *Breaker) expire() change {
	if b.state == Open && !b.clk.Now().Before(b.openUntil) {
		return b.set(HalfOpen)
	}
	return change{}
}

// open opens the breaker after the failure err, recorded at now.
func (b *Breaker) open(now time.Time, err error) change {
	c := b.set(Open)
	d := b.s.OpenTimeout
	var ra *retryAfterError
	if errors.As(err, &ra) {
		d = max(d, ra.d)
	}
	b.openUntil = now.Add(d)
	return c
}

// set moves to a new state and a new generation, with fresh counts.
func (b *Breaker) set(to State) change {
	c := change{b.state, to}
	b.state = to
	b.gen++
	b.failures, b.outcomes, b.probes, b.successes = 0, nil, 0, 0
	return c
}

// notify calls the hook, without the lock held.
func (b *Breaker) notify(c change) {
	if c.from != c.to && b.s.OnStateChange != nil {
		b.s.OnStateChange(c.from, c.to)
	}
}
