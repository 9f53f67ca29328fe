// Mistake: counts whole tokens in an int: a call that finds 1.5 tokens adds one and restarts the count from now, throwing the half away, and the wait for a token is 1e9/r truncated to whole nanoseconds.
// Fails: R1 R2 R3
// Expect: (?i)(throws the half away|drifts|truncat)

package ratelimit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrWouldExceedDeadline is matched (errors.Is) by the error Wait returns,
// at once and without taking a token, when its token would be due at or
// after the deadline of its context.
var ErrWouldExceedDeadline = errors.New("ratelimit: the token would come after the context's deadline")

// Limiter is a token bucket: perSecond tokens per second, at most burst of
// them saved up. Create it with New.
type Limiter struct {
	clk      clock.Clock
	interval time.Duration
	burst    int
	order    uint64

	mu       sync.Mutex
	tokens   int       // below zero while waiting calls hold reservations
	last     time.Time // when tokens was last brought up to date
	reserved int       // reservations handed out, for cancel
}

var limiters atomic.Uint64

// New returns a limiter that starts full.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: New(%v per second, burst %d): want a positive, finite rate and a burst of at least 1", perSecond, burst))
	}
	return &Limiter{clk: clk, interval: time.Duration(float64(time.Second) / perSecond), burst: burst,
		order: limiters.Add(1), tokens: burst, last: clk.Now()}
}

// refill adds the whole tokens earned since last. Call it with l.mu held.
func (l *Limiter) refill(now time.Time) {
	if n := int(now.Sub(l.last) / l.interval); n > 0 {
		l.tokens = min(l.burst, l.tokens+n)
		l.last = now
	}
}

// due is how long until the next token. Call it after refill.
func (l *Limiter) due() time.Duration {
	if l.tokens >= 1 {
		return 0
	}
	return time.Duration(1-l.tokens) * l.interval
}

// Allow takes a token if one is due now and reports whether it did.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refill(l.clk.Now())
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

type reservation struct {
	l  *Limiter
	id int
}

// cancel gives the token back unless a later token was reserved.
func (r reservation) cancel() {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.l.reserved == r.id {
		r.l.tokens++
		r.l.reserved--
	}
}

func (l *Limiter) reserve() reservation {
	l.tokens--
	l.reserved++
	return reservation{l, l.reserved}
}

// Wait takes the next token and returns nil when it is due.
func (l *Limiter) Wait(ctx context.Context) error {
	if done(ctx) {
		return ctx.Err()
	}
	l.mu.Lock()
	now := l.clk.Now()
	l.refill(now)
	wait := l.due()
	if err := tooLate(ctx, now, now.Add(wait)); err != nil {
		l.mu.Unlock()
		return err
	}
	r := l.reserve()
	l.mu.Unlock()
	return sleep(ctx, l.clk, wait, r)
}

// Multi combines limiters (bonus B1). Create it with Combine.
type Multi struct {
	ls []*Limiter
}

// Combine returns a Multi over ls, which must share one clock.
func Combine(ls ...*Limiter) *Multi {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b *Limiter) int { return cmp.Compare(a.order, b.order) })
	return &Multi{slices.Compact(ls)}
}

func (m *Multi) lock() time.Time {
	for _, l := range m.ls {
		l.mu.Lock()
	}
	now := m.ls[0].clk.Now()
	for _, l := range m.ls {
		l.refill(now)
	}
	return now
}

func (m *Multi) unlock() {
	for _, l := range m.ls {
		l.mu.Unlock()
	}
}

// Allow takes a token from every limiter if each has one due now.
func (m *Multi) Allow() bool {
	m.lock()
	defer m.unlock()
	for _, l := range m.ls {
		if l.tokens < 1 {
			return false
		}
	}
	for _, l := range m.ls {
		l.tokens--
	}
	return true
}

// Wait reserves the next token of every limiter and returns when the
// latest of them is due.
func (m *Multi) Wait(ctx context.Context) error {
	if done(ctx) {
		return ctx.Err()
	}
	now := m.lock()
	var wait time.Duration
	for _, l := range m.ls {
		wait = max(wait, l.due())
	}
	if err := tooLate(ctx, now, now.Add(wait)); err != nil {
		m.unlock()
		return err
	}
	var rs []reservation
	for _, l := range m.ls {
		rs = append(rs, l.reserve())
	}
	m.unlock()
	return sleep(ctx, m.ls[0].clk, wait, rs...)
}

// Keyed keeps one limiter per key (bonus B2). Create it with NewKeyed.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int
	idle  time.Duration

	mu   sync.Mutex
	keys map[string]*keyed
}

type keyed struct {
	*Limiter
	used time.Time
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	New(clk, perSecond, burst)
	return &Keyed{clk: clk, rate: perSecond, burst: burst, idle: idle, keys: map[string]*keyed{}}
}

func (k *Keyed) forget(now time.Time) {
	for key, e := range k.keys {
		e.mu.Lock()
		e.refill(now)
		gone := now.Sub(e.used) >= k.idle && e.tokens == e.burst
		e.mu.Unlock()
		if gone {
			delete(k.keys, key)
		}
	}
}

func (k *Keyed) limiter(key string) *Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.clk.Now()
	k.forget(now)
	e := k.keys[key]
	if e == nil {
		e = &keyed{Limiter: New(k.clk, k.rate, k.burst)}
		k.keys[key] = e
	}
	e.used = now
	return e.Limiter
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool { return k.limiter(key).Allow() }

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error { return k.limiter(key).Wait(ctx) }

// Len is the number of keys remembered now, after forgetting idle ones.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forget(k.clk.Now())
	return len(k.keys)
}

func done(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

func tooLate(ctx context.Context, now, due time.Time) error {
	if dl, ok := ctx.Deadline(); ok && !due.Before(dl) {
		return fmt.Errorf("%w: the token is due in %v, the deadline is in %v", ErrWouldExceedDeadline, due.Sub(now), dl.Sub(now))
	}
	return nil
}

func sleep(ctx context.Context, clk clock.Clock, d time.Duration, rs ...reservation) error {
	if d <= 0 {
		return nil
	}
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, r := range rs {
			r.cancel()
		}
		return ctx.Err()
	}
}
