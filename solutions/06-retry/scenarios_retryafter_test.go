package retry

// Explored bonus B2: a Retry-After mark sets the next pause of an error that
// is retried; it never makes an error that is never retried retryable.

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

// testMarkedFinal is an error that is never retried, carrying a Retry-After
// mark somewhere in its chain (around it, inside it, or beside it).
type testMarkedFinal struct {
	how  string // with "d" standing for the Retry-After
	ctx  bool   // never retried because it matches a context error (else: Permanent)
	make func(d time.Duration) error
}

var testMarkedFinals = []testMarkedFinal{
	{"RetryAfter(d, Permanent(errors.New(…)))", false, func(d time.Duration) error {
		return RetryAfter(d, Permanent(errors.New("card declined")))
	}},
	{"Permanent(RetryAfter(d, errors.New(…)))", false, func(d time.Duration) error {
		return Permanent(RetryAfter(d, errors.New("gone for good")))
	}},
	{"RetryAfter(d, Permanent(…)) wrapped again with %w", false, func(d time.Duration) error {
		return fmt.Errorf("charge: %w", RetryAfter(d, Permanent(errors.New("card declined"))))
	}},
	{"RetryAfter(d, fmt.Errorf(…%w…, Permanent(&statusError{503})))", false, func(d time.Duration) error {
		return RetryAfter(d, fmt.Errorf("stock: %w", Permanent(&testStatus{503})))
	}},
	{"errors.Join(RetryAfter(d, &statusError{429}), Permanent(…))", false, func(d time.Duration) error {
		return errors.Join(RetryAfter(d, &testStatus{429}), Permanent(errors.New("bad request")))
	}},
	{"RetryAfter(d, context.Canceled)", true, func(d time.Duration) error {
		return RetryAfter(d, context.Canceled)
	}},
	{"RetryAfter(d, context.DeadlineExceeded)", true, func(d time.Duration) error {
		return RetryAfter(d, context.DeadlineExceeded)
	}},
	{"RetryAfter(d, context.DeadlineExceeded wrapped with %w)", true, func(d time.Duration) error {
		return RetryAfter(d, fmt.Errorf("dial: %w", context.DeadlineExceeded))
	}},
	{"RetryAfter(d, context.Canceled) wrapped again with %w", true, func(d time.Duration) error {
		return fmt.Errorf("stock lookup: %w", RetryAfter(d, context.Canceled))
	}},
	{"errors.Join(RetryAfter(d, &statusError{503}), context.Canceled)", true, func(d time.Duration) error {
		return errors.Join(RetryAfter(d, &testStatus{503}), context.Canceled)
	}},
}

// testMarkedRetryable says how Retryable is set in a scenario.
var testMarkedRetryable = []string{"nil", "accepts every error", "rejects status codes below 500"}

// testMarkedNeverRetried is one scenario: some retried failures (plain, or
// with a Retry-After of their own), then a never-retried error with a
// Retry-After mark.
type testMarkedNeverRetried struct {
	transient []time.Duration // one per retried failure: -1 plain, else RetryAfter(d, …)
	final     testMarkedFinal
	d         time.Duration // the final error's Retry-After
	attempts  int           // MaxAttempts, at least len(transient)+1: the final error may come from the last attempt
	base      time.Duration
	retryable string
}

func (s testMarkedNeverRetried) String() string {
	var steps []string
	for i, d := range s.transient {
		if d < 0 {
			steps = append(steps, fmt.Sprintf("attempt %d fails with a plain retryable error", i+1))
		} else {
			steps = append(steps, fmt.Sprintf("attempt %d fails with RetryAfter(%v, err)", i+1, d))
		}
	}
	steps = append(steps, fmt.Sprintf("attempt %d fails with %s, d = %v",
		len(s.transient)+1, s.final.how, s.d))
	return fmt.Sprintf("MaxAttempts %d, BaseDelay %v, Retryable %s; %s",
		s.attempts, s.base, s.retryable, strings.Join(steps, "; "))
}

func testDrawMarkedNeverRetried(r *rapid.T) testMarkedNeverRetried {
	var s testMarkedNeverRetried
	s.transient = rapid.SliceOfN(rapid.SampledFrom([]time.Duration{
		-1, 0, time.Millisecond, 7 * time.Millisecond, 40 * time.Millisecond,
	}), 0, 3).Draw(r, "transient failures (-1 plain, else Retry-After)")
	s.final = rapid.SampledFrom(testMarkedFinals).Draw(r, "final")
	s.d = rapid.SampledFrom([]time.Duration{
		0, 1, time.Millisecond, 30 * time.Millisecond, 24 * time.Hour,
	}).Draw(r, "final Retry-After")
	// Room for one more attempt first (what a failure shrinks to), but the
	// final error comes from the last attempt half the time.
	s.attempts = len(s.transient) + 1 + rapid.SampledFrom([]int{1, 0, 0, 2}).Draw(r, "spare attempts")
	s.base = time.Duration(rapid.IntRange(0, 20).Draw(r, "base ms")) * time.Millisecond
	s.retryable = rapid.SampledFrom(testMarkedRetryable).Draw(r, "Retryable")
	return s
}

// rule is what the README says of the final error, in its terms.
func (s testMarkedNeverRetried) rule() string {
	why := "a Permanent error stays Permanent when wrapped again, by RetryAfter as by %w: find the mark with errors.As"
	if s.final.ctx {
		why = "a context error means someone gave up, so it is never retried, RetryAfter or not"
	}
	return "a RetryAfter mark never overrides an error that is never retried (" + why +
		"); decide whether an error is retried at all before you look for its Retry-After"
}

func (s testMarkedNeverRetried) play(h *katatest.H) {
	errs := testErrors(len(s.transient))
	for i, d := range s.transient {
		if d >= 0 {
			errs[i] = RetryAfter(d, errs[i])
		}
	}
	final := s.final.make(s.d)
	errs = append(errs, final)
	n := len(errs) // the attempt that returns the final error
	op := &testOp{errs: errs}
	hooks := &testHooks{}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base, BeforeSleep: hooks.record}
	switch s.retryable {
	case "accepts every error":
		p.Retryable = func(error) bool { return true }
	case "rejects status codes below 500":
		p.Retryable = func(err error) bool {
			var st *testStatus
			return !errors.As(err, &st) || st.code >= 500
		}
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	if c.Broken() {
		return
	}
	h.Advance(time.Hour) // every pause of the retried failures ends
	// A mock timer of 0 yields 1ms of bubble time: let the bubble run on,
	// with the mock clock stopped.
	if _, took := c.ReturnsAtOnce(time.Second); took >= time.Second {
		h.Errorf("Do paused after attempt %d failed with %s: %s "+
			"(Do was still running an hour later, d = %v, op called %d times)",
			n, s.final.how, s.rule(), s.d, op.Calls())
		c.Stop()
		return
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	if calls := op.Calls(); calls != n {
		h.Errorf("Do retried the error of attempt %d, %s: %s "+
			"(op was called %d time(s), want %d; d = %v)",
			n, s.final.how, s.rule(), calls, n, s.d)
		return
	}
	if err != final {
		h.Errorf("Do did not return the error of attempt %d, %s, as it is, mark included (err == what op "+
			"returned, not wrapped in ErrExhausted and not unwrapped): %s; Do returned %s",
			n, s.final.how, s.rule(), testDescribe(err))
		return
	}
	if v != "" {
		h.Errorf("Do returned the value %q with the error; every failure returns the zero value of T", v)
	}
	// Whether BeforeSleep saw the earlier pauses is R1's business; here only
	// the pause that must not follow the final error counts.
	for _, sl := range hooks.All() {
		if sl.attempt >= n {
			h.Errorf("BeforeSleep was told of a %v pause after attempt %d, which failed with %s: %s",
				sl.pause, sl.attempt, s.final.how, s.rule())
			return
		}
	}
}

func TestB2_ExploreRetryAfterNeverOverridesANeverRetriedError(t *testing.T) {
	katatest.Explore(t, 20, testDrawMarkedNeverRetried, func(h *katatest.H, s testMarkedNeverRetried) { s.play(h) })
}
