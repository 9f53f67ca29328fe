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
// computed as time.Duration(math.Ceil(float64(j-burst) * 1e9 / r)), or
// math.MaxInt64 when that does not fit in a Duration (at rates below about
// 1.1e-10 per second, where the conversion would overflow). After
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
	"context"
	"errors"
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
	// TODO: your fields
}

// New returns a limiter that starts full. It panics unless perSecond is
// positive and finite and burst is at least 1. Fractional rates work:
// 0.5 means one token every two seconds.
func New(clk clock.Clock, perSecond float64, burst int) *Limiter {
	panic("TODO: return a full bucket whose time comes from clk")
}

// Allow takes a token if one is due now and reports whether it did. It
// never waits and, when it answers false, it changes nothing.
func (l *Limiter) Allow() bool {
	panic("TODO: take a token if one is due at clk.Now()")
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
	panic("TODO: reserve the next token under the lock, then wait for it on a clk.Timer and ctx.Done()")
}

// Multi combines limiters (bonus B1): a call goes through only when every
// one of them has a token for it, for example 10 per second and 100 per
// minute. Create it with Combine.
type Multi struct {
	// TODO: your fields
}

// Combine returns a Multi over ls, which must share one clock. A limiter
// passed more than once counts once: one token of it per call. A limiter
// may belong to several Multis and still be used on its own. With no
// limiter at all, it limits nothing: Allow answers true and Wait does not
// wait.
func Combine(ls ...*Limiter) *Multi {
	panic("TODO: bonus B1")
}

// Allow takes a token from every limiter if each has one due now, and
// reports whether it did. When any of them has none, it takes nothing.
func (m *Multi) Allow() bool {
	panic("TODO: bonus B1: all or nothing")
}

// Wait reserves the next token of every limiter and returns when the
// latest of them is due. The context is handled as in Limiter.Wait: a
// deadline before the latest token fails at once and takes nothing, and a
// cancel gives every reserved token back (each under Limiter.Wait's rule).
func (m *Multi) Wait(ctx context.Context) error {
	panic("TODO: bonus B1")
}

// Keyed keeps one limiter per key (bonus B2), such as a client's IP
// address, and forgets the keys nobody uses. Create it with NewKeyed.
type Keyed struct {
	// TODO: your fields
}

// NewKeyed returns a Keyed whose limiters are New(clk, perSecond, burst).
// A key is forgotten once its bucket is full again and no call has used it
// for at least idle: a full bucket is the same as a new one, so forgetting
// it changes no answer, and memory stays bounded by the keys in use. Every
// call of Allow, Wait and Len first forgets such keys.
func NewKeyed(clk clock.Clock, perSecond float64, burst int, idle time.Duration) *Keyed {
	panic("TODO: bonus B2")
}

// Allow is Allow on key's limiter.
func (k *Keyed) Allow(key string) bool {
	panic("TODO: bonus B2")
}

// Wait is Wait on key's limiter.
func (k *Keyed) Wait(ctx context.Context, key string) error {
	panic("TODO: bonus B2")
}

// Len is the number of keys remembered now, after forgetting idle ones.
func (k *Keyed) Len() int {
	panic("TODO: bonus B2")
}
