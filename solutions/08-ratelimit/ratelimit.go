// Package ratelimit is a token bucket on an injected clock: r tokens per
// second, at most burst of them saved up. Allow takes a token if one is
// there and never waits; Wait takes the next token and sleeps until it is
// due, unless the caller cancels first or its deadline comes too soon.
//
// # The arithmetic, in integer nanoseconds
//
// The bucket starts full. Count time from the anchor: the instant a token
// was last taken from a full bucket (for a new limiter, its first call).
// The j-th token taken since the anchor (the one taken at the anchor is
// j = 1) is due at
//
//	anchor + ⌈(j − burst)·1e9/r⌉ ns, or at the anchor itself when j ≤ burst
//
// computed as time.Duration(math.Ceil(float64(j-burst) * 1e9 / r)). After
// the burst, tokens come at ⌈1e9/r⌉, ⌈2e9/r⌉, ⌈3e9/r⌉ … ns: at r = 3, at
// 333333334, 666666667 and 1000000000 ns. Compute every due time from the
// anchor: adding up rounded intervals, or keeping the count of tokens as a
// float64 that is topped up on every call, drifts by a nanosecond.
//
// With n tokens taken since the anchor, the bucket is full again once
// anchor + ⌈n·1e9/r⌉ ≤ now: all of them have come back. The next token
// taken then starts a new anchor, so a quiet spell saves up burst tokens,
// never more, and the time the bucket sat full is lost.
//
// # Concurrency
//
// A Limiter is safe for concurrent use. Wait reserves its token at once,
// even when it is due later, so concurrent waiters get consecutive tokens,
// 1/r apart; tokens reserved by waiting calls are not there for Allow.
// Hold the mutex only to read the clock and do the arithmetic, never while
// waiting: a Wait that sleeps holding it blocks every other call, Allow
// included.
//
// No method starts a goroutine, so nothing is left running when one
// returns. All time comes from the injected clock.Clock, never from
// package time. To wait, create a fresh clk.Timer, select on its channel
// and ctx.Done(), and Stop it when done (never Reset a mock timer: Reset
// on a fired, undrained timer blocks the mock's next Add). Do not poll
// ctx.Err() while waiting: select on ctx.Done() instead.
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
	clk   clock.Clock
	rate  float64
	burst int
	order uint64 // the order in which a Multi locks its limiters

	mu     sync.Mutex
	anchor time.Time // when a token was last taken from a full bucket
	taken  int       // tokens taken since anchor, those of waiting calls included
}

var limiters atomic.Uint64

// New returns a limiter that starts full. It panics unless perSecond is
// positive and finite and burst is at least 1. Fractional rates work:
// 0.5 means one token every two seconds.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: New(%v per second, burst %d): want a positive, finite rate and a burst of at least 1", perSecond, burst))
	}
	return &Limiter{clk: clk, rate: perSecond, burst: burst, order: limiters.Add(1), anchor: clk.Now()}
}

// after is how long after the anchor the k-th token past the burst is due.
// Every due time is computed afresh from the anchor, so nothing drifts.
func (l *Limiter) after(k int) time.Duration {
	ns := math.Ceil(float64(k) * 1e9 / l.rate)
	if ns >= math.MaxInt64 { // float64(math.MaxInt64) is 2⁶³, one past the largest Duration
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// full reports whether every token taken since the anchor has come back.
func (l *Limiter) full(now time.Time) bool {
	return !l.anchor.Add(l.after(l.taken)).After(now)
}

// next returns when the next token is due. A full bucket starts a new
// anchor first: the time it sat full is lost. Call it with l.mu held.
func (l *Limiter) next(now time.Time) time.Time {
	if l.full(now) {
		l.anchor, l.taken = now, 0
	}
	return l.anchor.Add(l.after(l.taken + 1 - l.burst))
}

// Allow takes a token if one is due now and reports whether it did. It
// never waits and, when it answers false, it changes nothing.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.take(l.clk.Now())
}

// take takes a token if one is due now. Call it with l.mu held.
func (l *Limiter) take(now time.Time) bool {
	if l.next(now).After(now) {
		return false
	}
	l.taken++
	return true
}

// reservation is a token taken by a Wait that has not returned yet.
type reservation struct {
	l      *Limiter
	anchor time.Time
	taken  int // l.taken right after this token was taken
}

// reserve takes the next token for a Wait, unless it comes too late for
// ctx's deadline. It returns how long to wait for it. Call it with l.mu held.
func (l *Limiter) reserve(ctx context.Context, now time.Time) (reservation, time.Duration, error) {
	due := l.next(now)
	if err := tooLate(ctx, now, due); err != nil {
		return reservation{}, 0, err
	}
	l.taken++
	return reservation{l, l.anchor, l.taken}, due.Sub(now), nil
}

// cancel gives the token back if nobody has taken one since: a later
// waiter owns the token after it, so this one cannot be handed out again.
func (r reservation) cancel() {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	if r.l.taken == r.taken && r.l.anchor.Equal(r.anchor) {
		r.l.taken--
	}
}

// Wait takes the next token and returns nil when it is due: at once if
// one is there now.
//
// If ctx is already done, Wait returns ctx.Err() and takes nothing. If ctx
// has a deadline (ctx.Deadline(), an instant on the injected clock, as made
// by clk.WithTimeout or clk.WithDeadline) and the token would be due at or
// after it, Wait returns an error matching ErrWouldExceedDeadline at once,
// without waiting and without taking the token.
//
// If ctx is done while Wait waits, Wait returns ctx.Err() at once and
// gives its token back, provided no later call has reserved a token after
// it: later waiters keep their turns, so the token cannot be handed out
// a second time.
func (l *Limiter) Wait(ctx context.Context) error {
	if done(ctx) {
		return ctx.Err()
	}
	l.mu.Lock()
	r, wait, err := l.reserve(ctx, l.clk.Now())
	l.mu.Unlock() // never wait holding the lock
	if err != nil {
		return err
	}
	return sleep(ctx, l.clk, wait, r)
}

// Multi combines limiters (bonus B1): a call goes through only when every
// one of them has a token for it, for example 10 per second and 100 per
// minute. Create it with Combine.
type Multi struct {
	ls []*Limiter // in lock order, without duplicates
}

// Combine returns a Multi over ls, which must share one clock. A limiter
// passed more than once counts once: one token of it per call. A limiter
// may belong to several Multis and still be used on its own.
func Combine(ls ...*Limiter) *Multi {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b *Limiter) int { return cmp.Compare(a.order, b.order) })
	return &Multi{slices.Compact(ls)}
}

// lock locks every limiter, always in the same order, so that two Multis
// sharing limiters cannot deadlock, and returns the time.
func (m *Multi) lock() time.Time {
	for _, l := range m.ls {
		l.mu.Lock()
	}
	if len(m.ls) == 0 {
		return time.Time{}
	}
	return m.ls[0].clk.Now()
}

func (m *Multi) unlock() {
	for _, l := range m.ls {
		l.mu.Unlock()
	}
}

// next is when every limiter has a token: the latest of their next tokens.
func (m *Multi) next(now time.Time) time.Time {
	due := now
	for _, l := range m.ls {
		if t := l.next(now); t.After(due) {
			due = t
		}
	}
	return due
}

// Allow takes a token from every limiter if each has one due now, and
// reports whether it did. When any of them has none, it takes nothing.
func (m *Multi) Allow() bool {
	now := m.lock()
	defer m.unlock()
	if m.next(now).After(now) {
		return false
	}
	for _, l := range m.ls {
		l.taken++
	}
	return true
}

// Wait reserves the next token of every limiter and returns when the
// latest of them is due. The context is handled as in Limiter.Wait: a
// deadline before the latest token fails at once and takes nothing, and a
// cancel gives every reserved token back (each under Limiter.Wait's rule).
func (m *Multi) Wait(ctx context.Context) error {
	if done(ctx) {
		return ctx.Err()
	}
	now := m.lock()
	due := m.next(now)
	if err := tooLate(ctx, now, due); err != nil {
		m.unlock()
		return err
	}
	rs := make([]reservation, len(m.ls))
	for i, l := range m.ls {
		rs[i], _, _ = l.reserve(context.Background(), now) // no deadline: checked above
	}
	m.unlock()
	if len(m.ls) == 0 {
		return nil
	}
	return sleep(ctx, m.ls[0].clk, due.Sub(now), rs...)
}

// Keyed keeps one limiter per key (bonus B2), such as a client's IP
// address, and forgets the keys nobody uses. Create it with NewKeyed.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int
	idle  time.Duration

	mu   sync.Mutex // taken before any limiter's
	keys map[string]*keyed
}

type keyed struct {
	*Limiter
	used time.Time
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
// A key is forgotten once its bucket is full again and no call has used it
// for at least idle: a full bucket is the same as a new one, so forgetting
// it changes no answer, and memory stays bounded by the keys in use. Every
// call of Allow, Wait and Len first forgets such keys.
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	New(clk, perSecond, burst) // the same checks
	return &Keyed{clk: clk, rate: perSecond, burst: burst, idle: idle, keys: map[string]*keyed{}}
}

// forget drops the keys that are full and idle. Call it with k.mu held.
func (k *Keyed) forget(now time.Time) {
	for key, e := range k.keys {
		e.mu.Lock()
		gone := now.Sub(e.used) >= k.idle && e.full(now)
		e.mu.Unlock()
		if gone {
			delete(k.keys, key)
		}
	}
}

// use returns key's limiter, locked, and the time. Call it with k.mu held.
func (k *Keyed) use(key string) (*Limiter, time.Time) {
	now := k.clk.Now()
	k.forget(now)
	e := k.keys[key]
	if e == nil {
		e = &keyed{Limiter: New(k.clk, k.rate, k.burst)}
		k.keys[key] = e
	}
	e.used = now
	e.mu.Lock()
	return e.Limiter, now
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, now := k.use(key)
	defer l.mu.Unlock()
	return l.take(now)
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	if done(ctx) {
		return ctx.Err()
	}
	k.mu.Lock()
	l, now := k.use(key)
	r, wait, err := l.reserve(ctx, now)
	l.mu.Unlock()
	k.mu.Unlock()
	if err != nil {
		return err
	}
	return sleep(ctx, k.clk, wait, r)
}

// Len is the number of keys remembered now, after forgetting idle ones.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forget(k.clk.Now())
	return len(k.keys)
}

// done reports whether ctx is done, without polling ctx.Err() (the mock
// clock's contexts set it without a lock).
func done(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// tooLate fails when a token due at due cannot be used before ctx's
// deadline: the context is done at its deadline, so at it is too late.
func tooLate(ctx context.Context, now, due time.Time) error {
	if dl, ok := ctx.Deadline(); ok && !due.Before(dl) {
		return fmt.Errorf("%w: the token is due in %v, the deadline is in %v", ErrWouldExceedDeadline, due.Sub(now), dl.Sub(now))
	}
	return nil
}

// sleep waits d on clk for the reserved tokens rs, or gives them back if
// ctx is done first. A fresh timer per wait, stopped on the way out.
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
