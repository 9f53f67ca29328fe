// Design: no mutex: each bucket's state is an immutable value behind an
// atomic.Pointer, replaced by compare-and-swap; Combine claims each bucket by
// installing a claim (a channel other calls wait on), so it updates all at once.
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

// ErrWouldExceedDeadline is matched by Wait's error when the token would
// be due at or after the context's deadline.
var ErrWouldExceedDeadline = errors.New("ratelimit: token due after the deadline")

// bucket is one state of a limiter; it is never changed once published.
type bucket struct {
	anchor time.Time
	taken  int
	claim  chan struct{} // not nil while a Multi owns the limiter; closed when it lets go
}

// Limiter is a token bucket whose state is swapped atomically.
type Limiter struct {
	clk   clock.Clock
	rate  float64
	burst int
	id    uint64
	state atomic.Pointer[bucket]
}

var ids atomic.Uint64

// New returns a full limiter. It panics unless perSecond is positive and
// finite and burst is at least 1.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if math.IsNaN(perSecond) || perSecond <= 0 || math.IsInf(perSecond, 0) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: rate %v and burst %d: the rate must be positive and finite, the burst at least 1", perSecond, burst))
	}
	l := &Limiter{clk: clk, rate: perSecond, burst: burst, id: ids.Add(1)}
	l.state.Store(&bucket{anchor: clk.Now()})
	return l
}

// since is ⌈k·1e9/r⌉ ns, clamped to the largest Duration.
func (l *Limiter) since(k int) time.Duration {
	ns := math.Ceil(float64(k) * 1e9 / l.rate)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// due returns the state to take the next token from (a new anchor if the
// bucket is full again) and when that token is due.
func (l *Limiter) due(b bucket, now time.Time) (bucket, time.Time) {
	if !b.anchor.Add(l.since(b.taken)).After(now) {
		b = bucket{anchor: now}
	}
	return b, b.anchor.Add(l.since(b.taken + 1 - l.burst))
}

// load returns the current state, waiting while a Multi holds a claim.
func (l *Limiter) load() *bucket {
	for {
		b := l.state.Load()
		if b.claim == nil {
			return b
		}
		<-b.claim
	}
}

// Allow takes a token if one is due now.
func (l *Limiter) Allow() bool {
	for {
		old := l.load()
		now := l.clk.Now()
		b, due := l.due(*old, now)
		if due.After(now) {
			return false
		}
		b.taken++
		if l.state.CompareAndSwap(old, &b) {
			return true
		}
	}
}

// hold is a token a Wait reserved: the state it published.
type hold struct {
	l      *Limiter
	anchor time.Time
	taken  int
}

// reserve takes the next token unless it comes at or after ctx's deadline.
func (l *Limiter) reserve(ctx context.Context) (hold, time.Duration, error) {
	for {
		old := l.load()
		now := l.clk.Now()
		b, due := l.due(*old, now)
		if err := late(ctx, now, due); err != nil {
			return hold{}, 0, err
		}
		b.taken++
		if l.state.CompareAndSwap(old, &b) {
			return hold{l, b.anchor, b.taken}, due.Sub(now), nil
		}
	}
}

// giveBack returns the token if nobody took one after it.
func (h hold) giveBack() {
	for {
		old := h.l.load()
		if old.taken != h.taken || !old.anchor.Equal(h.anchor) {
			return
		}
		b := *old
		b.taken--
		if h.l.state.CompareAndSwap(old, &b) {
			return
		}
	}
}

// Wait takes the next token and returns when it is due.
func (l *Limiter) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	h, d, err := l.reserve(ctx)
	if err != nil {
		return err
	}
	return pause(ctx, l.clk, d, h)
}

func late(ctx context.Context, now, due time.Time) error {
	if dl, ok := ctx.Deadline(); ok && !due.Before(dl) {
		return fmt.Errorf("%w (due in %v, deadline in %v)", ErrWouldExceedDeadline, due.Sub(now), dl.Sub(now))
	}
	return nil
}

func pause(ctx context.Context, clk clock.Clock, d time.Duration, hs ...hold) error {
	if d <= 0 {
		return nil
	}
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, h := range hs {
			h.giveBack()
		}
		return ctx.Err()
	}
}

// Multi combines limiters.
type Multi struct {
	ls []*Limiter // by id, without duplicates
}

// Combine returns a Multi over ls.
func Combine(ls ...*Limiter) *Multi {
	ls = slices.Clone(ls)
	slices.SortFunc(ls, func(a, b *Limiter) int { return cmp.Compare(a.id, b.id) })
	return &Multi{slices.Compact(ls)}
}

// claimAll installs a claim on every limiter, in id order, and returns
// their states; release publishes the new states and lets waiters go.
func (m *Multi) claimAll() (states []bucket, release func(next []bucket)) {
	done := make(chan struct{})
	states = make([]bucket, len(m.ls))
	for i, l := range m.ls {
		for {
			old := l.load()
			c := *old
			c.claim = done
			if l.state.CompareAndSwap(old, &c) {
				states[i] = *old
				break
			}
		}
	}
	return states, func(next []bucket) {
		for i, l := range m.ls {
			b := next[i]
			b.claim = nil
			l.state.Store(&b)
		}
		close(done)
	}
}

// Allow takes a token from every limiter or from none.
func (m *Multi) Allow() bool {
	if len(m.ls) == 0 {
		return true
	}
	states, release := m.claimAll()
	now := m.ls[0].clk.Now()
	next := make([]bucket, len(states))
	ok := true
	for i, l := range m.ls {
		b, due := l.due(states[i], now)
		next[i] = b
		ok = ok && !due.After(now)
	}
	if !ok {
		release(states)
		return false
	}
	for i := range next {
		next[i].taken++
	}
	release(next)
	return true
}

// Wait reserves a token of every limiter and returns when the latest is due.
func (m *Multi) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	if len(m.ls) == 0 {
		return nil
	}
	states, release := m.claimAll()
	now := m.ls[0].clk.Now()
	next := make([]bucket, len(states))
	latest := now
	for i, l := range m.ls {
		b, due := l.due(states[i], now)
		next[i] = b
		if due.After(latest) {
			latest = due
		}
	}
	if err := late(ctx, now, latest); err != nil {
		release(states)
		return err
	}
	hs := make([]hold, len(m.ls))
	for i, l := range m.ls {
		next[i].taken++
		hs[i] = hold{l, next[i].anchor, next[i].taken}
	}
	release(next)
	return pause(ctx, m.ls[0].clk, latest.Sub(now), hs...)
}

// Keyed keeps one limiter per key and forgets full, idle ones.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int
	idle  time.Duration

	mu   sync.Mutex
	keys map[string]*keyEntry
}

type keyEntry struct {
	l    *Limiter
	used time.Time
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	New(clk, perSecond, burst)
	return &Keyed{clk: clk, rate: perSecond, burst: burst, idle: idle, keys: map[string]*keyEntry{}}
}

func (k *Keyed) forget(now time.Time) {
	for key, e := range k.keys {
		b := e.l.load()
		if now.Sub(e.used) >= k.idle && !b.anchor.Add(e.l.since(b.taken)).After(now) {
			delete(k.keys, key)
		}
	}
}

func (k *Keyed) limiter(key string) *Limiter {
	now := k.clk.Now()
	k.forget(now)
	e := k.keys[key]
	if e == nil {
		e = &keyEntry{l: New(k.clk, k.rate, k.burst)}
		k.keys[key] = e
	}
	e.used = now
	return e.l
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.limiter(key).Allow()
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	k.mu.Lock()
	l := k.limiter(key)
	h, d, err := l.reserve(ctx) // under k.mu, so the key is not forgotten meanwhile
	k.mu.Unlock()
	if err != nil {
		return err
	}
	return pause(ctx, k.clk, d, h)
}

// Len is the number of keys remembered now.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forget(k.clk.Now())
	return len(k.keys)
}
