package katatest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing/synctest"
	"time"

	"gokata/internal/failure"
	"gokata/internal/katatest/shake"
)

// Call is a call under test running on its own goroutine, so the test can
// move the clock, cancel, and watch for the return.
//
// A call made with [Start] or [StartErr] owns its context: [Call.Cancel]
// cancels it, [Call.Stop] cancels it and ends the call, and it is cancelled
// at the latest when the test ends (before the final leak check, as a
// deferred cancel in the test body would be). A call made with [Go] has no
// context of its own; Cancel does nothing.
type Call[T any] struct {
	h        *H
	cancel   context.CancelFunc
	done     chan struct{}
	val      T
	err      error
	panicked bool
}

// CtxOption shapes the context [Start] gives a call.
type CtxOption func(*ctxConfig)

type ctxConfig struct {
	cancelled bool
	expired   bool
	timeout   time.Duration
}

// Cancelled gives the call a context that is cancelled before the call
// starts: ctx.Err() is context.Canceled from the first line of f.
func Cancelled() CtxOption { return func(c *ctxConfig) { c.cancelled = true } }

// Expired gives the call a context whose deadline has already passed:
// ctx.Err() is context.DeadlineExceeded from the first line of f.
func Expired() CtxOption { return func(c *ctxConfig) { c.expired = true } }

// Timeout gives the call a context that ends d of mock time after the
// call starts (h.Clk.WithTimeout), with context.DeadlineExceeded.
func Timeout(d time.Duration) CtxOption { return func(c *ctxConfig) { c.timeout = d } }

// Start runs f on a new goroutine with a context of its own, derived from
// context.Background and shaped by opts. A panic in f is recovered and
// reported as the test's failure; the call then counts as returned.
func Start[T any](h *H, f func(ctx context.Context) (T, error), opts ...CtxOption) *Call[T] {
	var cfg ctxConfig
	for _, o := range opts {
		o(&cfg)
	}
	var ctx context.Context
	var cancel context.CancelFunc
	switch {
	case cfg.timeout > 0:
		ctx, cancel = h.Clk.WithTimeout(context.Background(), cfg.timeout)
	case cfg.expired:
		ctx, cancel = context.WithDeadline(context.Background(), time.Now())
	default:
		// A caller that cancels often says why (context.WithCancelCause,
		// as net/http and errgroup do): ctx.Err() is still
		// context.Canceled, which the READMEs ask for, and
		// context.Cause(ctx) is ErrCallerLeft, which they do not.
		var cancelCause context.CancelCauseFunc
		ctx, cancelCause = context.WithCancelCause(context.Background())
		cancel = func() { cancelCause(ErrCallerLeft) }
	}
	if cfg.cancelled {
		cancel()
	}
	h.T.Cleanup(cancel)
	c := newCall[T](h, cancel)
	go c.run(func() (T, error) { return f(ctx) })
	return c
}

// ErrCallerLeft is the cause of the cancel of a call's context (see
// [Start]): code that returns context.Cause(ctx) where the README asks for
// ctx.Err() returns it, and no longer matches context.Canceled.
var ErrCallerLeft = errors.New("the caller went away (this is the cancel's cause, context.Cause(ctx); " +
	"ctx.Err() is context.Canceled)")

// ErrCall is a [Call] of a function that returns only an error.
type ErrCall struct{ *Call[struct{}] }

// StartErr is [Start] for a call that returns only an error.
func StartErr(h *H, f func(ctx context.Context) error, opts ...CtxOption) ErrCall {
	return ErrCall{Start(h, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) }, opts...)}
}

// Err waits for the call to return and gives its error. If the call never
// returns, synctest reports the deadlock.
func (c ErrCall) Err() error {
	_, err := c.Result()
	return err
}

// Finish is [Call.Finish] for a call that returns only an error.
func (c ErrCall) Finish(what string) (err error, ok bool) {
	c.h.rep.Helper()
	_, err, ok = c.Call.Finish(what)
	return err, ok
}

// Go starts f on a new goroutine, for a call that takes no context of its
// own from the test (a method of a running service, say). A panic in f is
// recovered and reported as the test's failure; the call then counts as
// returned.
func Go[T any](h *H, f func() (T, error)) *Call[T] {
	c := newCall[T](h, func() {})
	go c.run(f)
	return c
}

func newCall[T any](h *H, cancel context.CancelFunc) *Call[T] {
	return &Call[T]{h: h, cancel: cancel, done: make(chan struct{})}
}

// run calls f and records how it ended. It must not synchronise with
// anything but the done channel (no mutex, no read of the mock clock):
// calls started together must stay unordered for the race detector, or a
// race between two of them goes unreported. (shake.Point orders nothing.)
// When a repetition shakes the schedule, calls started together start in
// varying order.
func (c *Call[T]) run(f func() (T, error)) {
	defer close(c.done)
	defer func() {
		if r := recover(); r != nil {
			c.panicked = true
			if _, ok := r.(stopBody); !ok {
				c.h.Errorf("%s", c.h.describePanic(r))
			}
		}
	}()
	shake.Point()
	c.val, c.err = f()
	shake.Point()
	if msg := NilInside(c.err); msg != "" {
		c.h.Errorf("the call returned %s", msg)
	}
}

// NilInside explains an error that is a nil pointer (or another nil value)
// inside a non-nil error interface, or returns "" for any other error. Such
// an error is never right: it compares != nil, and prints as <nil>.
func NilInside(err error) string {
	if err == nil {
		return ""
	}
	switch v := reflect.ValueOf(err); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		if v.IsNil() {
			return fmt.Sprintf("a nil %T as its error, and that is not a nil error: an interface that holds a nil "+
				"pointer compares != nil (and prints as <nil>). Where there is no error, return the literal nil, "+
				"not a variable of your error type that happens to be nil", err)
		}
	}
	return ""
}

// Cancel cancels the call's context. The call may take its time to notice:
// [Call.ReturnsAtOnce] measures how promptly it does.
func (c *Call[T]) Cancel() { c.cancel() }

// Done is closed when the call has returned.
func (c *Call[T]) Done() <-chan struct{} { return c.done }

// Returned reports whether the call has returned; call it after the code
// settled (Advance, or synctest.Wait).
func (c *Call[T]) Returned() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// ReturnsAtOnce is [H.ReturnsAtOnce] for this call: whether it returns
// without any time passing and, if not, how long it took (guard if it did
// not return within guard of bubble time). The mock clock never moves here.
func (c *Call[T]) ReturnsAtOnce(guard time.Duration) (instant bool, took time.Duration) {
	return c.h.ReturnsAtOnce(c.done, guard)
}

// Result waits for the call to return and gives its results. If the call
// never returns, synctest reports the deadlock.
func (c *Call[T]) Result() (T, error) {
	<-c.done
	return c.val, c.err
}

// Panicked reports whether the call panicked (already reported). Like
// Result, it waits for the call to return: where the call may still run,
// ask [Call.Returned] first.
func (c *Call[T]) Panicked() bool {
	<-c.done
	return c.panicked
}

// Finish collects a call that has returned: its results, once it is
// checked that nothing the call started is still running. ok is false if
// the call panicked or leaked goroutines (both already reported): the test
// should stop there, so the first failure stays the one the learner sees.
func (c *Call[T]) Finish(what string) (v T, err error, ok bool) {
	c.h.rep.Helper()
	if c.Panicked() {
		return v, nil, false
	}
	v, err = c.Result()
	return v, err, c.h.NoLeaks(what)
}

// Broken lets the code settle and reports whether the call panicked; the
// panic is reported already, so the test can stop there.
func (c *Call[T]) Broken() bool {
	synctest.Wait()
	return c.Returned() && c.Panicked()
}

// Returns reports whether the call has returned, once the code settled,
// and did not panic. If it has not returned, it ends the call as
// [Call.Stop] does (which releases the fakes the test owns), reports the
// failure (format and args, the mistake in the README's terms) and returns
// false; a panic is reported already. A call that never returns, even then,
// is reported as the deadlock it is: the same message, tagged so, with the
// line where the code waits. Either way the test should return: this is
// the protocol "not returned: report, stop, return" in one line.
//
//	if !c.Returns("after the final attempt Do must return at once; it was still waiting") {
//		return
//	}
//	out, err, ok := c.Finish("Do")
func (c *Call[T]) Returns(format string, args ...any) bool {
	c.h.rep.Helper()
	synctest.Wait()
	if c.Returned() {
		return !c.Panicked()
	}
	where := c.h.Waiting()
	if !c.end() {
		c.stuck(fmt.Sprintf(format, args...))
		return false
	}
	c.h.Errorf("%s%s", fmt.Sprintf(format, args...), where)
	c.h.NoLeaks("the call")
	return false
}

// Waits reports whether the call is still running, once the code settled.
// If it returned (or panicked, already reported), it reports the failure
// (format and args; the call's error is added) and returns false: the test
// should return.
func (c *Call[T]) Waits(format string, args ...any) bool {
	c.h.rep.Helper()
	synctest.Wait()
	if !c.Returned() {
		return true
	}
	if !c.Panicked() {
		c.h.Errorf("%s (it returned the error %v)", fmt.Sprintf(format, args...), c.err)
	}
	c.h.NoLeaks("the call")
	return false
}

// Stopper is a call a test started: a *Call[T] or an ErrCall.
type Stopper interface {
	Cancel()
	Stop() bool
}

// Unwind ends calls that a failed scenario left running, once the failure
// is reported: it cancels every call's context first (so that none waits
// for another still running), moves the mock clock an hour at a time (less
// with a ticker running: [Clock.RunOut]) while goroutines are stuck on a
// mutex (which synctest cannot wait for), then stops each call, and stops
// at the first that cannot be stopped (Stop has reported it).
func Unwind[S Stopper](h *H, calls ...S) {
	h.rep.Helper()
	for _, c := range calls {
		c.Cancel()
	}
	for i := 0; i < 100 && h.Settle() != nil; i++ {
		h.Clk.Add(min(time.Hour, h.Clk.RunOut()))
	}
	for _, c := range calls {
		if !c.Stop() {
			return
		}
	}
}

// Stop ends a call that went wrong, once the test has reported how: it
// cancels the call's context and, while the call still runs, moves the mock
// clock far ahead (a bounded number of times) so that even code that
// ignores ctx runs through its remaining waits. Then it checks for leaks,
// so the first failure stays the one reported. If the call never returns,
// it reports that as a deadlock, naming where the learner's code waits, and
// returns false; it returns false after a leak too.
func (c *Call[T]) Stop() bool {
	c.h.rep.Helper()
	if !c.end() {
		c.stuck("")
		return false
	}
	return c.h.NoLeaks("the call")
}

// Reaches is for a precondition: the state the test needs before it goes on
// (ok, read once the code settled). If ok is false, the call is ended as
// [Call.Stop] ends it, and the mistake is named first: a call that never
// returns, even cancelled and with the clock run out, is reported as that
// deadlock (the precondition failed because the code is stuck for good);
// otherwise format and args are reported. Either way the test should return.
//
//	if !c.Reaches(gate.Waiting() == 1, "Do did not call op at once: attempt 1 starts when Do is called") {
//		return
//	}
func (c *Call[T]) Reaches(ok bool, format string, args ...any) bool {
	c.h.rep.Helper()
	if ok {
		return true
	}
	if !c.end() {
		c.stuck("")
		return false
	}
	c.h.Errorf(format, args...)
	c.h.NoLeaks("the call")
	return false
}

// end cancels the call, releases the test's fakes and runs the clock out
// (a bounded number of steps) while the call still runs; it reports whether
// the call returned.
func (c *Call[T]) end() bool {
	c.cancel()
	c.h.releaseFakes()
	synctest.Wait()
	for i := 0; i < 200 && !c.Returned(); i++ {
		c.h.Advance(c.h.Clk.RunOut())
	}
	return c.Returned()
}

// stuck reports a call that never returned as a deadlock; what, if not
// empty, is the test's own words for the mistake, said first.
func (c *Call[T]) stuck(what string) {
	c.h.rep.Helper()
	where, _ := c.h.running()
	c.h.leaked = true // said here; the check after the test would only repeat it
	if what != "" {
		c.h.Errorf("%s%s; %s: it waits for something that never comes%s", failure.Tag(failure.Deadlock), what, stuckWhy, where)
		return
	}
	c.h.Errorf("%s: it waits for something that never comes%s", stuckPrefix, where)
}

// stuckPrefix starts the report of a call stuck for good.
var stuckPrefix = failure.Tag(failure.Deadlock) + stuckWhy

const stuckWhy = "the call never returned, even after its ctx was cancelled and the mock clock moved on"
