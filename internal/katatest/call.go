package katatest

import (
	"context"
	"math"
	"testing/synctest"

	"gokata/internal/failure"
)

// Call is a call under test running on its own goroutine, so the test can
// move the clock, cancel, and watch for the return.
type Call[T any] struct {
	h        *H
	done     chan struct{}
	val      T
	err      error
	panicked bool
}

// Go starts f on a new goroutine. A panic in f is recovered and reported as
// the test's failure; the call then counts as returned.
func Go[T any](h *H, f func() (T, error)) *Call[T] {
	c := &Call[T]{h: h, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer func() {
			if r := recover(); r != nil {
				c.panicked = true
				h.T.Errorf("%s", describePanic(r, h.dir))
			}
		}()
		c.val, c.err = f()
	}()
	return c
}

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

// Result waits for the call to return and gives its results. If the call
// never returns, synctest reports the deadlock.
func (c *Call[T]) Result() (T, error) {
	<-c.done
	return c.val, c.err
}

// Panicked reports whether the call panicked (already reported).
func (c *Call[T]) Panicked() bool {
	<-c.done
	return c.panicked
}

// Finish collects a call that has returned: its results, once it is
// checked that nothing the call started is still running. ok is false if
// the call panicked or leaked goroutines (both already reported): the test
// should stop there, so the first failure stays the one the learner sees.
func (c *Call[T]) Finish(what string) (v T, err error, ok bool) {
	c.h.T.Helper()
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

// Stop ends a call that went wrong, once the test has reported how: it
// cancels the call's context and, while the call still runs, moves the mock
// clock far ahead (a bounded number of times) so that even code that
// ignores ctx runs through its remaining waits. Then it checks for leaks,
// so the first failure stays the one reported. It reports false if the
// call never returned.
func (c *Call[T]) Stop(cancel context.CancelFunc) bool {
	c.h.T.Helper()
	cancel()
	synctest.Wait()
	for i := 0; i < 200 && !c.Returned(); i++ {
		c.h.Advance(math.MaxInt64)
	}
	if !c.Returned() {
		where, _ := c.h.running()
		c.h.leaked = true // said here; the check after the test would only repeat it
		c.h.T.Errorf("%sthe call never returned, even after its ctx was cancelled and the mock clock moved on: "+
			"it waits for something that never comes%s", failure.Tag(failure.Deadlock), where)
		return false
	}
	return c.h.NoLeaks("the call")
}
