package retry

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testFinal is an error that Do must not retry, and how it was made.
type testFinal struct {
	how       string
	err       func(ctx context.Context) error // a fresh error each call: identity is what "as it is" means
	permanent bool                            // it carries a Permanent mark
	ctxErr    bool                            // it is what op's ctx says once it ended: only where ctx ends
}

// testStatus is an error value of a type of its own, as an HTTP client's
// would be: Retryable looks at its code.
type testStatus struct{ code int }

func (e *testStatus) Error() string { return fmt.Sprintf("status %d", e.code) }

var testFinals = map[string][]testFinal{
	"R3": {
		{how: "Permanent(errors.New(…))", permanent: true, err: func(context.Context) error {
			return Permanent(errors.New("card declined"))
		}},
		{how: "Permanent(…) wrapped again with %w", permanent: true, err: func(context.Context) error {
			return fmt.Errorf("charge: %w", Permanent(errors.New("card declined")))
		}},
		{how: "Permanent(&statusError{404})", permanent: true, err: func(context.Context) error {
			return Permanent(&testStatus{404})
		}},
		{how: "errors.Join(timeout, Permanent(…))", permanent: true, err: func(context.Context) error {
			return errors.Join(errors.New("timeout"), Permanent(errors.New("bad request")))
		}},
		{how: "&statusError{400}, which Retryable rejects", err: func(context.Context) error { return &testStatus{400} }},
		{how: "&statusError{401} wrapped with %w, which Retryable rejects", err: func(context.Context) error {
			return fmt.Errorf("auth: %w", &testStatus{401})
		}},
	},
	"R5": {
		{how: "context.Canceled", err: func(context.Context) error { return context.Canceled }},
		{how: "context.DeadlineExceeded", err: func(context.Context) error { return context.DeadlineExceeded }},
		{how: "context.Canceled wrapped with %w", err: func(context.Context) error {
			return fmt.Errorf("stock lookup: %w", context.Canceled)
		}},
		{how: "context.DeadlineExceeded wrapped twice", err: func(context.Context) error {
			return fmt.Errorf("inventory: %w", fmt.Errorf("dial: %w", context.DeadlineExceeded))
		}},
		{how: "errors.Join(503, context.Canceled)", err: func(context.Context) error {
			return errors.Join(&testStatus{503}, context.Canceled)
		}},
		// What an op that honours its ctx returns once the ctx ended.
		{how: "ctx.Err(), as op found it once its ctx ended", ctxErr: true, err: func(ctx context.Context) error {
			return ctx.Err()
		}},
		{how: "fmt.Errorf(\"stock lookup: %w\", ctx.Err()), once its ctx ended", ctxErr: true, err: func(ctx context.Context) error {
			return fmt.Errorf("stock lookup: %w", ctx.Err())
		}},
	},
}

// How the caller's ctx ends in a testNeverRetried scenario.
const (
	testEndNone     = iota // it stays live
	testEndBefore          // it is done before Do is called (cancelled, or its deadline passed)
	testEndCancel          // the caller cancels it while the final attempt runs
	testEndDeadline        // its deadline passes while the final attempt runs
)

// testNeverRetried is one scenario: some transient failures, then an error
// that must not be retried.
type testNeverRetried struct {
	req       string
	transient int // failures before the final one, each retried
	final     testFinal
	attempts  int // MaxAttempts, more than transient+1
	base      time.Duration
	nilRetry  bool // Retryable nil (R5 only: it would accept everything)
	end       int  // how the caller's ctx ends, testEnd…
	expired   bool // testEndBefore: its deadline passed, rather than a cancel
}

func (s testNeverRetried) String() string {
	retryable := "Retryable rejects status codes below 500"
	if s.req == "R5" {
		retryable = "Retryable accepts every error"
		if s.nilRetry {
			retryable = "Retryable is nil"
		}
	}
	ctx := ""
	switch s.end {
	case testEndBefore:
		ctx = "ctx is already cancelled when Do is called; "
		if s.expired {
			ctx = "ctx's deadline has already passed when Do is called; "
		}
	case testEndCancel:
		ctx = fmt.Sprintf("the caller cancels ctx while attempt %d runs, and op, which honours its ctx, then ", s.transient+1)
	case testEndDeadline:
		ctx = fmt.Sprintf("ctx's deadline passes while attempt %d runs, and op, which honours its ctx, then ", s.transient+1)
	}
	if s.end >= testEndCancel {
		before := ""
		if s.transient > 0 {
			before = fmt.Sprintf("op fails %d time(s) at once with a retryable error; ", s.transient)
		}
		return fmt.Sprintf("MaxAttempts %d, BaseDelay %v, %s; %s%sfails with %s",
			s.attempts, s.base, retryable, before, ctx, s.final.how)
	}
	return fmt.Sprintf("MaxAttempts %d, BaseDelay %v, %s; %sop fails %d time(s) with a retryable error, then with %s",
		s.attempts, s.base, retryable, ctx, s.transient, s.final.how)
}

func testDrawNeverRetried(req string) func(*rapid.T) testNeverRetried {
	return func(r *rapid.T) testNeverRetried {
		s := testNeverRetried{req: req}
		s.transient = rapid.IntRange(0, 4).Draw(r, "transient")
		// Half the time ctx ends by the final attempt: cancelled or past its
		// deadline, before Do is called (then the first attempt is the
		// final one) or while the final attempt runs.
		ends := []int{testEndNone, testEndNone, testEndCancel, testEndDeadline}
		if s.transient == 0 {
			ends = append(ends, testEndBefore)
		}
		s.end = rapid.SampledFrom(ends).Draw(r, "how ctx ends")
		s.expired = s.end == testEndBefore && rapid.Bool().Draw(r, "deadline passed")
		finals := testFinals[req]
		if s.end == testEndNone {
			finals = slices.DeleteFunc(slices.Clone(finals), func(f testFinal) bool { return f.ctxErr })
		}
		s.final = rapid.SampledFrom(finals).Draw(r, "final")
		s.attempts = s.transient + 1 + rapid.IntRange(1, 3).Draw(r, "spare attempts")
		s.base = time.Duration(rapid.IntRange(0, 50).Draw(r, "base ms")) * time.Millisecond
		s.nilRetry = req == "R5" && rapid.Bool().Draw(r, "nil Retryable")
		return s
	}
}

// testFinalOp fails its first attempts at once with errs, then with the
// final error of a testNeverRetried; where ctx ends by the final attempt,
// that attempt first waits for its ctx to end, as an op that honours its
// ctx does, and then fails.
type testFinalOp struct {
	s       testNeverRetried
	errs    []error
	release chan struct{} // closed when the test gives up on the call

	mu      sync.Mutex
	calls   int
	waiting bool  // the final attempt waits for its ctx to end
	final   error // what the final attempt returned
}

func (o *testFinalOp) call(ctx context.Context) (string, error) {
	o.mu.Lock()
	o.calls++
	n := o.calls
	o.mu.Unlock()
	switch {
	case n <= len(o.errs):
		return "", o.errs[n-1]
	case n > len(o.errs)+1:
		return "ok", nil // a retry the README does not allow: it succeeds, so the test sees it
	}
	if o.s.end != testEndNone {
		o.mu.Lock()
		o.waiting = true
		o.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-o.release:
		}
		o.mu.Lock()
		o.waiting = false
		o.mu.Unlock()
	}
	err := o.s.final.err(ctx)
	o.mu.Lock()
	o.final = err
	o.mu.Unlock()
	return "", err
}

func (o *testFinalOp) Calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

// play runs the scenario and checks that the final error ends Do at once,
// returned as it is, with no pause after it, whether or not ctx ended
// meanwhile, and that Retryable was not asked about it unless it is an
// error of its kind.
func (s testNeverRetried) play(h *katatest.H) {
	op := &testFinalOp{s: s, errs: testErrors(s.transient), release: make(chan struct{})}
	var once sync.Once
	h.Own(func() { once.Do(func() { close(op.release) }) })
	hooks := &testHooks{}
	asked := &katatest.Recorder[error]{}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base, BeforeSleep: hooks.record}
	switch {
	case s.req == "R3":
		p.Retryable = func(err error) bool {
			asked.Add(err)
			var st *testStatus
			return !errors.As(err, &st) || st.code >= 500
		}
	case !s.nilRetry:
		p.Retryable = func(err error) bool {
			asked.Add(err)
			return true
		}
	}
	var opts []katatest.CtxOption
	switch {
	case s.end == testEndBefore && s.expired:
		opts = append(opts, katatest.Expired())
	case s.end == testEndBefore:
		opts = append(opts, katatest.Cancelled())
	case s.end == testEndDeadline:
		// Far past every pause of the transient failures: the deadline
		// passes while the final attempt waits for its ctx.
		opts = append(opts, katatest.Timeout(2*time.Hour))
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) }, opts...)
	if c.Broken() {
		return
	}
	h.Advance(time.Hour) // every pause of the transient failures ends
	how := ""
	if s.end >= testEndCancel && !c.Returned() && op.Calls() == s.transient+1 {
		// The final attempt runs, waiting for its ctx: end it.
		if s.end == testEndCancel {
			how = " after the caller cancelled ctx during that attempt"
			c.Cancel()
		} else {
			how = " after ctx's deadline passed during that attempt"
			h.Advance(time.Hour + time.Millisecond)
		}
	}
	if s.end == testEndBefore {
		how = " with ctx already done when Do was called"
	}
	synctest.Wait()
	op.mu.Lock()
	waiting := op.waiting
	op.mu.Unlock()
	if waiting && how != "" {
		h.Errorf("the caller's ctx ended, but the ctx op got in attempt %d did not (op was still waiting for it to "+
			"end%s): op gets ctx as it is, the caller's, so that it sees the caller give up",
			s.transient+1, how)
		c.Stop()
		return
	}
	// A mock timer of 0 (BaseDelay 0) yields 1ms of bubble time: let the
	// bubble run on, with the mock clock stopped.
	if _, took := c.ReturnsAtOnce(time.Second); took >= time.Second {
		h.Errorf("Do was still running an hour after attempt %d failed with %s%s (op was called %d times): "+
			"that error is never retried, so Do returns right after the attempt that produced it",
			s.transient+1, s.final.how, how, op.Calls())
		c.Stop()
		return
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	calls := op.Calls()
	if calls == 0 {
		h.Errorf("Do returned %s without calling op: the first attempt is always made, even when ctx is already "+
			"done, and op gets ctx to honour it; look at ctx only in the pause", testDescribe(err))
		return
	}
	if calls != s.transient+1 {
		h.Errorf("op was called %d time(s); want %d: the error of attempt %d (%s) is never retried",
			calls, s.transient+1, s.transient+1, s.final.how)
		return
	}
	op.mu.Lock()
	final := op.final
	op.mu.Unlock()
	if err != final && how != "" {
		h.Errorf("an error that is never retried comes back as it is even when ctx is done: attempt %d failed with "+
			"%s%s, and Do returned %s instead of that very error (err == what op returned, not wrapped with "+
			"ctx.Err()); decide on op's error first, and look at ctx only in the pause",
			s.transient+1, s.final.how, how, testDescribe(err))
		return
	}
	if err != final {
		h.Errorf("Do returned %s for the error of attempt %d (%s); want that error as it is (err == what op returned), "+
			"not wrapped and not rebuilt", testDescribe(err), s.transient+1, s.final.how)
		return
	}
	if v != "" {
		h.Errorf("Do returned the value %q with the error; every failure returns the zero value of T", v)
	}
	if got := hooks.All(); len(got) != s.transient {
		h.Errorf("BeforeSleep was called %d time(s); want %d, once before each pause: no pause follows an error "+
			"that is not retried", len(got), s.transient)
		return
	}
	if s.final.permanent || s.req == "R5" {
		for _, e := range asked.All() {
			if e == final || errors.Is(e, final) || errors.Is(final, e) {
				h.Errorf("Retryable was asked about the error of attempt %d, %s: it is not asked about the errors "+
					"that are never retried, a Permanent mark or a context error, whatever it would say; "+
					"rule those out first, and ask Retryable only about the others", s.transient+1, s.final.how)
				return
			}
		}
	}
}

// testDescribe names an error for a message: its text, type and chain.
func testDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", strings.TrimSpace(err.Error()), err, katatest.Chain(err))
}

// testFinalNamed is the final error of testFinals[req] described as how.
func testFinalNamed(req, how string) testFinal {
	for _, f := range testFinals[req] {
		if f.how == how {
			return f
		}
	}
	panic("no final error " + how)
}

func TestR3_ExploreNeverRetriedErrorsReturnAsTheyAre(t *testing.T) {
	katatest.Explore(t, 40, testDrawNeverRetried("R3"), func(h *katatest.H, s testNeverRetried) { s.play(h) })
	// Every run: ctx ends by the final attempt in each way, and a
	// Permanent error comes while Retryable is set.
	perm, wrapped := testFinalNamed("R3", "Permanent(errors.New(…))"), testFinalNamed("R3", "Permanent(…) wrapped again with %w")
	rejected := testFinalNamed("R3", "&statusError{400}, which Retryable rejects")
	katatest.Replay(t, []testNeverRetried{
		{req: "R3", transient: 1, final: perm, attempts: 3, base: 10 * time.Millisecond},
		{req: "R3", transient: 1, final: perm, attempts: 3, base: 10 * time.Millisecond, end: testEndCancel},
		{req: "R3", transient: 2, final: rejected, attempts: 4, base: 10 * time.Millisecond, end: testEndDeadline},
		{req: "R3", final: wrapped, attempts: 2, base: 10 * time.Millisecond, end: testEndBefore},
		{req: "R3", final: rejected, attempts: 2, base: 10 * time.Millisecond, end: testEndBefore, expired: true},
	}, func(h *katatest.H, s testNeverRetried) { s.play(h) })
}

func TestR5_ExploreContextErrorsReturnAsTheyAre(t *testing.T) {
	katatest.Explore(t, 40, testDrawNeverRetried("R5"), func(h *katatest.H, s testNeverRetried) { s.play(h) })
	// Every run: op returns what its ctx says once the ctx ended, in each
	// way it ends, and a context error comes while Retryable is set.
	bare := testFinalNamed("R5", "ctx.Err(), as op found it once its ctx ended")
	wrapped := testFinalNamed("R5", "fmt.Errorf(\"stock lookup: %w\", ctx.Err()), once its ctx ended")
	katatest.Replay(t, []testNeverRetried{
		{req: "R5", transient: 1, final: testFinalNamed("R5", "context.Canceled"), attempts: 3, base: 10 * time.Millisecond},
		{req: "R5", transient: 1, final: bare, attempts: 3, base: 10 * time.Millisecond, end: testEndCancel},
		{req: "R5", transient: 2, final: wrapped, attempts: 4, base: 10 * time.Millisecond, end: testEndDeadline, nilRetry: true},
		{req: "R5", final: bare, attempts: 2, base: 10 * time.Millisecond, end: testEndBefore},
		{req: "R5", final: wrapped, attempts: 2, base: 10 * time.Millisecond, end: testEndBefore, expired: true},
	}, func(h *katatest.H, s testNeverRetried) { s.play(h) })
}
