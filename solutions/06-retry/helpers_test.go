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
	"testing"
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
// succeeds with "ok" once the errors run out. It counts its calls and, with
// a clock, records when each attempt started and ended; with took > 0 each
// attempt first waits that long on the clock (a slow call), or until its
// ctx is done.
type testOp struct {
	errs  []error
	clk   *katatest.Clock
	took  time.Duration
	mu    sync.Mutex
	calls int
	start []time.Time // start[n-1]: when attempt n began
	end   []time.Time // end[n-1]: when attempt n returned
}

func (o *testOp) call(ctx context.Context) (string, error) {
	o.mu.Lock()
	o.calls++
	n := o.calls
	if o.clk != nil {
		o.start = append(o.start, o.clk.Now())
	}
	o.mu.Unlock()
	if o.took > 0 {
		t := o.clk.Timer(o.took)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clk != nil {
		o.end = append(o.end, o.clk.Now())
	}
	if n <= len(o.errs) {
		return "", o.errs[n-1]
	}
	return "ok", nil
}

func (o *testOp) Calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

// sinceEnd is the time on the clock since attempt n returned.
func (o *testOp) sinceEnd(n int) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.clk.Now().Sub(o.end[n-1])
}

// waited is the time on the clock between the end of attempt n and the
// start of attempt n+1: the pause Do really made.
func (o *testOp) waited(n int) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start[n].Sub(o.end[n-1])
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
	c := katatest.Start(h, func(ctx context.Context) (T, error) { return Do(ctx, h.Clk, p, op) })
	if c.Broken() {
		return v, nil, false
	}
	h.Advance(time.Hour)
	if !c.Returns("Do was still running after an hour of mock time (BaseDelay %v, MaxAttempts %d): "+
		"does it wait on something other than a timer from clk?", p.BaseDelay, p.MaxAttempts) {
		return v, nil, false
	}
	return c.Finish("Do")
}

// testFirstAttemptRuns is the precondition of a test whose op holds on
// gate: attempt 1 is running, once the code settled. If not, it ends the
// call and names the mistake (a Do stuck for good is a deadlock) and
// returns false.
func testFirstAttemptRuns[T any](c *katatest.Call[T], gate *katatest.Gate) bool {
	return c.Reaches(gate.Waiting() == 1, "Do called op %d times before any time passed, and no call of op was "+
		"running: attempt 1 starts as soon as Do is called, and Do waits for op to return", gate.Entered())
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
	if p.MaxAttempts == 0 {
		p.MaxAttempts = 3 // room to retry, unless the case is about the final attempt
	}
	p.BaseDelay, p.BeforeSleep = 10*time.Millisecond, hooks.record
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	if !c.Returns("%s", stillPausing) {
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
	tol    time.Duration      // how far a pause may be from want (rounding of jitter)
	why    func(n int) string // how want[n-1] is computed, for the messages
	took   time.Duration      // each attempt takes this long on the clock before it fails
	probe  bool               // let real time pass in the first pause: nothing may happen
	coarse bool               // one Advance per pause instead of checking the pause to the ns
	nohook bool               // leave BeforeSleep nil: the test is about the pauses alone
}

// run checks every pause: first the one Do really made on the mock clock
// (attempt n+1 starts when the pause has passed, not 1ns before), then what
// BeforeSleep was told. It reports the first mismatch and returns false.
func (tp testPlan) run(h *katatest.H) bool {
	op := &testOp{errs: tp.errs, clk: h.Clk, took: tp.took}
	hooks := &testHooks{}
	p := tp.policy
	if !tp.nohook {
		p.BeforeSleep = hooks.record
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	for n := 1; n <= len(tp.want); n++ {
		if c.Broken() {
			return false
		}
		if !tp.pause(h, c, op, hooks, n) {
			c.Stop()
			return false
		}
	}
	if tp.took > 0 {
		h.Advance(tp.took)
	}
	if !c.Returns("attempt %d succeeded but Do did not return: return the value as soon as op succeeds", len(tp.want)+1) {
		return false
	}
	_, err, ok := c.Finish("Do")
	if ok && err != nil {
		h.T.Errorf("attempt %d succeeded but Do returned the error %q; want nil", len(tp.want)+1, err)
		return false
	}
	return ok
}

// pause lets attempt n fail, checks the pause after it and moves the mock
// clock through it.
func (tp testPlan) pause(h *katatest.H, c *katatest.Call[string], op *testOp, hooks *testHooks, n int) bool {
	t, want, errN := h.T, tp.want[n-1], tp.errs[n-1]
	if tp.took > 0 {
		h.Advance(tp.took) // attempt n, a slow call, fails now
	}
	if c.Returned() {
		_, err := c.Result()
		t.Errorf("Do returned after attempt %d (error: %v); want a pause of %v (%s) and then attempt %d",
			n, err, want, tp.why(n), n+1)
		return false
	}
	if calls := op.Calls(); calls < n {
		t.Errorf("Do has made %d attempt(s); attempt %d should have run and failed by now: "+
			"call op at once, and again after each pause", calls, n)
		return false
	} else if calls > n {
		t.Errorf("the pause after attempt %d was %v on the mock clock: attempt %d started right after it; "+
			"want %v (%s)", n, op.waited(n), n+1, want, tp.why(n))
		return false
	}
	if tp.probe && n == 1 && !h.StandsStill(10*slices.Max(tp.want), "attempt 2 started",
		func() bool { return op.Calls() > 1 }) {
		return false
	}

	// What Do did comes first: the pause on the clock.
	told, hooked := "", len(hooks.All()) >= n // hooked: BeforeSleep ran before the pause
	if hooked {
		told = fmt.Sprintf(" (BeforeSleep was told %v)", hooks.All()[n-1].pause)
	}
	wrong := func() bool {
		t.Errorf("the pause after attempt %d was %v on the mock clock, from the failure of attempt %d to the start "+
			"of attempt %d; want %v (%s)%s", n, op.waited(n), n, n+1, want, tp.why(n), told)
		return false
	}
	// The clock may be past the failure already (by the tolerance of the
	// pause before): aim at instants counted from the failure.
	since := op.sinceEnd(n)
	if early := want - tp.tol - 1 - since; early > 0 && !tp.coarse {
		h.Advance(early)
		if op.Calls() > n {
			return wrong()
		}
		h.Advance(2*tp.tol + 1)
	} else {
		h.Advance(want - since)
		if op.Calls() == n && tp.tol > 0 {
			h.Advance(tp.tol)
		}
	}
	if op.Calls() == n { // not yet: find out how long Do waits
		h.Advance(time.Hour)
		if op.Calls() == n && want < time.Hour {
			h.Advance(10 * want)
		}
		if op.Calls() == n {
			t.Errorf("attempt %d had not started long after the %v pause after attempt %d had passed on the mock "+
				"clock (%s): wait on a timer from clk (clk.Timer), for exactly that pause%s", n+1, want, n, tp.why(n), told)
			return false
		}
	}
	if real := op.waited(n); !testNear(real, want, tp.tol) {
		return wrong()
	}

	// Then what BeforeSleep was told.
	if tp.nohook {
		return true
	}
	got := hooks.All()
	if !hooked {
		when := "at all"
		if len(got) >= n {
			when = "until the pause had passed"
		}
		t.Errorf("BeforeSleep was not called before the pause after attempt %d (not %s): "+
			"call it with (attempt, err, pause) before every pause, so logs and metrics see each retry", n, when)
		return false
	}
	s := got[n-1]
	if real := op.waited(n); s.pause != real {
		t.Errorf("BeforeSleep was told a pause of %v after attempt %d, but Do waited %v on the mock clock: "+
			"report the pause you wait for, after the cap and the jitter", s.pause, n, real)
		return false
	}
	if s.attempt != n || !(errors.Is(s.err, errN) || errors.Is(errN, s.err)) {
		t.Errorf("before the pause after attempt %d, BeforeSleep got (attempt %d, err %v); "+
			"want (attempt %d, err %q): the 1-based number of the attempt that just failed, and its error",
			n, s.attempt, s.err, n, errN)
		return false
	}
	return true
}

// testIs reports whether errors.Is(err, target) and, if not, fails the test
// with what, the error's chain and fix: the learner sees which error was in
// the chain and which was not.
func testIs(t *testing.T, err, target error, what, fix string) bool {
	t.Helper()
	if errors.Is(err, target) {
		return true
	}
	t.Errorf("%s: errors.Is(err, %q (%T)) is false for the error Do returned, whose chain is %s; %s",
		what, target, target, katatest.Chain(err), fix)
	return false
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
