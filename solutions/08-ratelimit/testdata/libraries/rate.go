// Library: golang.org/x/time v0.15.0
// Fails: B1 B2 R1 R2 R3 R4 R6
// Why: rate keeps tokens as a float64 and turns them into a wait by truncating to whole ns, so a token comes up to 1ns before ⌈k·1e9/r⌉ (R1 R2 R3, R4 for waiters at once, and B2, whose buckets are rate's), and at a rate so slow that one token takes more than 292 years the conversion overflows and Allow lets a second call through at once (R1); ReserveN takes no deadline (only WaitN, on the real clock, checks one under rate's lock), so Wait reserves, finds the token too late and cancels it, and CancelAt gives back only what no later reservation took: with Waits at once, one that failed with ErrWouldExceedDeadline can keep a token (R6); a combined Allow or Wait reserves from each limiter and cancels them all when one is short, so a call on a shared limiter in between finds a token gone that comes back a moment later, or is lost (B1); the rest (reservations given back on cancel, keys forgotten with TokensAt) holds.

// Package ratelimit is the kata's API on golang.org/x/time/rate, through
// the methods that take the time as an argument (AllowN, ReserveN,
// DelayFrom, CancelAt, TokensAt), so the limiter runs on the injected
// clock. rate.Limiter.Wait itself reads time.Now and waits on a real
// timer: it cannot be used here. The glue adds what rate does not do:
// New's checks, the wait on the clock, Combine and Keyed.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"golang.org/x/time/rate"
)

// ErrWouldExceedDeadline is matched by the error Wait returns when its
// token would come at or after the deadline of its context.
var ErrWouldExceedDeadline = errors.New("ratelimit: the token would come after the context's deadline")

// Limiter is a rate.Limiter and the clock it is read with.
type Limiter struct {
	clk clock.Clock
	lim *rate.Limiter
}

// New returns a limiter that starts full. rate itself accepts a zero rate
// (only the burst, ever) and rate.Inf (no limit): the kata's contract
// refuses both.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: New(%v per second, burst %d): want a positive, finite rate and a burst of at least 1", perSecond, burst))
	}
	return &Limiter{clk: clk, lim: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// Allow is AllowN at the clock's time.
func (l *Limiter) Allow() bool { return l.lim.AllowN(l.clk.Now(), 1) }

// Wait reserves a token at the clock's time and waits for it on the clock.
func (l *Limiter) Wait(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r, delay, err := l.reserve(ctx)
	if err != nil {
		return err
	}
	return sleep(ctx, l.clk, delay, r)
}

// reserve reserves a token at the clock's time, unless it comes too late
// for ctx's deadline, and says how long to wait for it.
func (l *Limiter) reserve(ctx context.Context) (*rate.Reservation, time.Duration, error) {
	now := l.clk.Now()
	r := l.lim.ReserveN(now, 1)
	delay := r.DelayFrom(now)
	if err := tooLate(ctx, now, delay); err != nil {
		r.CancelAt(now)
		return nil, 0, err
	}
	return r, delay, nil
}

// Multi reserves a token of every limiter and waits for the latest.
type Multi struct {
	ls []*Limiter
}

// Combine returns a Multi over ls, each limiter once: one passed more
// than once counts once.
func Combine(ls ...*Limiter) *Multi {
	m := &Multi{}
	for _, l := range ls {
		if !slices.Contains(m.ls, l) {
			m.ls = append(m.ls, l)
		}
	}
	return m
}

func (m *Multi) reserve(now time.Time) ([]*rate.Reservation, time.Duration) {
	var rs []*rate.Reservation
	var delay time.Duration
	for _, l := range m.ls {
		r := l.lim.ReserveN(now, 1)
		rs = append(rs, r)
		delay = max(delay, r.DelayFrom(now))
	}
	return rs, delay
}

// Allow takes a token from every limiter, or from none.
func (m *Multi) Allow() bool {
	if len(m.ls) == 0 {
		return true
	}
	now := m.ls[0].clk.Now()
	rs, delay := m.reserve(now)
	if delay > 0 {
		cancelAll(rs, now)
		return false
	}
	return true
}

// Wait waits for the latest of the limiters' next tokens.
func (m *Multi) Wait(ctx context.Context) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(m.ls) == 0 {
		return nil
	}
	clk := m.ls[0].clk
	now := clk.Now()
	rs, delay := m.reserve(now)
	if err := tooLate(ctx, now, delay); err != nil {
		cancelAll(rs, now)
		return err
	}
	return sleep(ctx, clk, delay, rs...)
}

func cancelAll(rs []*rate.Reservation, now time.Time) {
	for _, r := range rs {
		r.CancelAt(now)
	}
}

// Keyed is a map of rate.Limiters, one per key, cleaned of idle full ones.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int
	idle  time.Duration
	mu    sync.Mutex
	keys  map[string]*keyed
}

type keyed struct {
	*Limiter
	used time.Time
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	New(clk, perSecond, burst) // the same checks
	return &Keyed{clk: clk, rate: perSecond, burst: burst, idle: idle, keys: map[string]*keyed{}}
}

// use returns key's limiter. Call it with k.mu held, and take the token
// before unlocking: a bucket found here and used after the unlock could be
// forgotten in between, and the key would get a second, full one.
func (k *Keyed) use(key string) *Limiter {
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

// forget drops the keys whose bucket is full (TokensAt) and idle.
func (k *Keyed) forget(now time.Time) {
	for key, e := range k.keys {
		if now.Sub(e.used) >= k.idle && e.lim.TokensAt(now) >= float64(k.burst) {
			delete(k.keys, key)
		}
	}
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.use(key).Allow()
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	k.mu.Lock()
	l := k.use(key)
	r, delay, err := l.reserve(ctx)
	k.mu.Unlock()
	if err != nil {
		return err
	}
	return sleep(ctx, k.clk, delay, r)
}

// Len is the number of keys remembered now.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forget(k.clk.Now())
	return len(k.keys)
}

// tooLate refuses a token due at or after ctx's deadline.
func tooLate(ctx context.Context, now time.Time, delay time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && !now.Add(delay).Before(dl) {
		return fmt.Errorf("%w: the token is due in %v", ErrWouldExceedDeadline, delay)
	}
	return nil
}

// sleep waits d on the clock; a cancel gives the reservations back.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration, rs ...*rate.Reservation) error {
	if d <= 0 {
		return nil
	}
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		cancelAll(rs, clk.Now())
		return ctx.Err()
	}
}
