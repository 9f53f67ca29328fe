package ratelimit

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"errors"
	"strings"
	"time"

	"gokata/internal/katatest"
)

// A waiter is a call of Wait started with katatest.StartErr: it runs on
// its own goroutine, with a context that only it uses.

// testSettle lets the code settle. If calls are stuck on the limiter's
// mutex because a Wait holds it while it waits, it says so, releases the
// waiters ws and returns false.
func testSettle(h *katatest.H, what string, ws ...katatest.ErrCall) bool {
	h.T.Helper()
	stuck := h.Settle()
	if stuck == nil {
		return true
	}
	h.T.Errorf("%s: calls were stuck on the limiter's mutex while a Wait waited for its token: your Wait "+
		"holds the mutex while it waits, so every other Wait and even Allow queue behind it. Reserve the "+
		"token under the lock, unlock, then wait on the timer. Stuck:\n\t%s", what, strings.Join(stuck, "\n\t"))
	katatest.Unwind(h, ws...)
	return false
}

// testBroken reports whether any of ws panicked (already reported); then
// it releases the others.
func testBroken(h *katatest.H, ws ...katatest.ErrCall) bool {
	for _, w := range ws {
		if w.Broken() {
			katatest.Unwind(h, ws...)
			return true
		}
	}
	return false
}

// testTry calls allow on a goroutine of its own while waiters ws may be
// waiting, so that an Allow stuck behind a Wait is reported instead of
// hanging the test. ok is false if it did not answer at once (reported).
func testTry(h *katatest.H, what string, allow func() bool, ws ...katatest.ErrCall) (got, ok bool) {
	h.T.Helper()
	c := katatest.Go(h, func() (bool, error) { return allow(), nil })
	if !testSettle(h, what, ws...) {
		return false, false
	}
	if !c.Returned() {
		h.T.Errorf("%s: Allow did not answer at once, with the mock clock stopped: Allow never waits", what)
		katatest.Unwind(h, ws...)
		c.Stop()
		return false, false
	}
	if c.Panicked() {
		katatest.Unwind(h, ws...)
		return false, false
	}
	got, _ = c.Result() // not Finish: the waiters are still running
	return got, true
}

// testReturned counts the waiters that have returned.
func testReturned(ws []katatest.ErrCall) int {
	n := 0
	for _, w := range ws {
		if w.Returned() {
			n++
		}
	}
	return n
}

// testWakesAt checks that w, which waits for a token due at mock time due
// (counted from the start of the test), is still waiting 1ns before it
// and has returned nil at due. why explains the due time.
func testWakesAt(h *katatest.H, w katatest.ErrCall, due time.Duration, why string) bool {
	t := h.T
	t.Helper()
	if due > h.Elapsed() {
		h.Advance(due - h.Elapsed() - 1)
	}
	if !w.Waits("Wait had returned by %v, before its token was due at %v (%s)", h.Elapsed(), due, why) {
		return false
	}
	h.Advance(1)
	if !w.Returns("Wait was still waiting at %v, when its token was due (%s): wait on clk.Timer for "+
		"exactly the due time minus clk.Now()", due, why) {
		return false
	}
	err, ok := w.Finish("Wait")
	if ok && err != nil {
		t.Errorf("Wait returned %q at %v, when its token was due; want nil", err, due)
		return false
	}
	return ok
}

// testIsDeadline checks that err matches ErrWouldExceedDeadline; if not,
// it shows err's chain, so a learner sees where the wrapping broke.
func testIsDeadline(h *katatest.H, err error, what string) bool {
	h.T.Helper()
	if errors.Is(err, ErrWouldExceedDeadline) {
		return true
	}
	if err == nil {
		h.T.Errorf("%s: Wait returned nil; want an error matching ErrWouldExceedDeadline", what)
		return false
	}
	h.T.Errorf("%s: the error must match ErrWouldExceedDeadline (errors.Is), but its chain is %s; "+
		"if you add context, wrap with %%w (fmt.Errorf(\"...: %%w\", ErrWouldExceedDeadline)); %%v or %%s keep "+
		"only the text", what, katatest.Chain(err))
	return false
}
