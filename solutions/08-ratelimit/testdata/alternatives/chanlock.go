// Design: each bucket's lock is a one-slot channel; the state is the due time of the
// next token plus the anchor, and Combine rolls back the tokens it took when one is missing.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrWouldExceedDeadline is matched by Wait's error when the token would come too late.
var ErrWouldExceedDeadline = errors.New("ratelimit: would exceed context deadline")

var ids atomic.Int64

// Limiter is a token bucket.
type Limiter struct {
	id    int64
	clk   clock.Clock
	rate  float64
	burst int
	lock  chan struct{}

	anchor time.Time
	count  int // tokens taken since anchor
}

// New returns a full limiter; it panics on a bad rate or burst.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if !(perSecond > 0 && perSecond <= math.MaxFloat64) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: invalid limiter %v/s burst %d", perSecond, burst))
	}
	return &Limiter{id: ids.Add(1), clk: clk, rate: perSecond, burst: burst, lock: make(chan struct{}, 1), anchor: clk.Now()}
}

func (l *Limiter) acquire() { l.lock <- struct{}{} }
func (l *Limiter) release() { <-l.lock }

// at is the instant token j (1-based since anchor) is due.
func (l *Limiter) at(j int) time.Time {
	k := j - l.burst
	if k <= 0 {
		return l.anchor
	}
	ns := math.Ceil(float64(k) * 1e9 / l.rate)
	if ns >= 1<<63 {
		return l.anchor.Add(math.MaxInt64)
	}
	return l.anchor.Add(time.Duration(ns))
}

// refillTime is when all the taken tokens are back.
func (l *Limiter) refillTime() time.Time {
	if l.count == 0 {
		return l.anchor
	}
	ns := math.Ceil(float64(l.count) * 1e9 / l.rate)
	if ns >= 1<<63 {
		return l.anchor.Add(math.MaxInt64)
	}
	return l.anchor.Add(time.Duration(ns))
}

func (l *Limiter) nextAt(now time.Time) time.Time {
	if !now.Before(l.refillTime()) {
		l.anchor, l.count = now, 0
	}
	return l.at(l.count + 1)
}

// Allow takes a token if one is due now.
func (l *Limiter) Allow() bool {
	l.acquire()
	defer l.release()
	now := l.clk.Now()
	if now.Before(l.nextAt(now)) {
		return false
	}
	l.count++
	return true
}

type hold struct {
	l      *Limiter
	anchor time.Time
	count  int
}

func (h hold) undo() {
	h.l.acquire()
	defer h.l.release()
	if h.l.anchor.Equal(h.anchor) && h.l.count == h.count {
		h.l.count--
	}
}

// Wait takes the next token and returns when it is due.
func (l *Limiter) Wait(ctx context.Context) error {
	return Combine(l).Wait(ctx)
}

// Multi combines limiters.
type Multi struct{ ls []*Limiter }

// Combine returns a Multi over ls.
func Combine(ls ...*Limiter) *Multi {
	byID := map[int64]*Limiter{}
	for _, l := range ls {
		byID[l.id] = l
	}
	m := &Multi{}
	for _, l := range byID {
		m.ls = append(m.ls, l)
	}
	sort.Slice(m.ls, func(i, j int) bool { return m.ls[i].id < m.ls[j].id })
	return m
}

func (m *Multi) acquire() {
	for _, l := range m.ls {
		l.acquire()
	}
}

func (m *Multi) release() {
	for i := len(m.ls) - 1; i >= 0; i-- {
		m.ls[i].release()
	}
}

// Allow takes a token from every limiter, or from none.
func (m *Multi) Allow() bool {
	if len(m.ls) == 0 {
		return true
	}
	m.acquire()
	defer m.release()
	now := m.ls[0].clk.Now()
	for i, l := range m.ls {
		if now.Before(l.nextAt(now)) {
			for _, back := range m.ls[:i] {
				back.count--
			}
			return false
		}
		l.count++
	}
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
	holds, d, err := m.reserve(ctx)
	if err != nil {
		return err
	}
	return m.sleep(ctx, d, holds)
}

// reserve takes a token of every limiter unless the latest comes too late
// for ctx's deadline, and says how long to wait for it.
func (m *Multi) reserve(ctx context.Context) ([]hold, time.Duration, error) {
	m.acquire()
	defer m.release()
	now := m.ls[0].clk.Now()
	latest := now
	for _, l := range m.ls {
		if t := l.nextAt(now); t.After(latest) {
			latest = t
		}
	}
	if dl, ok := ctx.Deadline(); ok && !latest.Before(dl) {
		return nil, 0, fmt.Errorf("%w (token in %v)", ErrWouldExceedDeadline, latest.Sub(now))
	}
	holds := make([]hold, 0, len(m.ls))
	for _, l := range m.ls {
		l.count++
		holds = append(holds, hold{l, l.anchor, l.count})
	}
	return holds, latest.Sub(now), nil
}

// sleep waits d for the reserved tokens, or gives them back if ctx ends first.
func (m *Multi) sleep(ctx context.Context, d time.Duration, holds []hold) error {
	if d <= 0 {
		return nil
	}
	t := m.ls[0].clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, h := range holds {
			h.undo()
		}
		return ctx.Err()
	}
}

// Keyed keeps one limiter per key.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int
	idle  time.Duration
	lock  chan struct{}
	byKey map[string]*entry
}

type entry struct {
	l    *Limiter
	used time.Time
}

// NewKeyed returns a Keyed of New(clk, perSecond, burst) limiters.
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	New(clk, perSecond, burst)
	return &Keyed{clk: clk, rate: perSecond, burst: burst, idle: idle, lock: make(chan struct{}, 1), byKey: map[string]*entry{}}
}

func (k *Keyed) prune(now time.Time) {
	for key, e := range k.byKey {
		if now.Sub(e.used) < k.idle {
			continue
		}
		e.l.acquire()
		full := !now.Before(e.l.refillTime())
		e.l.release()
		if full {
			delete(k.byKey, key)
		}
	}
}

// limiter returns key's limiter. Call it holding k.lock, and take the token
// before releasing it: prune could otherwise forget the bucket in between.
func (k *Keyed) limiter(key string) *Limiter {
	now := k.clk.Now()
	k.prune(now)
	e, ok := k.byKey[key]
	if !ok {
		e = &entry{l: New(k.clk, k.rate, k.burst)}
		k.byKey[key] = e
	}
	e.used = now
	return e.l
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	k.lock <- struct{}{}
	defer func() { <-k.lock }()
	return k.limiter(key).Allow()
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	k.lock <- struct{}{}
	m := Combine(k.limiter(key))
	holds, d, err := m.reserve(ctx)
	<-k.lock
	if err != nil {
		return err
	}
	return m.sleep(ctx, d, holds)
}

// Len is the number of keys remembered now.
func (k *Keyed) Len() int {
	k.lock <- struct{}{}
	defer func() { <-k.lock }()
	k.prune(k.clk.Now())
	return len(k.byKey)
}
