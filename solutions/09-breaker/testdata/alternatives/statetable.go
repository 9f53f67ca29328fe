// Design: one struct per state behind an interface, swapped by a transition table under a sync.RWMutex;
// admits that change nothing take the read lock and upgrade with a re-check; an epoch count is the generation.

package breaker

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// State is the state of a breaker.
type State int

// The states of a breaker. A new breaker is Closed.
const (
	Closed State = iota
	Open
	HalfOpen
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

// ErrOpen is matched by the error Do returns while the breaker is open.
var ErrOpen = errors.New("breaker: open")

// ErrTooManyRequests is matched by the error Do returns while the breaker is
// half-open and already runs HalfOpenMaxRequests probes.
var ErrTooManyRequests = errors.New("breaker: too many half-open requests")

// Settings configure a breaker.
type Settings struct {
	MaxFailures         int
	OpenTimeout         time.Duration
	HalfOpenMaxRequests int
	IsFailure           func(err error) bool
	OnStateChange       func(from, to State)

	FailureRate float64
	Window      time.Duration
	MinRequests int
}

// RetryAfter marks err as carrying a server's Retry-After of d.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		return nil
	}
	return retryAfter{d: d, err: err}
}

type retryAfter struct {
	d   time.Duration
	err error
}

func (e retryAfter) Error() string { return e.err.Error() }
func (e retryAfter) Unwrap() error { return e.err }

// verdict is what a finished call counts as.
type verdict int

const (
	noNews verdict = iota // the caller cancelled
	good
	bad
)

// phase is the behaviour of one state. Its methods run under the write lock,
// except peek, which runs under the read lock and must not write.
type phase interface {
	state() State
	// peek decides an admission without writing anything, if it can:
	// decided is false when the call needs the write lock.
	peek(now time.Time) (decided bool, err error)
	// admit decides an admission under the write lock; it may take a place.
	admit() error
	// settle counts a verdict of a call it admitted and names the next
	// state, or returns stay.
	settle(v verdict, now time.Time) State
	// expired reports whether the phase ends by itself at now (the lazy move).
	expired(now time.Time) bool
}

// stay is settle's answer when the state does not change.
const stay State = -1

// edges is the transition table: the only moves a breaker may make.
var edges = map[[2]State]bool{
	{Closed, Open}:     true,
	{Open, HalfOpen}:   true,
	{HalfOpen, Closed}: true,
	{HalfOpen, Open}:   true,
}

type closedPhase struct {
	s       *Settings
	streak  int    // failures in a row
	history []mark // with FailureRate: the window, oldest first
}

type mark struct {
	at     time.Time
	failed bool
}

func (p *closedPhase) state() State                 { return Closed }
func (p *closedPhase) peek(time.Time) (bool, error) { return true, nil }
func (p *closedPhase) admit() error                 { return nil }
func (p *closedPhase) expired(time.Time) bool       { return false }
func (p *closedPhase) settle(v verdict, now time.Time) State {
	if v == noNews {
		return stay
	}
	if p.s.FailureRate <= 0 {
		if v == good {
			p.streak = 0
			return stay
		}
		p.streak++
		if p.streak >= p.s.MaxFailures {
			return Open
		}
		return stay
	}
	p.history = append(p.history, mark{now, v == bad})
	keep := p.history[:0]
	for _, m := range p.history {
		if now.Before(m.at.Add(p.s.Window)) {
			keep = append(keep, m)
		}
	}
	p.history = keep
	if v != bad || len(p.history) < p.s.MinRequests {
		return stay
	}
	failed := 0
	for _, m := range p.history {
		if m.failed {
			failed++
		}
	}
	if float64(failed) >= p.s.FailureRate*float64(len(p.history)) {
		return Open
	}
	return stay
}

type openPhase struct {
	until time.Time
}

func (p *openPhase) state() State { return Open }
func (p *openPhase) peek(now time.Time) (bool, error) {
	if p.expired(now) {
		return false, nil // the lazy move needs the write lock
	}
	return true, ErrOpen
}
func (p *openPhase) admit() error                    { return ErrOpen }
func (p *openPhase) expired(now time.Time) bool      { return !now.Before(p.until) }
func (p *openPhase) settle(verdict, time.Time) State { return stay } // nothing is admitted while open

type halfOpenPhase struct {
	s       *Settings
	running int
	passed  int
}

func (p *halfOpenPhase) state() State                 { return HalfOpen }
func (p *halfOpenPhase) peek(time.Time) (bool, error) { return false, nil } // admitting takes a place
func (p *halfOpenPhase) expired(time.Time) bool       { return false }
func (p *halfOpenPhase) admit() error {
	if p.running >= p.s.HalfOpenMaxRequests {
		return ErrTooManyRequests
	}
	p.running++
	return nil
}
func (p *halfOpenPhase) settle(v verdict, _ time.Time) State {
	p.running--
	switch v {
	case good:
		p.passed++
		if p.passed >= p.s.HalfOpenMaxRequests {
			return Closed
		}
	case bad:
		return Open
	}
	return stay
}

// Breaker is a circuit breaker. Create it with New.
type Breaker struct {
	clk clock.Clock
	s   Settings

	rw    sync.RWMutex
	cur   phase
	epoch uint64 // bumped by every move: the generation
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
	b.cur = &closedPhase{s: &b.s}
	return b
}

// move swaps in a fresh phase for state to, along the transition table.
// cause is the failure that opens the breaker, if that is the move. It
// returns the edge for the hook. Called with the write lock held.
func (b *Breaker) move(to State, now time.Time, cause error) [2]State {
	edge := [2]State{b.cur.state(), to}
	if !edges[edge] {
		panic("breaker: no transition " + edge[0].String() + " → " + edge[1].String())
	}
	switch to {
	case Closed:
		b.cur = &closedPhase{s: &b.s}
	case HalfOpen:
		b.cur = &halfOpenPhase{s: &b.s}
	case Open:
		d := b.s.OpenTimeout
		var ra retryAfter
		if errors.As(cause, &ra) {
			d = max(d, ra.d)
		}
		b.cur = &openPhase{until: now.Add(d)}
	}
	b.epoch++
	return edge
}

// hook reports the moves made, after the lock is released.
func (b *Breaker) hook(moves [][2]State) {
	if b.s.OnStateChange == nil {
		return
	}
	for _, e := range moves {
		b.s.OnStateChange(e[0], e[1])
	}
}

// lazyLocked makes the lazy move of an expired open phase, under the write lock.
func (b *Breaker) lazyLocked(moves [][2]State) [][2]State {
	if now := b.clk.Now(); b.cur.expired(now) {
		moves = append(moves, b.move(HalfOpen, now, nil))
	}
	return moves
}

// State returns the breaker's state now, making the lazy move to half-open
// first if the open period is over.
func (b *Breaker) State() State {
	b.rw.RLock()
	if !b.cur.expired(b.clk.Now()) {
		s := b.cur.state()
		b.rw.RUnlock()
		return s
	}
	b.rw.RUnlock()

	// Upgrade: another caller may have moved in between, so decide again.
	b.rw.Lock()
	moves := b.lazyLocked(nil)
	s := b.cur.state()
	b.rw.Unlock()
	b.hook(moves)
	return s
}

// enter lets a call through or rejects it, and returns the epoch it
// belongs to.
func (b *Breaker) enter() (uint64, error) {
	b.rw.RLock()
	decided, err := b.cur.peek(b.clk.Now())
	epoch := b.epoch
	b.rw.RUnlock()
	if decided {
		return epoch, err
	}

	b.rw.Lock()
	moves := b.lazyLocked(nil)
	err = b.cur.admit()
	epoch = b.epoch
	b.rw.Unlock()
	b.hook(moves)
	return epoch, err
}

// leave counts a call's verdict if its epoch is still the current one.
func (b *Breaker) leave(epoch uint64, v verdict, cause error) {
	b.rw.Lock()
	var moves [][2]State
	if epoch == b.epoch {
		now := b.clk.Now()
		if to := b.cur.settle(v, now); to != stay {
			moves = append(moves, b.move(to, now, cause))
		}
	}
	b.rw.Unlock()
	b.hook(moves)
}

// judge says what fn's error counts as, without any lock.
func (b *Breaker) judge(err error) verdict {
	switch {
	case err == nil:
		return good
	case errors.Is(err, context.Canceled):
		return noNews
	case b.s.IsFailure != nil && !b.s.IsFailure(err):
		return good
	}
	return bad
}

// Do runs fn(ctx) if the breaker lets it through and returns fn's error as
// it is, or rejects the call at once with ErrOpen or ErrTooManyRequests.
func (b *Breaker) Do(ctx context.Context, fn func(context.Context) error) (err error) {
	epoch, err := b.enter()
	if err != nil {
		return err
	}
	v := bad // stays bad if fn panics; the panic goes on after leave
	defer func() { b.leave(epoch, v, err) }()
	err = fn(ctx)
	v = b.judge(err)
	return err
}
