// Design: one package-wide mutex guards every bucket, so Combine and Keyed need no
// lock ordering; a cancel gives its token back by ticket (the last one handed out).
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrWouldExceedDeadline is matched by Wait's error when the token would come too late.
var ErrWouldExceedDeadline = errors.New("ratelimit: token due after the deadline")

var mu sync.Mutex // guards every Limiter and Keyed

// Limiter is a token bucket.
type Limiter struct {
	clk    clock.Clock
	r      float64
	burst  int
	anchor time.Time
	n      int    // tokens taken since anchor
	ticket uint64 // the last token handed out
	prev   map[uint64]uint64
	seq    uint64
}

// New returns a full limiter; it panics on a bad rate or burst.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if math.IsNaN(perSecond) || perSecond <= 0 || math.IsInf(perSecond, 0) || burst < 1 {
		panic("ratelimit: bad rate or burst")
	}
	return &Limiter{clk: clk, r: perSecond, burst: burst, anchor: clk.Now(), prev: map[uint64]uint64{}}
}

func (l *Limiter) offset(k int) time.Duration {
	if k <= 0 {
		return 0
	}
	ns := math.Ceil(float64(k) * 1e9 / l.r)
	if ns >= float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// due returns when the next token is due, restarting the anchor on a full bucket.
func (l *Limiter) due(now time.Time) time.Time {
	if full := l.anchor.Add(l.offset(l.n)); !full.After(now) {
		l.anchor, l.n = now, 0
	}
	return l.anchor.Add(l.offset(l.n + 1 - l.burst))
}

type ticket struct {
	l  *Limiter
	id uint64
}

func (l *Limiter) takeOne() ticket {
	l.n++
	l.seq++
	l.prev[l.seq] = l.ticket
	l.ticket = l.seq
	return ticket{l, l.seq}
}

func (t ticket) giveBack() {
	if t.l.ticket == t.id {
		t.l.n--
		t.l.ticket = t.l.prev[t.id]
	}
	delete(t.l.prev, t.id)
}

func (t ticket) done() { delete(t.l.prev, t.id) }

// Allow takes a token if one is due now.
func (l *Limiter) Allow() bool {
	mu.Lock()
	defer mu.Unlock()
	return l.allow(l.clk.Now())
}

// allow takes a token if one is due at now. Call it with mu held.
func (l *Limiter) allow(now time.Time) bool {
	if l.due(now).After(now) {
		return false
	}
	l.takeOne().done()
	return true
}

// Wait takes the next token and returns when it is due.
func (l *Limiter) Wait(ctx context.Context) error {
	return waitAll(ctx, l.clk, func(time.Time) []*Limiter { return []*Limiter{l} })
}

// waitAll reserves a token of each limiter that pick returns (under mu, at
// now) and returns when the latest is due.
func waitAll(ctx context.Context, clk clock.Clock, pick func(now time.Time) []*Limiter) error {
	if ctx.Done() != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
	}
	mu.Lock()
	now := clk.Now()
	ls := pick(now)
	latest := now
	for _, l := range ls {
		if d := l.due(now); d.After(latest) {
			latest = d
		}
	}
	if dl, ok := ctx.Deadline(); ok && !latest.Before(dl) {
		mu.Unlock()
		return fmt.Errorf("wait %v, deadline in %v: %w", latest.Sub(now), dl.Sub(now), ErrWouldExceedDeadline)
	}
	ts := make([]ticket, len(ls))
	for i, l := range ls {
		l.due(now)
		ts[i] = l.takeOne()
	}
	mu.Unlock()
	finish := func(cancelled bool) {
		mu.Lock()
		defer mu.Unlock()
		for i := len(ts) - 1; i >= 0; i-- {
			if cancelled {
				ts[i].giveBack()
			} else {
				ts[i].done()
			}
		}
	}
	wait := latest.Sub(now)
	if wait <= 0 {
		finish(false)
		return nil
	}
	timer := clk.Timer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		finish(false)
		return nil
	case <-ctx.Done():
		finish(true)
		return ctx.Err()
	}
}

// Multi combines limiters.
type Multi struct {
	ls []*Limiter
}

// Combine returns a Multi over ls.
func Combine(ls ...*Limiter) *Multi {
	var uniq []*Limiter
	seen := map[*Limiter]bool{}
	for _, l := range ls {
		if !seen[l] {
			seen[l] = true
			uniq = append(uniq, l)
		}
	}
	return &Multi{uniq}
}

// Allow takes a token from every limiter, or from none.
func (m *Multi) Allow() bool {
	mu.Lock()
	defer mu.Unlock()
	if len(m.ls) == 0 {
		return true
	}
	now := m.ls[0].clk.Now()
	for _, l := range m.ls {
		if l.due(now).After(now) {
			return false
		}
	}
	for _, l := range m.ls {
		l.takeOne().done()
	}
	return true
}

// Wait reserves a token of every limiter and returns when the latest is due.
func (m *Multi) Wait(ctx context.Context) error {
	if len(m.ls) == 0 {
		return nil
	}
	return waitAll(ctx, m.ls[0].clk, func(time.Time) []*Limiter { return m.ls })
}

// Keyed keeps one limiter per key.
type Keyed struct {
	clk   clock.Clock
	r     float64
	burst int
	idle  time.Duration
	m     map[string]*Limiter
	last  map[string]time.Time
}

// NewKeyed returns a Keyed of New(clk, perSecond, burst) limiters.
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	_ = New(clk, perSecond, burst)
	return &Keyed{clk: clk, r: perSecond, burst: burst, idle: idle, m: map[string]*Limiter{}, last: map[string]time.Time{}}
}

func (k *Keyed) sweep(now time.Time) {
	for key, l := range k.m {
		full := !l.anchor.Add(l.offset(l.n)).After(now)
		if full && now.Sub(k.last[key]) >= k.idle {
			delete(k.m, key)
			delete(k.last, key)
		}
	}
}

// get returns key's limiter. Call it with mu held, and take the token
// before unlocking: sweep could otherwise forget the bucket in between.
func (k *Keyed) get(key string, now time.Time) *Limiter {
	k.sweep(now)
	l, ok := k.m[key]
	if !ok {
		l = New(k.clk, k.r, k.burst)
		k.m[key] = l
	}
	k.last[key] = now
	return l
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	mu.Lock()
	defer mu.Unlock()
	now := k.clk.Now()
	return k.get(key, now).allow(now)
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	return waitAll(ctx, k.clk, func(now time.Time) []*Limiter { return []*Limiter{k.get(key, now)} })
}

// Len is the number of keys remembered now.
func (k *Keyed) Len() int {
	mu.Lock()
	defer mu.Unlock()
	k.sweep(k.clk.Now())
	return len(k.m)
}
