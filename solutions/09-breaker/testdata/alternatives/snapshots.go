// Design: no mutex at all: the state is an immutable snapshot behind an
// atomic.Pointer, replaced with CompareAndSwap; the winner of a swap calls the hook.

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
	cur atomic.Pointer[snapshot]
}

// snapshot is the whole state of a breaker at one moment. It is never
// changed once published: every change builds a new snapshot and swaps it
// in with CompareAndSwap, retrying if another goroutine got there first.
type snapshot struct {
	state     State
	gen       uint64
	until     time.Time // Open: when it turns half-open
	failures  int       // Closed: failures in a row
	outcomes  []outcome // Closed with FailureRate: the window, oldest first
	probes    int       // HalfOpen: probes running
	successes int       // HalfOpen: successful probes
}

type outcome struct {
	at     time.Time
	failed bool
}

// New returns a closed breaker that reads the time from clk.
func New(clk clock.Clock, s Settings) *Breaker {
	if s.MaxFailures < 1 {
		s.MaxFailures = 5
	}
	if s.OpenTimeout <= 0 {
		s.OpenTimeout = 60 * time.Second
	}
	if s.HalfOpenMaxRequests < 1 {
		s.HalfOpenMaxRequests = 1
	}
	if s.Window <= 0 {
		s.Window = 60 * time.Second
	}
	if s.MinRequests < 1 {
		s.MinRequests = 1
	}
	b := &Breaker{clk: clk, s: s}
	b.cur.Store(&snapshot{state: Closed})
	return b
}

// next returns a copy of old in state to, in a new generation, with fresh
// counts.
func next(old *snapshot, to State) *snapshot {
	return &snapshot{state: to, gen: old.gen + 1}
}

// update applies f to the current snapshot until its result is swapped in;
// f returns the new snapshot, or nil for no change. The goroutine whose swap
// changed the state calls the hook: exactly one per transition.
func (b *Breaker) update(f func(old *snapshot) *snapshot) (before, after *snapshot) {
	for {
		old := b.cur.Load()
		nu := f(old)
		if nu == nil {
			return old, old
		}
		if b.cur.CompareAndSwap(old, nu) {
			if old.state != nu.state && b.s.OnStateChange != nil {
				b.s.OnStateChange(old.state, nu.state)
			}
			return old, nu
		}
	}
}

// expired returns the half-open successor of an open snapshot whose period
// has ended, or nil.
func (b *Breaker) expired(old *snapshot) *snapshot {
	if old.state == Open && !b.clk.Now().Before(old.until) {
		return next(old, HalfOpen)
	}
	return nil
}

// State returns the breaker's state now, moving an open breaker whose open
// period has ended to half-open first.
func (b *Breaker) State() State {
	_, now := b.update(b.expired)
	return now.state
}

// Do runs fn(ctx) if the breaker lets it through and returns fn's error as
// it is, or rejects the call at once with ErrOpen or ErrTooManyRequests.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	b.update(b.expired)
	var reject error
	_, admitted := b.update(func(old *snapshot) *snapshot {
		reject = nil
		switch old.state {
		case Open:
			reject = ErrOpen
		case HalfOpen:
			if old.probes >= b.s.HalfOpenMaxRequests {
				reject = ErrTooManyRequests
				return nil
			}
			nu := *old
			nu.probes++
			return &nu
		}
		return nil
	})
	if reject != nil {
		return reject
	}
	gen := admitted.gen

	finished := false
	defer func() {
		if !finished { // fn panicked: a failure, and the panic goes on
			b.settle(gen, true, nil)
		}
	}()
	err = fn(ctx)
	finished = true
	switch {
	case err == nil:
		b.settle(gen, false, nil)
	case errors.Is(err, context.Canceled):
		b.update(func(old *snapshot) *snapshot {
			if old.gen != gen || old.state != HalfOpen {
				return nil
			}
			nu := *old
			nu.probes--
			return &nu
		})
	case b.s.IsFailure != nil && !b.s.IsFailure(err):
		b.settle(gen, false, nil)
	default:
		b.settle(gen, true, err)
	}
	return err
}

// settle counts a success or a failure of a call of generation gen.
func (b *Breaker) settle(gen uint64, failed bool, err error) {
	b.update(func(old *snapshot) *snapshot {
		if old.gen != gen {
			return nil // let through before a state change: no news
		}
		now := b.clk.Now()
		switch old.state {
		case Closed:
			nu := *old
			if b.trips(&nu, now, failed) {
				return b.opened(old, now, err)
			}
			return &nu
		case HalfOpen:
			if failed {
				return b.opened(old, now, err)
			}
			if old.successes+1 >= b.s.HalfOpenMaxRequests {
				return next(old, Closed)
			}
			nu := *old
			nu.probes--
			nu.successes++
			return &nu
		}
		return nil
	})
}

// trips counts an outcome into nu (a private copy) and says whether the
// breaker opens.
func (b *Breaker) trips(nu *snapshot, now time.Time, failed bool) bool {
	if b.s.FailureRate <= 0 {
		if !failed {
			nu.failures = 0
			return false
		}
		nu.failures++
		return nu.failures >= b.s.MaxFailures
	}
	var window []outcome
	for _, o := range nu.outcomes {
		if now.Sub(o.at) < b.s.Window {
			window = append(window, o)
		}
	}
	nu.outcomes = append(window, outcome{now, failed})
	if !failed || len(nu.outcomes) < b.s.MinRequests {
		return false
	}
	n := 0
	for _, o := range nu.outcomes {
		if o.failed {
			n++
		}
	}
	return float64(n) >= b.s.FailureRate*float64(len(nu.outcomes))
}

// opened returns the open successor of old, for the longer of OpenTimeout
// and the Retry-After err carries.
func (b *Breaker) opened(old *snapshot, now time.Time, err error) *snapshot {
	d := b.s.OpenTimeout
	var ra *retryAfterError
	if errors.As(err, &ra) {
		d = max(d, ra.d)
	}
	nu := next(old, Open)
	nu.until = now.Add(d)
	return nu
}
