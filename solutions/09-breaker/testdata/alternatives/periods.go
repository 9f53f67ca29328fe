// Design: the lock is a one-slot channel; each state is a period object,
// and a call's result counts only if its period is still the current one.

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
	clk  clock.Clock
	s    Settings
	lock chan struct{} // a one-slot channel used as the mutex
	cur  *period       // guarded by lock
}

// period is one generation: a state and the counts that belong to it. A
// call remembers the period that let it through; when it ends, its result
// counts only if that period is still the current one.
type period struct {
	state     State
	until     time.Time // Open: the first instant of half-open
	failures  int       // Closed: failures in a row
	window    []outcome // Closed with FailureRate: outcomes, oldest first
	running   int       // HalfOpen: probes running
	succeeded int       // HalfOpen: successful probes
}

type outcome struct {
	at   time.Time
	fail bool
}

// New returns a closed breaker that reads the time from clk.
func New(clk clock.Clock, s Settings) *Breaker {
	if s.MaxFailures < 1 {
		s.MaxFailures = 5
	}
	if s.OpenTimeout <= 0 {
		s.OpenTimeout = time.Minute
	}
	if s.HalfOpenMaxRequests < 1 {
		s.HalfOpenMaxRequests = 1
	}
	if s.Window <= 0 {
		s.Window = time.Minute
	}
	if s.MinRequests < 1 {
		s.MinRequests = 1
	}
	return &Breaker{clk: clk, s: s, lock: make(chan struct{}, 1), cur: &period{state: Closed}}
}

func (b *Breaker) acquire() { b.lock <- struct{}{} }
func (b *Breaker) release() { <-b.lock }

// transitions collects the state changes made under the lock, to report
// once it is released.
type transitions [][2]State

func (t transitions) report(hook func(from, to State)) {
	if hook == nil {
		return
	}
	for _, c := range t {
		hook(c[0], c[1])
	}
}

// enter starts a new period in state to; the caller holds the lock.
func (b *Breaker) enter(to State, t *transitions) *period {
	*t = append(*t, [2]State{b.cur.state, to})
	b.cur = &period{state: to}
	return b.cur
}

// tick makes the lazy move from open to half-open; the caller holds the lock.
func (b *Breaker) tick(t *transitions) {
	if b.cur.state == Open && !b.clk.Now().Before(b.cur.until) {
		b.enter(HalfOpen, t)
	}
}

// State returns the breaker's state now, moving an open breaker whose open
// period has ended to half-open first.
func (b *Breaker) State() State {
	var t transitions
	b.acquire()
	b.tick(&t)
	s := b.cur.state
	b.release()
	t.report(b.s.OnStateChange)
	return s
}

// Do runs fn(ctx) if the breaker lets it through and returns fn's error as
// it is, or rejects the call at once with ErrOpen or ErrTooManyRequests.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) error {
	var t transitions
	b.acquire()
	b.tick(&t)
	p := b.cur
	var reject error
	switch p.state {
	case Open:
		reject = ErrOpen
	case HalfOpen:
		if p.running >= b.s.HalfOpenMaxRequests {
			reject = ErrTooManyRequests
		} else {
			p.running++
		}
	}
	b.release()
	t.report(b.s.OnStateChange)
	if reject != nil {
		return reject
	}

	// fn may end its goroutine without returning or panicking
	// (runtime.Goexit, as t.FailNow does): the probe still ends, as a
	// failure, and frees its place.
	done := false
	defer func() {
		if !done {
			b.finish(p, true, nil)
		}
	}()
	err, panicked := b.call(ctx, fn)
	done = true
	switch {
	case panicked != nil:
		b.finish(p, true, nil)
		panic(panicked.v)
	case err == nil:
		b.finish(p, false, nil)
	case errors.Is(err, context.Canceled):
		b.forget(p)
	case b.s.IsFailure != nil && !b.s.IsFailure(err):
		b.finish(p, false, nil)
	default:
		b.finish(p, true, err)
	}
	return err
}

type panicValue struct{ v any }

// call runs fn and turns a panic into a value, so that Do can count it
// before it panics on.
func (b *Breaker) call(ctx context.Context, fn func(context.Context) error) (err error, p *panicValue) {
	defer func() {
		if v := recover(); v != nil {
			p = &panicValue{v}
		}
	}()
	return fn(ctx), nil
}

// forget frees a cancelled probe's place without counting anything.
func (b *Breaker) forget(p *period) {
	b.acquire()
	if p == b.cur && p.state == HalfOpen {
		p.running--
	}
	b.release()
}

// finish counts the outcome of a call let through by period p.
func (b *Breaker) finish(p *period, fail bool, err error) {
	var t transitions
	b.acquire()
	if p == b.cur {
		now := b.clk.Now()
		switch p.state {
		case Closed:
			if b.trips(p, now, fail) {
				b.reopen(now, err, &t)
			}
		case HalfOpen:
			p.running--
			if fail {
				b.reopen(now, err, &t)
			} else if p.succeeded++; p.succeeded == b.s.HalfOpenMaxRequests {
				b.enter(Closed, &t)
			}
		}
	}
	b.release()
	t.report(b.s.OnStateChange)
}

// trips counts an outcome of a closed period and says whether it opens.
func (b *Breaker) trips(p *period, now time.Time, fail bool) bool {
	if b.s.FailureRate <= 0 {
		if fail {
			p.failures++
		} else {
			p.failures = 0
		}
		return p.failures == b.s.MaxFailures
	}
	keep := p.window[:0]
	for _, o := range p.window {
		if now.Before(o.at.Add(b.s.Window)) {
			keep = append(keep, o)
		}
	}
	p.window = append(keep, outcome{now, fail})
	if !fail || len(p.window) < b.s.MinRequests {
		return false
	}
	n := 0
	for _, o := range p.window {
		if o.fail {
			n++
		}
	}
	return float64(n) >= b.s.FailureRate*float64(len(p.window))
}

// reopen opens the breaker at now, for the longer of OpenTimeout and the
// failure's Retry-After.
func (b *Breaker) reopen(now time.Time, err error, t *transitions) {
	d := b.s.OpenTimeout
	var ra *retryAfterError
	if errors.As(err, &ra) && ra.d > d {
		d = ra.d
	}
	b.enter(Open, t).until = now.Add(d)
}
