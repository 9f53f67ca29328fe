package retry

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

// testErrors returns k distinct errors "flaky 1" … "flaky k".
func testErrors(k int) []error {
	errs := make([]error, k)
	for i := range errs {
		errs[i] = fmt.Errorf("flaky %d", i+1)
	}
	return errs
}

// testOp is an operation that fails attempt n (1-based) with errs[n-1] and
// succeeds with "ok" once the errors run out. It counts its calls.
type testOp struct {
	errs  []error
	mu    sync.Mutex
	calls int
}

func (o *testOp) call(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	if o.calls <= len(o.errs) {
		return "", o.errs[o.calls-1]
	}
	return "ok", nil
}

func (o *testOp) Calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

// testSleep is one call of BeforeSleep.
type testSleep struct {
	attempt int
	err     error
	pause   time.Duration
}

// testHooks records the calls of BeforeSleep.
type testHooks struct{ katatest.Recorder[testSleep] }

func (r *testHooks) record(attempt int, err error, pause time.Duration) {
	r.Add(testSleep{attempt, err, pause})
}

// testRun runs Do to its end, letting an hour of mock time pass so that
// every pause ends, and returns its results; ok is false if the call
// panicked or never returned (the failure is reported).
func testRun[T any](h *katatest.H, p Policy, op func(context.Context) (T, error)) (v T, err error, ok bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := katatest.Go(h, func() (T, error) { return Do(ctx, h.Clk, p, op) })
	if c.Broken() {
		return v, nil, false
	}
	h.Advance(time.Hour)
	if !c.Returned() {
		h.T.Errorf("Do was still running after an hour of mock time (BaseDelay %v, MaxAttempts %d): "+
			"does it wait on something other than a timer from clk?", p.BaseDelay, p.MaxAttempts)
		c.Stop(cancel)
		return v, nil, false
	}
	return c.Finish("Do")
}

// testNotRetried runs Do (3 attempts, 10ms base, plus what p sets) with an
// op that fails with err every time, and expects Do to return right after
// the first attempt. If Do is pausing instead, it reports stillPausing and
// returns ok=false; otherwise Do's error, the op's calls and the pauses
// BeforeSleep saw.
func testNotRetried(h *katatest.H, p Policy, err error, stillPausing string) (got error, calls int, sleeps []testSleep, ok bool) {
	h.T.Helper()
	op := &testOp{errs: []error{err, err, err}}
	hooks := &testHooks{}
	p.MaxAttempts, p.BaseDelay, p.BeforeSleep = 3, 10*time.Millisecond, hooks.record
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
	if c.Broken() {
		return nil, 0, nil, false
	}
	if !c.Returned() {
		h.T.Errorf("%s", stillPausing)
		c.Stop(cancel)
		return nil, 0, nil, false
	}
	_, got, ok = c.Finish("Do")
	return got, op.Calls(), hooks.All(), ok
}

// testPlan is one call of Do whose op fails with errs[0], errs[1], … and
// then succeeds; want[n-1] is the pause expected after attempt n.
type testPlan struct {
	policy Policy
	errs   []error
	want   []time.Duration
	tol    time.Duration      // how far a reported pause may be from want (rounding of jitter)
	why    func(n int) string // how want[n-1] is computed, for the messages
	probe  bool               // let real time pass in the first pause: nothing may happen
	coarse bool               // one Advance per pause instead of checking the pause to the ns
}

// run checks every pause BeforeSleep reports against want, and that attempt
// n+1 starts when that pause has passed on the mock clock, not 1ns before.
// It reports the first mismatch and returns false.
func (tp testPlan) run(h *katatest.H) bool {
	op := &testOp{errs: tp.errs}
	hooks := &testHooks{}
	p := tp.policy
	p.BeforeSleep = hooks.record
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
	for n := 1; n <= len(tp.want); n++ {
		if c.Broken() {
			return false
		}
		if !tp.pause(h, c, op, hooks, n) {
			c.Stop(cancel)
			return false
		}
	}
	synctest.Wait()
	if !c.Returned() {
		h.T.Errorf("attempt %d succeeded but Do did not return: return the value as soon as op succeeds", len(tp.want)+1)
		c.Stop(cancel)
		return false
	}
	_, err, ok := c.Finish("Do")
	if ok && err != nil {
		h.T.Errorf("attempt %d succeeded but Do returned the error %q; want nil", len(tp.want)+1, err)
		return false
	}
	return ok
}

// pause checks the pause after attempt n, which has just failed, and moves
// the mock clock through it.
func (tp testPlan) pause(h *katatest.H, c *katatest.Call[string], op *testOp, hooks *testHooks, n int) bool {
	t, want, errN := h.T, tp.want[n-1], tp.errs[n-1]
	got := hooks.All()
	if len(got) >= n {
		s := got[n-1]
		if !testNear(s.pause, want, tp.tol) {
			t.Errorf("the pause after attempt %d was %v; want %v (%s)", n, s.pause, want, tp.why(n))
			return false
		}
		if s.attempt != n || !(errors.Is(s.err, errN) || errors.Is(errN, s.err)) {
			t.Errorf("before the pause after attempt %d, BeforeSleep got (attempt %d, err %v); "+
				"want (attempt %d, err %q): the 1-based number of the attempt that just failed, and its error",
				n, s.attempt, s.err, n, errN)
			return false
		}
	}
	if c.Returned() {
		_, err := c.Result()
		t.Errorf("Do returned after attempt %d (error: %v); want a pause of %v and then attempt %d", n, err, want, n+1)
		return false
	}
	if calls := op.Calls(); calls < n {
		t.Errorf("Do has made %d attempt(s); attempt %d should have run and failed by now: "+
			"call op at once, and again after each pause", calls, n)
		return false
	} else if calls > n {
		t.Errorf("attempt %d started while the mock clock stood still; the pause after attempt %d should be %v (%s)",
			n+1, n, want, tp.why(n))
		return false
	}
	if len(got) < n {
		t.Errorf("BeforeSleep was not called before the pause after attempt %d: "+
			"call it with (attempt, err, pause) before every pause, so logs and metrics see each retry", n)
		return false
	}
	if tp.probe && n == 1 && !h.StandsStill(10*slices.Max(tp.want), "attempt 2 started",
		func() bool { return op.Calls() > 1 }) {
		return false
	}
	pause := got[n-1].pause
	if tp.coarse {
		h.Advance(pause)
	} else {
		h.Advance(pause - 1)
		if op.Calls() != n {
			t.Errorf("attempt %d started before its %v pause had passed on the mock clock (1ns early): "+
				"wait for exactly the pause you reported to BeforeSleep", n+1, pause)
			return false
		}
		h.Advance(1)
	}
	if op.Calls() != n+1 {
		t.Errorf("attempt %d had not started when the %v pause after attempt %d had passed on the mock clock: "+
			"wait on a timer from clk (clk.Timer), for exactly the pause you reported to BeforeSleep", n+1, pause, n)
		return false
	}
	return true
}

// testNear reports whether got is within tol of want (want >= 0), without
// overflowing near the largest Duration.
func testNear(got, want, tol time.Duration) bool {
	switch {
	case got < 0:
		return false
	case got > want:
		return got-want <= tol
	default:
		return want-got <= tol
	}
}
