// Design: a mailbox of slots, one per replica, under a mutex, and a
// doorbell: a channel with room for one ring that a replica rings without
// blocking after it posts its answer; First wakes on the bell and reads
// every slot it has not seen yet, in the order they were posted (the first
// success posted wins, not the lowest index). Rings that come together are
// coalesced.

package firstwins

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched by the error First and Hedge return when no replica
// succeeded within the timeout.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// First calls every replica at once and returns the first success.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	return Hedge(ctx, clk, timeout, 0, calls...)
}

type mailbox[T any] struct {
	mu       sync.Mutex
	answered []bool
	posted   []int // the slots in the order their answers were posted
	vals     []T
	errs     []error
	bell     chan struct{} // room for one ring: a ring already pending covers the next
}

func newMailbox[T any](n int) *mailbox[T] {
	return &mailbox[T]{answered: make([]bool, n), vals: make([]T, n), errs: make([]error, n), bell: make(chan struct{}, 1)}
}

// post is how a replica answers: never blocks, even after nobody listens.
func (m *mailbox[T]) post(i int, v T, err error) {
	m.mu.Lock()
	m.answered[i], m.vals[i], m.errs[i] = true, v, err
	m.posted = append(m.posted, i)
	m.mu.Unlock()
	select {
	case m.bell <- struct{}{}:
	default:
	}
}

// ask starts call i; its answer goes to slot i.
func (m *mailbox[T]) ask(ctx context.Context, i int, call func(context.Context) (T, error)) {
	go func() {
		v, err := call(ctx)
		m.post(i, v, err)
	}()
}

// Hedge is First with hedged requests: each next replica starts delay
// after the last one started, or at once when a replica fails.
func Hedge[T any](ctx context.Context, clk clock.Clock, timeout, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var deadline <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	m := newMailbox[T](len(calls))
	started := 0
	var hedge *clock.Timer
	defer func() {
		if hedge != nil {
			hedge.Stop()
		}
	}()
	start := func() {
		m.ask(ctx, started, calls[started])
		started++
		if hedge != nil {
			hedge.Stop()
			hedge = nil
		}
		if delay > 0 && started < len(calls) {
			hedge = clk.Timer(delay)
		}
	}
	start()
	for delay <= 0 && started < len(calls) {
		start()
	}
	seen := 0            // m.posted[:seen] are read
	var failures []error // tagged, in the order of calls once all are in
	tagged := make([]error, len(calls))
	failed := 0
	for {
		var due <-chan time.Time
		if hedge != nil {
			due = hedge.C
		}
		select {
		case <-m.bell:
			m.mu.Lock()
			var won *T
			fresh := 0
			for ; seen < len(m.posted); seen++ {
				i := m.posted[seen]
				if m.errs[i] == nil {
					v := m.vals[i]
					won = &v
					break
				}
				tagged[i] = fmt.Errorf("replica %d: %w", i, m.errs[i])
				failed++
				fresh++
			}
			m.mu.Unlock()
			if won != nil {
				return *won, nil
			}
			if failed == len(calls) {
				return zero, errors.Join(tagged...)
			}
			for ; fresh > 0 && started < len(calls); fresh-- {
				start()
			}
		case <-due:
			start()
		case <-deadline:
			failures = append(failures, fmt.Errorf("%w: nothing succeeded in %v: %w", ErrTimeout, timeout, context.DeadlineExceeded))
			return zero, errors.Join(append(failures, tagged...)...)
		case <-ctx.Done():
			return zero, errors.Join(append([]error{ctx.Err()}, tagged...)...)
		}
	}
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect calls every replica at once and returns what arrived by the
// deadline, in the order of calls.
func Collect[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newMailbox[T](len(calls))
	for i, call := range calls {
		m.ask(ctx, i, call)
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := clk.Timer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	var missing error
	for missing == nil {
		m.mu.Lock()
		all := !containsFalse(m.answered)
		m.mu.Unlock()
		if all {
			break
		}
		select {
		case <-m.bell:
		case <-deadline:
			missing = fmt.Errorf("%w: no answer in %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
		case <-ctx.Done():
			missing = ctx.Err()
		}
	}
	out := make([]Reply[T], len(calls))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range out {
		if m.answered[i] {
			out[i] = Reply[T]{m.vals[i], m.errs[i]}
		} else {
			out[i].Err = missing
		}
	}
	return out
}

func containsFalse(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return true
		}
	}
	return false
}
