package retry

// Explored bonus B2: a Retry-After mark sets the next pause of an error that
// is retried; it never makes an error that is never retried retryable.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
	asked := &katatest.Recorder[error]{}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base, BeforeSleep: hooks.record}
	switch s.retryable {
	case "accepts every error":
		p.Retryable = func(err error) bool {
			asked.Add(err)
			return true
		}
	case "rejects status codes below 500":
		p.Retryable = func(err error) bool {
			asked.Add(err)
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
	for i, e := range errs {
		if i < len(s.transient) && s.transient[i] < 0 {
			continue // a plain error: Retryable may be asked about it
		}
		how := s.final.how + ", which is never retried"
		if i < len(s.transient) {
			how = fmt.Sprintf("RetryAfter(%v, err), which is retried whatever Retryable says", s.transient[i])
		}
		if testAskedAbout(asked.All(), e) {
			h.Errorf("Retryable was asked about the error of attempt %d, %s: Retryable is not asked about a RetryAfter "+
				"error, nor about an error that is never retried; rule those out first, and ask Retryable only about "+
				"the others", i+1, how)
			return
		}
	}
}

// testAskedAbout reports whether Retryable was asked about err, or about an
// error that wraps it or that it wraps.
func testAskedAbout(asked []error, err error) bool {
	for _, e := range asked {
		if e == err || errors.Is(e, err) || errors.Is(err, e) {
			return true
		}
	}
	return false
}

func TestB2_ExploreRetryAfterNeverOverridesANeverRetriedError(t *testing.T) {
	katatest.Explore(t, 20, testDrawMarkedNeverRetried, func(h *katatest.H, s testMarkedNeverRetried) { s.play(h) })
	// Every run: with Retryable set, a Retry-After error before a
	// Permanent one with a Retry-After of its own.
	katatest.Replay(t, []testMarkedNeverRetried{
		{transient: []time.Duration{5 * time.Millisecond, -1}, final: testMarkedFinals[0], d: time.Millisecond,
			attempts: 4, base: 10 * time.Millisecond, retryable: "accepts every error"},
	}, func(h *katatest.H, s testMarkedNeverRetried) { s.play(h) })
}

// testRAStep is how one attempt fails in a testRetryAfterRun: a plain
// retryable error, or one with a Retry-After of d.
type testRAStep struct {
	after bool          // RetryAfter(d, …); else a plain error of testFailureKinds[kind]
	d     time.Duration // the Retry-After: zero, negative, tiny, past MaxDelay or the largest Duration
	wrap  int           // how the mark is carried: testRAWraps[wrap]
	kind  int
}

// testRAWraps are the ways an op returns a Retry-After: the mark itself,
// wrapped again, or joined with another error. errors.As finds it in each.
var testRAWraps = []struct {
	how  string
	make func(d time.Duration, n int) error
}{
	{"RetryAfter(%v, &statusError{429})", func(d time.Duration, n int) error { return RetryAfter(d, &testStatus{429}) }},
	{"RetryAfter(%v, &statusError{429}) wrapped again with %%w", func(d time.Duration, n int) error {
		return fmt.Errorf("stock lookup %d: %w", n, RetryAfter(d, &testStatus{429}))
	}},
	{"errors.Join(RetryAfter(%v, &statusError{429}), a plain error)", func(d time.Duration, n int) error {
		return errors.Join(RetryAfter(d, &testStatus{429}), fmt.Errorf("replica b, attempt %d: reset", n))
	}},
}

func (st testRAStep) String() string {
	if st.after {
		return fmt.Sprintf(testRAWraps[st.wrap].how, st.d)
	}
	return testFailureKinds[st.kind].how
}

func (st testRAStep) err(n int) error {
	if st.after {
		return testRAWraps[st.wrap].make(st.d, n)
	}
	return testFailureKinds[st.kind].make(n)
}

// testRetryAfterRun is one call of Do whose attempts fail with plain errors
// and Retry-After errors mixed, under a drawn backoff, jitter and budget.
type testRetryAfterRun struct {
	base     time.Duration
	mult     float64
	maxDelay time.Duration
	jitter   float64 // as given: clamped to [0, 1]
	r        float64 // what Rand returns
	steps    []testRAStep
	attempts int
	budget   time.Duration // MaxElapsed
	rejects  bool          // Retryable rejects status 429 (Retry-After errors are not asked)
}

func (s testRetryAfterRun) String() string {
	var fails []string
	for i, st := range s.steps {
		fails = append(fails, fmt.Sprintf("attempt %d fails with %s", i+1, st))
	}
	retry := "nil"
	if s.rejects {
		retry = "rejects status 429"
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, Multiplier: %v, MaxDelay: %v, Jitter: %v, Rand: %v, "+
		"MaxElapsed: %v, Retryable: %s}; %s; attempt %d would succeed",
		s.attempts, s.base, s.mult, s.maxDelay, s.jitter, s.r, s.budget, retry, strings.Join(fails, ", "), len(s.steps)+1)
}

// backoff is the README's pause after the n-th plain failure since the
// start or the last Retry-After, and the rounding the tests allow.
func (s testRetryAfterRun) backoff(n int) (pause, tol time.Duration) {
	if s.base <= 0 {
		return 0, 0
	}
	limit := time.Duration(math.MaxInt64)
	if s.maxDelay > 0 {
		limit = s.maxDelay
	}
	m := s.mult
	if m < 1 {
		m = 2
	}
	d := min(float64(s.base)*math.Pow(m, float64(n-1)), float64(limit))
	if m != math.Trunc(m) {
		tol = 1 // a fractional Multiplier: the README allows 1ns of rounding
	}
	if j := min(max(s.jitter, 0), 1); j > 0 {
		d *= 1 - j + 2*j*s.r
		tol = 1
	}
	if d >= float64(limit) {
		return limit, tol
	}
	if pause = max(time.Duration(d), 1); pause == 1 {
		tol = 0 // the floor: never below 1ns
	}
	return pause, tol
}

// testRAPause is one pause the README asks for in a testRetryAfterRun.
type testRAPause struct {
	want, tol time.Duration
	at        time.Duration // when it ends, counted from the start of Do
	why       string
}

// model is what the README says of s: the pauses Do makes, one per failure
// that is followed by another attempt, and how Do ends ("success",
// "attempts" or "budget") after attempt len(pauses)+1.
func (s testRetryAfterRun) model() (pauses []testRAPause, end string) {
	n, elapsed, since := 0, time.Duration(0), 0 // since: the attempt of the last Retry-After
	for i := 1; ; i++ {
		switch {
		case i > len(s.steps):
			return pauses, "success"
		case i >= max(s.attempts, 1):
			return pauses, "attempts"
		}
		st, p := s.steps[i-1], testRAPause{}
		if st.after {
			p.want, n, since = max(st.d, 0), 0, i
			p.why = fmt.Sprintf("attempt %d failed with %s: the next pause is exactly d, with no jitter and not "+
				"capped by MaxDelay", i, st)
			if st.d <= 0 {
				p.why += fmt.Sprintf("; a Retry-After of %v is no pause at all, not a missing one: retry at once, "+
					"and restart the backoff all the same", st.d)
			}
		} else {
			n++
			p.want, p.tol = s.backoff(n)
			p.why = fmt.Sprintf("plain failure %d of the backoff: BaseDelay %v · Multiplier^%d", n, s.base, n-1)
			if since > 0 {
				p.why = fmt.Sprintf("the backoff restarts after the Retry-After of attempt %d, so this is plain "+
					"failure %d since then: BaseDelay %v · Multiplier^%d", since, n, s.base, n-1)
			}
			if s.maxDelay > 0 {
				p.why += fmt.Sprintf(", capped at MaxDelay %v", s.maxDelay)
			}
			if j := min(max(s.jitter, 0), 1); j > 0 {
				p.why += fmt.Sprintf(", times the jitter 1 − J + 2J·r with J = %v, r = %v, at least 1ns", j, s.r)
			}
		}
		if s.budget > 0 && p.want > s.budget-elapsed {
			return pauses, "budget"
		}
		elapsed += p.want
		p.at = elapsed
		pauses = append(pauses, p)
	}
}

// testRADelays are the Retry-After values drawn: zero and below (no
// pause), tiny, past any MaxDelay drawn; hugeOK adds the largest Duration.
var testRADelays = []time.Duration{0, 0, -1, -5 * time.Second, math.MinInt64, 1, time.Millisecond,
	13 * time.Millisecond, 24 * time.Hour}

func testDrawRetryAfterRun(r *rapid.T) testRetryAfterRun {
	var s testRetryAfterRun
	s.base = rapid.SampledFrom([]time.Duration{0, 1, time.Millisecond, 7 * time.Millisecond, 50 * time.Millisecond}).
		Draw(r, "BaseDelay")
	s.mult = rapid.SampledFrom([]float64{0, 1.5, 3}).Draw(r, "Multiplier")
	if rapid.Bool().Draw(r, "MaxDelay set") && s.base > 0 {
		s.maxDelay = s.base * time.Duration(rapid.IntRange(1, 4).Draw(r, "MaxDelay/BaseDelay"))
	}
	s.jitter = rapid.SampledFrom([]float64{0, 0, 0.5, 1, 2}).Draw(r, "Jitter")
	s.r = rapid.SampledFrom([]float64{0, 0.25, testRMax}).Draw(r, "Rand")
	mode := rapid.SampledFrom([]string{"none", "none", "fits at k", "passes at k", "1h"}).Draw(r, "MaxElapsed")
	delays := testRADelays
	if mode == "1h" {
		delays = append(slices.Clone(delays), math.MaxInt64)
	}
	k := rapid.IntRange(1, 6).Draw(r, "failures")
	for i := range k {
		var st testRAStep
		st.after = rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("attempt %d Retry-After", i+1)) > 0
		if st.after {
			st.d = rapid.SampledFrom(delays).Draw(r, fmt.Sprintf("attempt %d d", i+1))
			st.wrap = rapid.IntRange(0, len(testRAWraps)-1).Draw(r, fmt.Sprintf("attempt %d mark", i+1))
		} else {
			st.kind = rapid.IntRange(0, len(testFailureKinds)-1).Draw(r, fmt.Sprintf("attempt %d kind", i+1))
		}
		s.steps = append(s.steps, st)
	}
	s.attempts = k + rapid.SampledFrom([]int{1, 0, 5}).Draw(r, "spare attempts")
	s.rejects = rapid.Bool().Draw(r, "Retryable rejects 429")
	pauses, _ := s.model()
	switch {
	case mode == "1h":
		s.budget = time.Hour
	case mode != "none" && len(pauses) > 0:
		at := rapid.IntRange(0, len(pauses)-1).Draw(r, "MaxElapsed at pause")
		s.budget = pauses[at].at // exactly reaching the budget is allowed
		if mode == "passes at k" {
			s.budget--
		}
	}
	// A budget no 1ns of jitter rounding can put on either side.
	if s.budget > 0 {
		s.budget -= s.slack(s.budget)
	}
	return s
}

// slack moves a drawn budget clear of the rounding the tests allow: each
// jittered pause may be 1ns off, so the time Do has spent may be as many
// ns off the model. It returns 0 when the budget is clear already, or
// budget itself (no budget) when no budget near it is.
func (s testRetryAfterRun) slack(budget time.Duration) time.Duration {
	probe := s
	probe.budget = budget
	pauses, _ := probe.model()
	var off time.Duration
	for _, p := range pauses {
		off += p.tol
	}
	if off == 0 {
		return 0
	}
	// Jittered pauses make the budget's edge blurry: keep the budget only
	// if every pause fits by more than the rounding, and the next one
	// passes it by more.
	probe.budget = budget + off
	wider, _ := probe.model()
	probe.budget = budget - off
	narrower, _ := probe.model()
	if len(wider) != len(pauses) || len(narrower) != len(pauses) {
		return budget
	}
	return 0
}

// testRAOp fails attempt n as s.steps[n-1] says, then succeeds with "ok";
// it records when each attempt was made and what it returned.
type testRAOp struct {
	s    testRetryAfterRun
	clk  interface{ Now() time.Time }
	mu   sync.Mutex
	errs []error
	at   []time.Time
}

func (o *testRAOp) call(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(o.errs) + 1
	o.at = append(o.at, o.clk.Now())
	if n > len(o.s.steps) {
		o.errs = append(o.errs, nil)
		return "ok", nil
	}
	err := o.s.steps[n-1].err(n)
	o.errs = append(o.errs, err)
	return "", err
}

func (o *testRAOp) calls() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.errs)
}

// made is when attempt n was made, and err what it returned.
func (o *testRAOp) made(n int) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.at[n-1]
}

func (o *testRAOp) err(n int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.errs[n-1]
}

func (s testRetryAfterRun) play(h *katatest.H) {
	pauses, end := s.model()
	op := &testRAOp{s: s, clk: h.Clk}
	hooks := &testHooks{}
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base, Multiplier: s.mult, MaxDelay: s.maxDelay,
		Jitter: s.jitter, Rand: func() float64 { return s.r }, MaxElapsed: s.budget, BeforeSleep: hooks.record}
	asked := &katatest.Recorder[error]{}
	if s.rejects {
		p.Retryable = func(err error) bool {
			asked.Add(err)
			var st *testStatus
			return !errors.As(err, &st) || st.code != 429
		}
	}
	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	if c.Broken() {
		return
	}
	for i, pause := range pauses {
		if !s.pause(h, c, op, i+1, pause) {
			c.Stop()
			return
		}
	}
	last := len(pauses) + 1
	if instant, _ := c.ReturnsAtOnce(time.Second); !instant {
		switch end {
		case "success":
			h.Errorf("attempt %d succeeded, yet Do was still running with the mock clock stopped: return op's value "+
				"as soon as it succeeds", last)
		case "attempts":
			h.Errorf("attempt %d, the last of MaxAttempts %d, failed with %s, yet Do was still running with the mock "+
				"clock stopped: a Retry-After error still counts against MaxAttempts, and no pause follows the final "+
				"attempt", last, s.attempts, s.steps[last-1])
		case "budget":
			next := s.steps[last-1]
			h.Errorf("attempt %d failed with %s at %v, and MaxElapsed is %v: the next pause passes the budget, so Do "+
				"must give up at once, yet it was still waiting with the mock clock stopped; a Retry-After pause is "+
				"still subject to MaxElapsed (compare pause > MaxElapsed − elapsed: elapsed + pause can overflow)",
				last, next, h.Clk.Now().Sub(op.made(1)), s.budget)
		}
		c.Stop()
		return
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	if calls := op.calls(); calls != last {
		h.Errorf("Do made %d attempt(s); want %d, then %s", calls, last, map[string]string{
			"success": "the success", "attempts": "MaxAttempts ran out", "budget": "MaxElapsed ran out"}[end])
		return
	}
	for n := 1; n <= last && n <= len(s.steps); n++ {
		if st := s.steps[n-1]; st.after && testAskedAbout(asked.All(), op.err(n)) {
			final := ""
			if n == max(s.attempts, 1) {
				final = ", not even after the final attempt (the attempts have run out: ErrExhausted)"
			}
			h.Errorf("Retryable was asked about the error of attempt %d, %s: a RetryAfter error is retried whatever "+
				"Retryable says, so Retryable is not asked about it%s; look for the Retry-After mark before you ask "+
				"Retryable", n, st, final)
			return
		}
	}
	if end == "success" {
		if v != "ok" || err != nil {
			h.Errorf("attempt %d succeeded with \"ok\", and Do returned (%q, %v); want (\"ok\", nil)", last, v, err)
		}
	} else {
		lastErr := op.err(last)
		switch {
		case !errors.Is(err, ErrExhausted) || !errors.Is(err, lastErr):
			h.Errorf("when %s, the error must match ErrExhausted and the last op error, %s; Do returned %s",
				map[string]string{"attempts": "the attempts run out", "budget": "MaxElapsed runs out"}[end],
				testDescribe(lastErr), testDescribe(err))
			return
		case v != "":
			h.Errorf("Do returned the value %q with the error; every failure returns the zero value of T", v)
			return
		}
	}
	s.checkHooks(h, hooks.All(), op, pauses)
}

// pause checks the pause after attempt n on the mock clock, to the
// nanosecond, and moves the clock through it.
func (s testRetryAfterRun) pause(h *katatest.H, c *katatest.Call[string], op *testRAOp, n int, p testRAPause) bool {
	synctest.Wait()
	if calls := op.calls(); calls < n || c.Returned() && calls == n {
		_, err := c.Result()
		h.Errorf("Do returned after attempt %d failed with %s (error: %s); want a pause of %v (%s) and then attempt %d",
			n, s.steps[n-1], testDescribe(err), p.want, p.why, n+1)
		return false
	}
	start := op.made(n)
	wrong := func() bool {
		h.Errorf("the pause after attempt %d was %v on the mock clock; want %v: %s",
			n, op.made(n+1).Sub(start), p.want, p.why)
		return false
	}
	if p.want == 0 {
		// A pause of 0: attempt n+1 comes without the clock moving (a
		// mock timer of 0 takes a moment of bubble time).
		if op.calls() == n {
			c.ReturnsAtOnce(10 * time.Millisecond)
		}
		if op.calls() == n {
			h.Errorf("after attempt %d failed with %s, Do was still waiting with the mock clock stopped; want no pause "+
				"at all: %s", n, s.steps[n-1], p.why)
			return false
		}
		if op.made(n+1) != start {
			return wrong()
		}
		return true
	}
	if op.calls() > n {
		return wrong()
	}
	if early := start.Add(p.want - p.tol - 1).Sub(h.Clk.Now()); early > 0 {
		h.Advance(early)
		if op.calls() > n {
			return wrong()
		}
	}
	for d := p.want - p.tol; d <= p.want+p.tol && op.calls() == n; d++ {
		if step := start.Add(d).Sub(h.Clk.Now()); step > 0 {
			h.Advance(step)
		}
	}
	if op.calls() == n {
		h.Errorf("attempt %d had not started when the %v pause after attempt %d had passed on the mock clock: %s",
			n+1, p.want, n, p.why)
		return false
	}
	if got := op.made(n + 1).Sub(start); got < p.want-p.tol || got > p.want+p.tol {
		return wrong()
	}
	return true
}

// checkHooks checks what BeforeSleep was told before each pause. Before a
// pause of 0 it may be told of it or not called at all.
func (s testRetryAfterRun) checkHooks(h *katatest.H, got []testSleep, op *testRAOp, pauses []testRAPause) {
	j := 0
	for i, p := range pauses {
		n, st := i+1, s.steps[i]
		if j == len(got) || got[j].attempt != n {
			if p.want == 0 {
				continue
			}
			h.Errorf("BeforeSleep was not called before the %v pause after attempt %d (it was called for the attempts "+
				"%v): call it before every pause, a Retry-After pause included, with the pause you wait for (%s)",
				p.want, n, testHookAttempts(got), p.why)
			return
		}
		g := got[j]
		j++
		ok := g.err == op.err(n) && testNear(g.pause, p.want, p.tol)
		if st.after && st.d < 0 && g.pause == st.d {
			ok = g.err == op.err(n) // a negative d reported as it is: no pause either way
		}
		if !ok {
			h.Errorf("BeforeSleep before the pause after attempt %d got (attempt %d, err %s, pause %v); want (attempt "+
				"%d, the very error attempt %d returned, %s, pause %v): %s",
				n, g.attempt, testDescribe(g.err), g.pause, n, n, testDescribe(op.err(n)), p.want, p.why)
			return
		}
	}
	if last := max(s.attempts, 1); j < len(got) && got[j].attempt == last {
		h.Errorf("BeforeSleep was called after attempt %d, the last of MaxAttempts %d: no pause follows the final "+
			"attempt, so Do returns at once and BeforeSleep is not called", last, s.attempts)
		return
	}
	if j < len(got) {
		h.Errorf("BeforeSleep was called for the attempts %v, and %d pause(s) were made: call it once before each "+
			"pause, with the 1-based attempt that just failed, and never when no pause follows", testHookAttempts(got),
			len(pauses))
	}
}

// testHookAttempts lists the attempts BeforeSleep was told of.
func testHookAttempts(got []testSleep) []int {
	var out []int
	for _, g := range got {
		out = append(out, g.attempt)
	}
	return out
}

func TestB2_ExploreRetryAfterOfAnyLengthSetsThePauseAndRestarts(t *testing.T) {
	katatest.Explore(t, 20, testDrawRetryAfterRun, func(h *katatest.H, s testRetryAfterRun) { s.play(h) })
	// Every run: Retry-After of 0 and below, between jittered backoff
	// pauses, the largest Duration against a budget, and a Retry-After on
	// the final attempt, which buys no pause.
	const ms = time.Millisecond
	plain, ra := testRAStep{}, func(d time.Duration) testRAStep { return testRAStep{after: true, d: d} }
	katatest.Replay(t, []testRetryAfterRun{
		{base: 10 * ms, jitter: 0.5, r: 0.75, attempts: 6, steps: []testRAStep{plain, plain, ra(0), plain, ra(-5 * time.Second)}},
		{base: 10 * ms, maxDelay: 15 * ms, attempts: 4, budget: time.Hour, steps: []testRAStep{plain, ra(math.MaxInt64)}},
		{base: 10 * ms, attempts: 2, steps: []testRAStep{ra(5 * ms), ra(5 * ms)}},
		// Retryable rejects the 429 that every Retry-After error wraps: it
		// is not asked about them, the final attempt's included.
		{base: 10 * ms, attempts: 3, rejects: true, steps: []testRAStep{ra(5 * ms), plain, ra(7 * ms)}},
	}, func(h *katatest.H, s testRetryAfterRun) { s.play(h) })
}

// Explored B2, continued: several calls of Do at once (clients throttled
// by different servers), sharing one Policy, each told by its own
// Retry-After errors how long to wait. A Retry-After belongs to the call
// whose op returned it: every call pauses exactly its own d. Each call
// gets a clock of its own, so that nothing but the Policy is shared and
// nothing orders the calls: whatever Do keeps behind the Policy (a
// package-level errors.As target, say) is used by every call at once, and
// the race detector sees it. Every call's first attempt fails with a
// Retry-After of its own, so the calls look for their marks at the same
// moment.
type testRACallers struct {
	run   testRetryAfterRun // the shared Policy; steps unused
	steps [][]testRAStep    // per call: how each attempt fails before one succeeds
}

func (s testRACallers) attempts() int {
	n := 0
	for _, st := range s.steps {
		n = max(n, len(st)+1)
	}
	return n
}

// call is s.run with the steps of call i.
func (s testRACallers) call(i int) testRetryAfterRun {
	r := s.run
	r.steps, r.attempts = s.steps[i], s.attempts()
	return r
}

func (s testRACallers) String() string {
	var calls []string
	for i, steps := range s.steps {
		var fails []string
		for _, st := range steps {
			fails = append(fails, st.String())
		}
		calls = append(calls, fmt.Sprintf("call %d fails with %s, then succeeds", i+1, strings.Join(fails, ", ")))
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, Multiplier: %v, MaxDelay: %v, Jitter: %v, Rand: %v}, "+
		"shared by %d calls of Do at once, each on a mock clock of its own; %s",
		s.attempts(), s.run.base, s.run.mult, s.run.maxDelay, s.run.jitter, s.run.r, len(s.steps),
		strings.Join(calls, "; "))
}

func testDrawRACallers(r *rapid.T) testRACallers {
	var s testRACallers
	s.run.base = rapid.SampledFrom([]time.Duration{0, 1, time.Millisecond, 7 * time.Millisecond}).Draw(r, "BaseDelay")
	s.run.mult = rapid.SampledFrom([]float64{0, 1.5, 3}).Draw(r, "Multiplier")
	if rapid.Bool().Draw(r, "MaxDelay set") && s.run.base > 0 {
		s.run.maxDelay = s.run.base * time.Duration(rapid.IntRange(1, 4).Draw(r, "MaxDelay/BaseDelay"))
	}
	s.run.jitter = rapid.SampledFrom([]float64{0, 0.5}).Draw(r, "Jitter")
	s.run.r = rapid.SampledFrom([]float64{0, 0.25, testRMax}).Draw(r, "Rand")
	// The first Retry-After of each call is one no other call has, and
	// never a pause of 0, so that a call pausing another's d shows.
	firsts := rapid.Permutation([]time.Duration{1, time.Millisecond, 3 * time.Millisecond, 13 * time.Millisecond,
		40 * time.Millisecond, time.Second, 24 * time.Hour}).Draw(r, "first Retry-After of each call")
	later := []time.Duration{0, -1, 1, 2 * time.Millisecond, 13 * time.Millisecond, 24 * time.Hour}
	callers := rapid.IntRange(2, 4).Draw(r, "calls")
	for i := range callers {
		steps := []testRAStep{{after: true, d: firsts[i],
			wrap: rapid.IntRange(0, len(testRAWraps)-1).Draw(r, fmt.Sprintf("call %d attempt 1 mark", i+1))}}
		for k := range rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("call %d more failures", i+1)) {
			var st testRAStep
			at := fmt.Sprintf("call %d attempt %d", i+1, k+2)
			if st.after = rapid.Bool().Draw(r, at+" Retry-After"); st.after {
				st.d = rapid.SampledFrom(later).Draw(r, at+" d")
				st.wrap = rapid.IntRange(0, len(testRAWraps)-1).Draw(r, at+" mark")
			} else {
				st.kind = rapid.IntRange(0, len(testFailureKinds)-1).Draw(r, at+" kind")
			}
			steps = append(steps, st)
		}
		s.steps = append(s.steps, steps)
	}
	return s
}

func (s testRACallers) play(h *katatest.H) {
	r := s.run
	p := Policy{MaxAttempts: s.attempts(), BaseDelay: r.base, Multiplier: r.mult, MaxDelay: r.maxDelay,
		Jitter: r.jitter, Rand: func() float64 { return r.r }}
	clks := make([]*katatest.Clock, len(s.steps))
	ops := make([]*testOp, len(s.steps))
	calls := make([]*katatest.Call[string], len(s.steps))
	for i, steps := range s.steps {
		errs := make([]error, len(steps))
		for n, st := range steps {
			errs[n] = st.err(n + 1)
		}
		clk := katatest.NewClock()
		op := &testOp{errs: errs, clk: clk}
		clks[i], ops[i] = clk, op
		calls[i] = katatest.Start(h, func(ctx context.Context) (v string, err error) {
			katatest.AtFreshDepth(func() { v, err = Do(ctx, clk, p, op.call) })
			return v, err
		})
	}
	for _, c := range calls {
		if c.Broken() {
			katatest.Unwind(h, calls...)
			return
		}
	}
	// Each clock has one call of Do on it: moving it to its last timer
	// ends that call's pause, whatever its length, and the op records
	// when the next attempt came.
	for range s.attempts() {
		synctest.Wait()
		for _, clk := range clks {
			clk.WaitForAllTimers()
		}
	}
	synctest.Wait()
	for i, c := range calls {
		if !c.Returned() {
			h.Errorf("call %d of Do was still running after its clock had reached each of its pauses (its op was "+
				"called %d time(s), and attempt %d succeeds): wait on a timer from clk for each pause",
				i+1, ops[i].Calls(), len(s.steps[i])+1)
			katatest.Unwind(h, calls...)
			return
		}
	}
	for i, c := range calls {
		v, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		if made := ops[i].Calls(); v != "ok" || err != nil || made != len(s.steps[i])+1 {
			h.Errorf("call %d of Do: attempt %d succeeds, after %d failures, and MaxAttempts is %d; Do returned "+
				"(%q, %v) after %d attempt(s)", i+1, len(s.steps[i])+1, len(s.steps[i]), s.attempts(), v, err, made)
			return
		}
	}
	for i := range calls {
		pauses, _ := s.call(i).model()
		for n, want := range pauses {
			if got := ops[i].waited(n + 1); !testNear(got, want.want, want.tol) {
				mine := ""
				if st := s.steps[i][n]; st.after {
					for j, other := range s.steps {
						if j != i && slices.ContainsFunc(other, func(o testRAStep) bool { return o.after && o.d == got }) {
							mine = fmt.Sprintf("; %v is a Retry-After of call %d", got, j+1)
							break
						}
					}
				}
				h.Errorf("call %d of Do paused %v after attempt %d, while other calls of Do ran at once; want %v: "+
					"%s. Each call's Retry-After is its own%s: keep what errors.As finds in a variable of the call, "+
					"never in one shared by every call of Do", i+1, got, n+1, want.want, want.why, mine)
				return
			}
		}
	}
}

func TestB2_ExploreConcurrentCallsEachPauseTheirOwnRetryAfter(t *testing.T) {
	katatest.Explore(t, 15, testDrawRACallers, func(h *katatest.H, s testRACallers) { s.play(h) })
}
