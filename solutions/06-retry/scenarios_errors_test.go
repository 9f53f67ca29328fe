package retry

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testFinal is an error that Do must not retry, and how it was made.
type testFinal struct {
	how string
	err func() error // a fresh error each call: identity is what "as it is" means
}

// testStatus is an error value of a type of its own, as an HTTP client's
// would be: Retryable looks at its code.
type testStatus struct{ code int }

func (e *testStatus) Error() string { return fmt.Sprintf("status %d", e.code) }

var testFinals = map[string][]testFinal{
	"R3": {
		{"Permanent(errors.New(…))", func() error { return Permanent(errors.New("card declined")) }},
		{"Permanent(…) wrapped again with %w", func() error {
			return fmt.Errorf("charge: %w", Permanent(errors.New("card declined")))
		}},
		{"Permanent(&statusError{404})", func() error { return Permanent(&testStatus{404}) }},
		{"errors.Join(timeout, Permanent(…))", func() error {
			return errors.Join(errors.New("timeout"), Permanent(errors.New("bad request")))
		}},
		{"&statusError{400}, which Retryable rejects", func() error { return &testStatus{400} }},
		{"&statusError{401} wrapped with %w, which Retryable rejects", func() error {
			return fmt.Errorf("auth: %w", &testStatus{401})
		}},
	},
	"R5": {
		{"context.Canceled", func() error { return context.Canceled }},
		{"context.DeadlineExceeded", func() error { return context.DeadlineExceeded }},
		{"context.Canceled wrapped with %w", func() error { return fmt.Errorf("stock lookup: %w", context.Canceled) }},
		{"context.DeadlineExceeded wrapped twice", func() error {
			return fmt.Errorf("inventory: %w", fmt.Errorf("dial: %w", context.DeadlineExceeded))
		}},
		{"errors.Join(503, context.Canceled)", func() error {
			return errors.Join(&testStatus{503}, context.Canceled)
		}},
	},
}

// testNeverRetried is one scenario: some transient failures, then an error
// that must not be retried.
type testNeverRetried struct {
	req       string
	transient int // failures before the final one, each retried
	final     testFinal
	attempts  int // MaxAttempts, more than transient+1
	base      time.Duration
	nilRetry  bool // Retryable nil (R5 only: it would accept everything)
}

func (s testNeverRetried) String() string {
	retryable := "Retryable rejects status codes below 500"
	if s.req == "R5" {
		retryable = "Retryable accepts every error"
		if s.nilRetry {
			retryable = "Retryable is nil"
		}
	}
	return fmt.Sprintf("MaxAttempts %d, BaseDelay %v, %s; op fails %d time(s) with a retryable error, then with %s",
		s.attempts, s.base, retryable, s.transient, s.final.how)
}

func testDrawNeverRetried(req string) func(*rapid.T) testNeverRetried {
	return func(r *rapid.T) testNeverRetried {
		s := testNeverRetried{req: req}
		s.transient = rapid.IntRange(0, 4).Draw(r, "transient")
		s.final = rapid.SampledFrom(testFinals[req]).Draw(r, "final")
		s.attempts = s.transient + 1 + rapid.IntRange(1, 3).Draw(r, "spare attempts")
		s.base = time.Duration(rapid.IntRange(0, 50).Draw(r, "base ms")) * time.Millisecond
		s.nilRetry = req == "R5" && rapid.Bool().Draw(r, "nil Retryable")
		return s
	}
}

// play runs the scenario and checks that the final error ends Do at once,
// returned as it is, with no pause after it.
func (s testNeverRetried) play(h *katatest.H) {
	errs := testErrors(s.transient)
	final := s.final.err()
	errs = append(errs, final)
	op := &testOp{errs: errs}
	hooks := &testHooks{}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base, BeforeSleep: hooks.record}
	switch {
	case s.req == "R3":
		p.Retryable = func(err error) bool {
			var st *testStatus
			return !errors.As(err, &st) || st.code >= 500
		}
	case !s.nilRetry:
		p.Retryable = func(error) bool { return true }
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	if c.Broken() {
		return
	}
	h.Advance(time.Hour) // every pause of the transient failures ends
	// A mock timer of 0 (BaseDelay 0) yields 1ms of bubble time: let the
	// bubble run on, with the mock clock stopped.
	if _, took := c.ReturnsAtOnce(time.Second); took >= time.Second {
		h.Errorf("Do was still running an hour after attempt %d failed with %s (op was called %d times): "+
			"that error is never retried, so Do returns right after the attempt that produced it",
			s.transient+1, s.final.how, op.Calls())
		c.Stop()
		return
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	if calls := op.Calls(); calls != s.transient+1 {
		h.Errorf("op was called %d time(s); want %d: the error of attempt %d (%s) is never retried",
			calls, s.transient+1, s.transient+1, s.final.how)
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
	}
}

// testDescribe names an error for a message: its text, type and chain.
func testDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", strings.TrimSpace(err.Error()), err, katatest.Chain(err))
}

func TestR3_ExploreNeverRetriedErrorsReturnAsTheyAre(t *testing.T) {
	katatest.Explore(t, 40, testDrawNeverRetried("R3"), func(h *katatest.H, s testNeverRetried) { s.play(h) })
}

func TestR5_ExploreContextErrorsReturnAsTheyAre(t *testing.T) {
	katatest.Explore(t, 40, testDrawNeverRetried("R5"), func(h *katatest.H, s testNeverRetried) { s.play(h) })
}
