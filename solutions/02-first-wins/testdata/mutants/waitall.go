// Mistake: waits for every replica to answer and only then returns the first success, so one slow replica delays every call and the losers are cancelled only after they finished anyway.
// Fails: R1 R4
// Expect: (?i)don.t wait for the others

package firstwins

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// ErrTimeout is matched (errors.Is) by the error First and Hedge return when
// no replica succeeded within the timeout; that error also matches
// context.DeadlineExceeded and the errors of the replicas that failed before.
var ErrTimeout = errors.New("firstwins: timed out")

// ErrNoCalls is returned at once by First and Hedge when they get no calls.
var ErrNoCalls = errors.New("firstwins: no calls")

// First calls every replica at once, each with a context derived from ctx,
// and returns the value of the first one that succeeds.
//
// A replica's error is recorded, not returned, while others may still
// succeed. First returns as soon as one of these happens:
//   - a replica succeeds: its value and a nil error;
//   - every replica has failed: errors.Join of their errors in the order of
//     calls, each as "replica i: err" (i is the index in calls);
//   - timeout has passed on clk (timeout <= 0 means no timeout): an error
//     matching ErrTimeout, context.DeadlineExceeded and the errors so far;
//   - ctx is done: an error matching ctx.Err() and the errors so far.
//
// On return the replicas' context is cancelled. No calls at all is ErrNoCalls.
func First[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	deadline, stop := timer(clk, timeout)
	defer stop()
	replies := make(chan reply[T], len(calls))
	for i, call := range calls {
		go func() {
			v, err := call(ctx)
			replies <- reply[T]{i, v, err}
		}()
	}
	errs := make([]error, len(calls))
	var won *reply[T]
	for n := 0; n < len(calls); n++ {
		select {
		case r := <-replies:
			if r.err != nil {
				errs[r.i] = fmt.Errorf("replica %d: %w", r.i, r.err)
			} else if won == nil {
				won = &r
			}
		case <-deadline:
			err := fmt.Errorf("%w: no replica succeeded within %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
			return zero, errors.Join(append([]error{err}, errs...)...)
		case <-ctx.Done():
			return zero, errors.Join(append([]error{ctx.Err()}, errs...)...)
		}
	}
	if won != nil {
		return won.v, nil
	}
	return zero, errors.Join(errs...)
}

// Hedge is First with hedged requests: it starts calls[0] at once, and each
// next replica when delay has passed on clk since the last one started, or
// at once when a replica fails, whichever comes first. delay <= 0 starts
// every replica at once, like First. Replicas not started when Hedge returns
// are never called. The timeout counts from the start of Hedge. Results and
// errors are as for First.
func Hedge[T any](ctx context.Context, clk clock.Clock, timeout, delay time.Duration, calls ...func(context.Context) (T, error)) (T, error) {
	var zero T
	if len(calls) == 0 {
		return zero, ErrNoCalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // tells the losers to stop, on every way out

	deadline, stop := timer(clk, timeout)
	defer stop() // nothing stays registered on clk after Hedge returns

	// Room for every replica's reply: a loser that finishes after Hedge
	// returned sends without blocking and exits.
	replies := make(chan reply[T], len(calls))
	started := 0
	var hedge <-chan time.Time // fires when the next replica is due
	stopHedge := func() {}
	start := func() {
		i := started
		started++
		go func() {
			v, err := calls[i](ctx)
			replies <- reply[T]{i, v, err}
		}()
		// A fresh timer per wait (never Reset a mock timer); with nothing
		// left to start, d = 0 gives a channel that never fires.
		stopHedge()
		var d time.Duration
		if started < len(calls) {
			d = delay
		}
		hedge, stopHedge = timer(clk, d)
	}
	defer func() { stopHedge() }()
	start()
	for delay <= 0 && started < len(calls) {
		start()
	}

	errs := make([]error, len(calls))
	for failed := 0; ; {
		select {
		case r := <-replies:
			if r.err == nil {
				return r.v, nil
			}
			errs[r.i] = fmt.Errorf("replica %d: %w", r.i, r.err)
			if failed++; failed == len(calls) {
				return zero, errors.Join(errs...)
			}
			if started < len(calls) {
				start()
			}
		case <-hedge:
			start()
		case <-deadline:
			err := fmt.Errorf("%w: no replica succeeded within %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
			return zero, errors.Join(append([]error{err}, errs...)...)
		case <-ctx.Done():
			return zero, errors.Join(append([]error{ctx.Err()}, errs...)...)
		}
	}
}

// Reply is one replica's answer as Collect reports it.
type Reply[T any] struct {
	Value T
	Err   error
}

// Collect calls every replica at once, each with a context derived from ctx,
// and waits until every replica has answered, timeout has passed on clk
// (timeout <= 0 means no timeout), or ctx is done. Then it cancels the
// replicas still running and returns one Reply per call, in the order of
// calls: what the replica returned if it answered in time; otherwise the
// zero value and an error matching ErrTimeout and context.DeadlineExceeded
// (the timeout passed) or ctx.Err() (ctx is done). Answers that come later
// are dropped. No calls gives an empty slice.
func Collect[T any](ctx context.Context, clk clock.Clock, timeout time.Duration, calls ...func(context.Context) (T, error)) []Reply[T] {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	replies := make(chan reply[T], len(calls))
	for i, call := range calls {
		go func() {
			v, err := call(ctx)
			replies <- reply[T]{i, v, err}
		}()
	}
	deadline, stop := timer(clk, timeout)
	defer stop()

	out := make([]Reply[T], len(calls))
	answered := make([]bool, len(calls))
	var missing error
	for n := 0; n < len(calls) && missing == nil; {
		select {
		case r := <-replies:
			out[r.i], answered[r.i] = Reply[T]{r.v, r.err}, true
			n++
		case <-deadline:
			missing = fmt.Errorf("%w: no answer within %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
		case <-ctx.Done():
			missing = ctx.Err()
		}
	}
	for i := range out {
		if !answered[i] {
			out[i].Err = missing
		}
	}
	return out
}

type reply[T any] struct {
	i   int
	v   T
	err error
}

// timer fires once d has passed on clk; d <= 0 never fires (a nil
// channel). Call stop when done waiting.
func timer(clk clock.Clock, d time.Duration) (c <-chan time.Time, stop func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := clk.Timer(d)
	return t.C, func() { t.Stop() }
}
