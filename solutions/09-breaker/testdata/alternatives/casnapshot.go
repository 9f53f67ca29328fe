// Design: lock-free — the whole state is an immutable snapshot behind an atomic.Pointer, every transition is a compare-and-swap of a fresh copy retried on conflict, the generation lives in the snapshot, and only the goroutine whose CAS made a transition calls OnStateChange; bonuses B1 and B2 included.

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
// goroutine. This implementation has no lock at all: the whole state is an
// immutable snapshot behind an atomic.Pointer, and every change is a
// compare-and-swap of a fresh copy, retried if another goroutine changed
// the state in between. fn and [Settings.OnStateChange] run outside any
// critical section, so calls in the closed state run in parallel, and
// State answers while fn runs.
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
	"sync/atomic"
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
	cur atomic.Pointer[snapshot] // never modified in place: replaced by CAS
}

// snapshot is one immutable state of the breaker.
type snapshot struct {
	state     State
	gen       uint64    // bumped by every state change
	failures  int       // closed: consecutive failures
	outcomes  []outcome // closed, with FailureRate: the window, oldest first (never appended in place)
	probes    int       // half-open: probes running
	successes int       // half-open: probes that succeeded
	openUntil time.Time // open: when it turns half-open
}

type outcome struct {
	at     time.Time
	failed bool
}

type result int

const (
	ignored result = iota // cancelled by the caller
	succeeded
	failed
)

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
	b := &Breaker{clk: clk, s: s}
	b.cur.Store(&snapshot{state: Closed})
	return b
}

// moved returns a copy of old in state to, in a new generation, with fresh
// counts.
func moved(old *snapshot, to State) *snapshot {
	return &snapshot{state: to, gen: old.gen + 1}
}

// expired is old moved to half-open if its open period is over at now, or
// old itself.
func (b *Breaker) expired(old *snapshot, now time.Time) *snapshot {
	if old.state == Open && !now.Before(old.openUntil) {
		return moved(old, HalfOpen)
	}
	return old
}

// commit swaps old for next. It reports false if another goroutine changed
// the state first; the caller then starts again from the new state.
func (b *Breaker) commit(old, next *snapshot) bool {
	if next == old {
		return true
	}
	return b.cur.CompareAndSwap(old, next)
}

// notify calls the hook for a committed change from old to next, if the
// state changed. No lock is held: there is none.
func (b *Breaker) notify(from, to State) {
	if from != to && b.s.OnStateChange != nil {
		b.s.OnStateChange(from, to)
	}
}

// State returns the breaker's state now, making the lazy move to half-open
// first if the open period is over.
func (b *Breaker) State() State {
	for {
		old := b.cur.Load()
		next := b.expired(old, b.clk.Now())
		if b.commit(old, next) {
			b.notify(old.state, next.state)
			return next.state
		}
	}
}

// Do runs fn(ctx) if the breaker lets it through, and returns fn's error as
// it is, or rejects the call at once with ErrOpen or ErrTooManyRequests.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	gen, err := b.admit()
	if err != nil {
		return err
	}
	// Deferred, so that a panic in fn counts as a failure and frees its
	// probe's place; the panic then goes on up.
	res := failed
	defer func() { b.record(gen, res, err) }()
	err = fn(ctx)
	res = b.judge(err)
	return err
}

// admit lets a call through, or says why not, and returns the generation
// the call belongs to.
func (b *Breaker) admit() (uint64, error) {
	for {
		old := b.cur.Load()
		next := b.expired(old, b.clk.Now())
		var err error
		switch next.state {
		case Open:
			err = ErrOpen
		case HalfOpen:
			if next.probes >= b.s.HalfOpenMaxRequests {
				err = ErrTooManyRequests
			} else {
				c := *next
				c.probes++ // this probe's place, freed by record
				next = &c
			}
		}
		if b.commit(old, next) {
			b.notify(old.state, next.state)
			return next.gen, err
		}
	}
}

// judge says what fn's error counts as; it may call IsFailure.
func (b *Breaker) judge(err error) result {
	if err == nil {
		return succeeded
	}
	if errors.Is(err, context.Canceled) {
		return ignored
	}
	if b.s.IsFailure != nil && !b.s.IsFailure(err) {
		return succeeded
	}
	return failed
}

// record counts the result of a call let through in generation gen. A call
// from an earlier generation changes nothing, not even the probe count.
func (b *Breaker) record(gen uint64, res result, err error) {
	for {
		old := b.cur.Load()
		if old.gen != gen {
			return
		}
		now := b.clk.Now()
		next := old
		switch old.state {
		case Closed:
			if res != ignored {
				next = b.closedOutcome(old, now, res == failed, err)
			}
		case HalfOpen:
			c := *old
			c.probes--
			next = &c
			switch res {
			case succeeded:
				if c.successes++; c.successes >= b.s.HalfOpenMaxRequests {
					next = moved(old, Closed)
				}
			case failed:
				next = b.opened(old, now, err)
			}
		}
		if b.commit(old, next) {
			b.notify(old.state, next.state)
			return
		}
	}
}

// closedOutcome is old after an outcome of the closed state: with the count
// updated, or opened.
func (b *Breaker) closedOutcome(old *snapshot, now time.Time, fail bool, err error) *snapshot {
	c := *old
	if b.s.FailureRate <= 0 {
		if !fail {
			if old.failures == 0 {
				return old
			}
			c.failures = 0
			return &c
		}
		if c.failures++; c.failures >= b.s.MaxFailures {
			return b.opened(old, now, err)
		}
		return &c
	}
	// A fresh slice every time: the old snapshot's array is shared with
	// goroutines that may be building their own copies.
	window := make([]outcome, 0, len(old.outcomes)+1)
	for _, o := range old.outcomes {
		if now.Before(o.at.Add(b.s.Window)) {
			window = append(window, o)
		}
	}
	window = append(window, outcome{now, fail})
	c.outcomes = window
	if !fail || len(window) < b.s.MinRequests {
		return &c
	}
	failures := 0
	for _, o := range window {
		if o.failed {
			failures++
		}
	}
	if float64(failures) >= b.s.FailureRate*float64(len(window)) {
		return b.opened(old, now, err)
	}
	return &c
}

// opened is old moved to open after the failure err, recorded at now.
func (b *Breaker) opened(old *snapshot, now time.Time, err error) *snapshot {
	next := moved(old, Open)
	d := b.s.OpenTimeout
	var ra *retryAfterError
	if errors.As(err, &ra) {
		d = max(d, ra.d)
	}
	next.openUntil = now.Add(d)
	return next
}
