package katatest

// Call is a call under test running on its own goroutine, so the test can
// move the clock, cancel, and watch for the return.
type Call[T any] struct {
	done     chan struct{}
	val      T
	err      error
	panicked bool
}

// Go starts f on a new goroutine. A panic in f is recovered and reported as
// the test's failure; the call then counts as returned.
func Go[T any](h *H, f func() (T, error)) *Call[T] {
	c := &Call[T]{done: make(chan struct{})}
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
