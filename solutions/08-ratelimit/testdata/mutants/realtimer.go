// Mistake: refills a channel of tokens on the real clock, one time.AfterFunc tick after another while the bucket is not full, instead of on the injected clock.
// Fails: R1 R2 R3 R4 R5 R6 B1 B2
// Expect: (?i)real time

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

// ErrWouldExceedDeadline is matched (errors.Is) by the error Wait returns,
// at once and without taking a token, when its token would be due at or
// after the deadline of its context.
var ErrWouldExceedDeadline = errors.New("ratelimit: the token would come after the context's deadline")

// Limiter is a token bucket: perSecond tokens per second, at most burst of
// them saved up. Create it with New.
type Limiter struct {
	tokens   chan struct{} // the bucket: its capacity is the burst
	interval time.Duration

	mu        sync.Mutex
	refilling bool // a refill tick is scheduled
}

// New returns a limiter that starts full. It panics unless perSecond is
// positive and finite and burst is at least 1. Fractional rates work:
// 0.5 means one token every two seconds.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	if !(perSecond > 0) || math.IsInf(perSecond, 1) || burst < 1 {
		panic(fmt.Sprintf("ratelimit: New(%v per second, burst %d): want a positive, finite rate and a burst of at least 1", perSecond, burst))
	}
	l := &Limiter{tokens: make(chan struct{}, burst), interval: time.Duration(float64(time.Second) / perSecond)}
	for range burst {
		l.tokens <- struct{}{}
	}
	return l
}

// took starts the refill ticks after a token was taken, unless they run.
func (l *Limiter) took() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.refilling {
		l.refilling = true
		time.AfterFunc(l.interval, l.refill)
	}
}

// refill puts a token back and ticks again until the bucket is full.
func (l *Limiter) refill() {
	select {
	case l.tokens <- struct{}{}:
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.tokens) < cap(l.tokens) {
		time.AfterFunc(l.interval, l.refill)
	} else {
		l.refilling = false
	}
}

// Allow takes a token if one is due now and reports whether it did.
func (l *Limiter) Allow() bool {
	select {
	case <-l.tokens:
		l.took()
		return true
	default:
		return false
	}
}

// Wait takes the next token and returns nil when it is due.
func (l *Limiter) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	select {
	case <-l.tokens:
		l.took()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Multi combines limiters (bonus B1). Create it with Combine.
type Multi struct {
	ls []*Limiter
}

// Combine returns a Multi over ls.
func Combine(ls ...*Limiter) *Multi {
	return &Multi{ls}
}

// Allow takes a token from every limiter if each has one.
func (m *Multi) Allow() bool {
	for i, l := range m.ls {
		if !l.Allow() {
			m.giveBack(i)
			return false
		}
	}
	return true
}

func (m *Multi) giveBack(n int) {
	for _, l := range m.ls[:n] {
		select {
		case l.tokens <- struct{}{}:
		default:
		}
	}
}

// Wait takes a token from every limiter.
func (m *Multi) Wait(ctx context.Context) error {
	for i, l := range m.ls {
		if err := l.Wait(ctx); err != nil {
			m.giveBack(i)
			return err
		}
	}
	return nil
}

// Keyed keeps one limiter per key (bonus B2). Create it with NewKeyed.
type Keyed struct {
	clk   clock.Clock
	rate  float64
	burst int

	mu   sync.Mutex
	keys map[string]*Limiter
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	return &Keyed{clk: clk, rate: perSecond, burst: burst, keys: map[string]*Limiter{}}
}

func (k *Keyed) limiter(key string) *Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.keys[key]
	if l == nil {
		l = New(k.clk, k.rate, k.burst)
		k.keys[key] = l
	}
	return l
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool { return k.limiter(key).Allow() }

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error { return k.limiter(key).Wait(ctx) }

// Len is the number of keys remembered now.
func (k *Keyed) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}
