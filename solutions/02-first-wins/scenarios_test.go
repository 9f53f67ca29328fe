package firstwins

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them: how many replicas,
// when each answers on the mock clock and with what (successes, errors of
// every kind, answers at the same instant as each other, as the timeout
// or as the caller's cancel), whether a replica honours its ctx, the
// timeout (none, zero, negative), and how many goroutines call First at
// once on one clock.

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

const testMs = time.Millisecond

// How a replica fails.
const (
	testPlain    = iota // errors.New(text)
	testStatus          // &testStatusErr{code}
	testWrapped         // fmt.Errorf("pricing: %w", &testStatusErr{code})
	testCanceled        // fmt.Errorf("pool: %w", context.Canceled): its own cancel, not the caller's
	testDeadline        // fmt.Errorf("client: %w", context.DeadlineExceeded): its own per-call timeout, not First's
	testKinds
)

var testKindNames = [...]string{"errors.New(%q)", "&statusError{%s}", "fmt.Errorf(\"pricing: %%w\", &statusError{%s})",
	"fmt.Errorf(\"pool: %w\", context.Canceled) (its own connection pool was closed; the caller did not cancel)",
	"fmt.Errorf(\"client: %w\", context.DeadlineExceeded) (its own per-call timeout; First's timeout had not passed)"}

var testTexts = []string{"503", "connection refused", "503", "deadline exceeded upstream", "429"}

// testStatusErr is an error type the caller may look for with errors.As.
type testStatusErr struct{ code string }

func (e *testStatusErr) Error() string { return "status " + e.code }

// testReplica is what one replica does.
type testReplica struct {
	at      time.Duration // when it answers, on the mock clock, from the start of First
	ok      bool
	kind    int
	text    string
	honours bool // returns its ctx's error as soon as its ctx is done
}

// testFirstScenario is one run of First.
type testFirstScenario struct {
	focus    string
	callers  int
	pre      bool          // the caller's ctx is cancelled before First starts
	timeout  time.Duration // <= 0: none
	cancelAt time.Duration // > 0: the caller cancels then, racing with what happens at that instant
	reps     []testReplica
}

func (s testFirstScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "First with %d replica(s), timeout %v", len(s.reps), s.timeout)
	if s.timeout <= 0 {
		b.WriteString(" (no timeout)")
	}
	if s.callers > 1 {
		fmt.Fprintf(&b, ", called by %d goroutines at once on one clock (each with replicas of its own)", s.callers)
	}
	if s.pre {
		b.WriteString(", with a ctx already cancelled")
	}
	if s.cancelAt > 0 {
		fmt.Fprintf(&b, "; the caller cancels at %v", s.cancelAt)
	}
	b.WriteString(";")
	for i, r := range s.reps {
		what := fmt.Sprintf("succeeds with %q", r.text)
		if !r.ok {
			what = "fails with " + testFailName(r)
		}
		ctx := "ignores its ctx"
		if r.honours {
			ctx = "honours its ctx"
		}
		fmt.Fprintf(&b, "\n  replica %d: at %v %s; %s", i, r.at, what, ctx)
	}
	return b.String()
}

func testFailName(r testReplica) string {
	if r.kind == testCanceled || r.kind == testDeadline {
		return testKindNames[r.kind]
	}
	return fmt.Sprintf(testKindNames[r.kind], r.text)
}

// testFirstDraw is what a test lets vary.
type testFirstDraw struct {
	focus     string
	minN      int
	maxCall   int
	success   bool // replicas may succeed
	allFail   bool // every replica fails
	honours   bool // replicas may honour ctx
	ignores   bool // replicas may ignore ctx
	timeout   bool // a timeout may pass before the answers
	cancel    bool // the caller may cancel
	pre       bool
	distinct  bool // failures never come at the same instant
	lateOK    int  // at most this many successes after the first
	odds      int  // a replica succeeds one time in odds (3 unless set)
	mustTime  bool // a timeout (> 0) always
	mustStop  bool // the caller always cancels, before First or while it runs
	ownCancel bool // a replica may fail with a context.Canceled or context.DeadlineExceeded of its own
	lookalike bool // replica 0 fails first with a context.DeadlineExceeded of its own, and another answers later
}

func (d testFirstDraw) draw(r *rapid.T) testFirstScenario {
	s := testFirstScenario{focus: d.focus}
	s.callers = rapid.IntRange(1, d.maxCall).Draw(r, "callers")
	n := rapid.IntRange(d.minN, 5).Draw(r, "replicas")
	used := map[time.Duration]bool{}
	successes := 0
	for i := range n {
		rep := testReplica{}
		rep.at = time.Duration(rapid.IntRange(0, 6).Draw(r, fmt.Sprintf("replica %d answers at (x10ms)", i))) * 10 * testMs
		odds := d.odds
		if odds == 0 {
			odds = 3
		}
		rep.ok = d.success && !d.allFail && successes <= d.lateOK &&
			rapid.IntRange(0, odds-1).Draw(r, fmt.Sprintf("replica %d succeeds", i)) == 0
		if rep.ok {
			successes++
			rep.text = rapid.SampledFrom([]string{"9.99", "12.50", "9.99", "0.00"}).Draw(r, fmt.Sprintf("replica %d value", i))
		} else {
			kinds := testKinds
			if !d.ownCancel {
				kinds = testCanceled
			}
			rep.kind = rapid.IntRange(0, kinds-1).Draw(r, fmt.Sprintf("replica %d error kind", i))
			rep.text = rapid.SampledFrom(testTexts).Draw(r, fmt.Sprintf("replica %d error text", i))
			if rep.kind == testStatus || rep.kind == testWrapped {
				rep.text = rapid.SampledFrom([]string{"500", "503"}).Draw(r, fmt.Sprintf("replica %d status", i))
			}
			if d.distinct {
				for used[rep.at] {
					rep.at += 10 * testMs
				}
				used[rep.at] = true
			}
		}
		switch {
		case d.honours && d.ignores:
			rep.honours = rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i))
		default:
			rep.honours = d.honours
		}
		s.reps = append(s.reps, rep)
	}
	if d.mustTime {
		s.timeout = time.Duration(rapid.IntRange(1, 7).Draw(r, "timeout (x10ms)")) * 10 * testMs
	} else if d.timeout {
		s.timeout = time.Duration(rapid.IntRange(-1, 7).Draw(r, "timeout (x10ms)")) * 10 * testMs
		if s.timeout < 0 {
			s.timeout = -rapid.SampledFrom([]time.Duration{1, time.Second}).Draw(r, "negative timeout")
		}
	}
	if d.lookalike && n >= 2 {
		// A replica's own timeout is a failure like any other: replica 0
		// fails first with it, and another one answers (or fails) later,
		// well before First's own timeout, if any.
		la := &s.reps[0]
		la.ok, la.kind, la.text = false, testDeadline, ""
		// With no timeout (0: a negative one is R3's), replica 0 fails at
		// 10ms, so a First that gives up at 0 misread the timeout instead.
		la.at = 10 * testMs
		if s.timeout > 0 {
			s.timeout = time.Second
			la.at = time.Duration(rapid.IntRange(0, 1).Draw(r, "replica 0 fails at (x10ms)")) * 10 * testMs
		} else {
			s.timeout = 0
		}
		later := time.Duration(rapid.IntRange(1, 5).Draw(r, "the last replica answers after it (x10ms)")) * 10 * testMs
		last := &s.reps[n-1]
		last.at = max(last.at, la.at+later)
		if !d.allFail {
			last.ok, last.text = true, "9.99"
			for i := range s.reps {
				if r := &s.reps[i]; r.ok && r.at <= la.at {
					r.at = la.at + later
				}
			}
		}
	}
	if d.cancel && n > 0 {
		if d.pre && rapid.IntRange(0, 3).Draw(r, "cancelled before First") == 0 {
			s.pre = true
			for i := range s.reps {
				s.reps[i].at = max(s.reps[i].at, 10*testMs) // nothing answers before First sees the cancel
			}
		} else if d.mustStop || rapid.Bool().Draw(r, "the caller cancels") {
			s.cancelAt = time.Duration(rapid.IntRange(1, 6).Draw(r, "cancel at (x10ms)")) * 10 * testMs
		}
		if d.mustStop && s.cancelAt > 0 {
			// Failures first (replicas 0 and 1 fail at 0 and 10ms), then
			// the cancel, which a success may race but not precede.
			s.cancelAt = max(s.cancelAt, 20*testMs)
			for i := range min(2, n) {
				rep := &s.reps[i]
				if rep.ok {
					rep.ok, rep.kind, rep.text = false, testPlain, "503"
				}
				rep.at = time.Duration(i) * 10 * testMs
			}
			for i := range s.reps {
				if s.reps[i].ok && s.reps[i].at < s.cancelAt {
					s.reps[i].at = s.cancelAt
				}
			}
		}
	}
	return s
}

// Kinds of decision: what ends First.
const (
	testWin = iota
	testAllFailed
	testTimedOut
	testCancelled
)

var testDecisionReq = [...]string{"R1", "R2", "R3", "R6"}

// decision is the instant First must return at and what may end it then
// (several kinds when they come at the same instant).
func (s testFirstScenario) decision() (at time.Duration, kinds []int) {
	if s.pre {
		return 0, []int{testCancelled}
	}
	times := []time.Duration{}
	for _, r := range s.reps {
		times = append(times, r.at)
	}
	if s.timeout > 0 {
		times = append(times, s.timeout)
	}
	if s.cancelAt > 0 {
		times = append(times, s.cancelAt)
	}
	slices.Sort(times)
	for _, t := range slices.Compact(times) {
		failed := 0
		for _, r := range s.reps {
			if r.at == t && r.ok && !slices.Contains(kinds, testWin) {
				kinds = append(kinds, testWin)
			}
			if r.at <= t && !r.ok {
				failed++
			}
		}
		if failed == len(s.reps) {
			kinds = append(kinds, testAllFailed)
		}
		if s.timeout > 0 && s.timeout == t {
			kinds = append(kinds, testTimedOut)
		}
		if s.cancelAt > 0 && s.cancelAt == t {
			kinds = append(kinds, testCancelled)
		}
		if len(kinds) > 0 {
			return t, kinds
		}
	}
	return -1, nil
}

// report fails the scenario when reqs (space-separated, "*" for all)
// name the requirement under test; otherwise the scenario ends there.
func (s testFirstScenario) report(h *katatest.H, reqs string, format string, args ...any) bool {
	h.Helper()
	if reqs == "*" || slices.Contains(strings.Fields(reqs), s.focus) {
		h.Errorf(format, args...)
	}
	return false
}

func (s testFirstScenario) reqsOf(kinds []int) string {
	var reqs []string
	for _, k := range kinds {
		reqs = append(reqs, testDecisionReq[k])
	}
	return strings.Join(reqs, " ")
}

// testKey marks the caller's ctx: the replicas' ctx must carry it.
type testExploreKey struct{}

// testReps is one caller's replicas on the mock clock.
type testReps struct {
	s    *testFirstScenario
	h    *katatest.H
	errs []error

	mu       sync.Mutex
	ctxs     []context.Context
	started  []bool
	returned []bool
	viaCtx   []bool
	failed   []string // the text of the error replica i returned; "" for none
}

func testNewReps(h *katatest.H, s *testFirstScenario) *testReps {
	n := len(s.reps)
	rs := &testReps{s: s, h: h, ctxs: make([]context.Context, n), started: make([]bool, n),
		returned: make([]bool, n), viaCtx: make([]bool, n), failed: make([]string, n)}
	for _, r := range s.reps {
		var err error
		switch r.kind {
		case testPlain:
			err = errors.New(r.text)
		case testStatus:
			err = &testStatusErr{r.text}
		case testWrapped:
			err = fmt.Errorf("pricing: %w", &testStatusErr{r.text})
		case testCanceled:
			err = fmt.Errorf("pool: %w", context.Canceled)
		case testDeadline:
			err = fmt.Errorf("client: %w", context.DeadlineExceeded)
		}
		if r.ok {
			err = nil
		}
		rs.errs = append(rs.errs, err)
	}
	return rs
}

func (rs *testReps) calls() []testCall {
	calls := make([]testCall, len(rs.s.reps))
	for i := range calls {
		calls[i] = func(ctx context.Context) (string, error) { return rs.call(i, ctx) }
	}
	return calls
}

func (rs *testReps) call(i int, ctx context.Context) (v string, err error) {
	r := rs.s.reps[i]
	rs.mu.Lock()
	rs.ctxs[i], rs.started[i] = ctx, true
	rs.mu.Unlock()
	via := false
	defer func() {
		rs.mu.Lock()
		rs.returned[i], rs.viaCtx[i] = true, via
		if err != nil {
			rs.failed[i] = err.Error()
		}
		rs.mu.Unlock()
	}()
	if r.at > 0 {
		t := rs.h.Clk.Timer(r.at)
		defer t.Stop()
		done := ctx.Done()
		if !r.honours {
			done = nil
		}
		select {
		case <-t.C:
		case <-done:
			via = true
			return "", fmt.Errorf("gave up: %w", ctx.Err())
		}
	}
	if r.ok {
		return r.text, nil
	}
	return "stale " + r.text, rs.errs[i] // a value along with the error, which First must not return
}

type testRepsView struct {
	ctxs     []context.Context
	started  []bool
	returned []bool
	viaCtx   []bool
	failed   []string
}

func (rs *testReps) view() testRepsView {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return testRepsView{slices.Clone(rs.ctxs), slices.Clone(rs.started), slices.Clone(rs.returned), slices.Clone(rs.viaCtx),
		slices.Clone(rs.failed)}
}

// testGot is what First returned, read on the caller's goroutine the
// moment it returned.
type testGot struct {
	v   string
	err error
	msg string
}

type testFirstCaller struct {
	rs   *testReps
	c    *katatest.Call[testGot]
	done bool
}

func (s testFirstScenario) play(h *katatest.H) {
	callers := make([]*testFirstCaller, s.callers)
	for k := range callers {
		rs := testNewReps(h, &s)
		calls := rs.calls()
		var opts []katatest.CtxOption
		if s.pre {
			opts = append(opts, katatest.Cancelled())
		}
		callers[k] = &testFirstCaller{rs: rs, c: katatest.Start(h, func(ctx context.Context) (testGot, error) {
			ctx = context.WithValue(ctx, testExploreKey{}, k)
			v, err := First(ctx, h.Clk, s.timeout, calls...)
			got := testGot{v: v, err: err}
			if err != nil {
				got.msg = err.Error()
			}
			return got, nil
		}, opts...)}
	}
	stop := func() {
		for _, c := range callers {
			c.c.Cancel()
		}
		h.Advance(24 * time.Hour)
		for _, c := range callers {
			c.c.Stop()
		}
	}
	synctest.Wait()
	for _, c := range callers {
		if c.c.Returned() && c.c.Panicked() {
			stop()
			return
		}
	}
	if len(s.reps) == 0 {
		s.checkNoCalls(h, callers)
		return
	}
	decideAt, kinds := s.decision()
	times := []time.Duration{0}
	for _, r := range s.reps {
		times = append(times, r.at)
	}
	times = append(times, s.timeout, s.cancelAt, decideAt)
	slices.Sort(times)
	times = slices.Compact(slices.DeleteFunc(times, func(t time.Duration) bool { return t < 0 }))
	for _, t := range times {
		if t > h.Elapsed() {
			synctest.Wait()
			if s.cancelAt > 0 && s.cancelAt == t {
				// The cancel and what the clock brings at this instant
				// race: either may reach First first.
				for _, c := range callers {
					c.c.Cancel()
				}
			}
			h.Clk.Add(t - h.Elapsed())
			synctest.Wait()
		}
		for _, c := range callers {
			if !s.check(h, t, decideAt, kinds, c) {
				stop()
				return
			}
		}
	}
	if s.focus == "R5" {
		if !h.NoLeaks("First and its late losers") || !s.noTimerLeft(h) {
			return
		}
	}
	for _, c := range callers {
		c.c.Finish("First")
	}
}

// noTimerLeft: once every replica has answered, nothing First started is
// still registered on the mock clock (WaitForAllTimers would move it).
func (s testFirstScenario) noTimerLeft(h *katatest.H) bool {
	if moved := h.PendingTimer(); moved != 0 {
		return s.report(h, "R5", "First returned, every replica had answered, and a timer was still pending on clk "+
			"(WaitForAllTimers moved the mock clock %v further): stop every timer on the way out "+
			"(t := clk.Timer(d); defer t.Stop()); clk.After cannot be stopped", moved)
	}
	return true
}

func (s testFirstScenario) checkNoCalls(h *katatest.H, callers []*testFirstCaller) {
	for _, c := range callers {
		if !c.c.Returned() {
			s.report(h, "R6", "First with no calls was still waiting (for a result that can never come): return "+
				"ErrNoCalls at once, before anything else")
			c.c.Stop()
			return
		}
		got, _ := c.c.Result()
		if !errors.Is(got.err, ErrNoCalls) {
			s.report(h, "R6", "First with no calls returned (%q, %v); want ErrNoCalls: with no replica there is no "+
				"answer, and (zero, nil) would pass for a success", got.v, got.err)
			return
		}
	}
}

// check compares what happened by instant t with what the README says.
func (s testFirstScenario) check(h *katatest.H, t, decideAt time.Duration, kinds []int, c *testFirstCaller) bool {
	if c.done {
		return true
	}
	returned := c.c.Returned()
	v := c.rs.view()
	for i, started := range v.started {
		// A replica may go uncalled once First has returned: a winner
		// that answers at once can beat the other starts.
		if !started && !returned {
			return s.report(h, "*", "precondition: after %v, replica %d had not been called: First calls every "+
				"replica at once", t, i)
		}
	}
	if t < decideAt || decideAt < 0 {
		if returned {
			got, _ := c.c.Result()
			reqs := s.earlyReq(t) // a failure was taken for an answer
			if reqs == "" {
				reqs = s.reqsOf(kinds)
			}
			if errors.Is(got.err, ErrTimeout) && s.ownDeadline(t) < 0 {
				reqs = "R3" // gave up too early
			}
			return s.report(h, reqs, "First returned (%q, %v) at %v, before anything "+
				"that ends it (%s): %s", got.v, got.err, t, s.decisionText(decideAt, kinds), s.earlyWhy(t, got))
		}
		return true
	}
	if !returned {
		return s.report(h, s.reqsOf(kinds), "First was still waiting at %v, when %s: %s%s", t,
			s.decisionText(decideAt, kinds), s.lateWhy(kinds), h.Waiting())
	}
	c.done = true
	got, _ := c.c.Result()
	if !s.checkOutcome(h, t, kinds, c, got) {
		return false
	}
	// Every replica still waiting on its ctx was told to stop.
	for i, r := range s.reps {
		if r.honours && r.at > t && !v.returned[i] {
			return s.report(h, "R4", "First returned at %v, but replica %d (which honours its ctx and would answer at "+
				"%v) was still running with a live ctx: cancel the replicas' ctx whenever First returns (derive it "+
				"with context.WithCancel(ctx) and defer cancel())", t, i, r.at)
		}
		if ctx := v.ctxs[i]; ctx != nil && ctx.Value(testExploreKey{}) == nil {
			return s.report(h, "R4", "replica %d got a ctx that does not carry the caller's values: each replica's "+
				"ctx must derive from the caller's (context.WithCancel(ctx)), not start from context.Background()", i)
		}
	}
	// Every replica's ctx ends when First returns, whatever the replica
	// did: the winner's, the failed ones', and those still running.
	for i, ctx := range v.ctxs {
		if ctx == nil || ctx.Err() != nil {
			continue
		}
		did := "was still running (it ignores its ctx)"
		switch {
		case v.returned[i] && v.failed[i] == "":
			did = "had succeeded"
		case v.returned[i]:
			did = fmt.Sprintf("had failed with %q", v.failed[i])
		}
		return s.report(h, "R4", "First returned at %v (%s), but the ctx replica %d got, which %s, was never "+
			"cancelled: First cancels the replicas' ctx on every return, the winner's and the failed replicas' "+
			"too, not only the losers still running; a ctx left live keeps whatever the replica started under it "+
			"running, and stays registered on the caller's ctx until that ends. Derive one ctx for all the replicas "+
			"with context.WithCancel(ctx) and defer cancel(), or cancel every replica's ctx on the way out",
			t, s.decisionText(t, kinds), i, did)
	}
	return true
}

func (s testFirstScenario) earlyReq(t time.Duration) string {
	for _, r := range s.reps {
		if r.at <= t && !r.ok {
			return "R1 R2" // a failure was taken for an answer
		}
	}
	return ""
}

// ownDeadline is a replica that failed by t with a context.DeadlineExceeded
// of its own, or -1.
func (s testFirstScenario) ownDeadline(t time.Duration) int {
	for i, r := range s.reps {
		if !r.ok && r.kind == testDeadline && r.at <= t {
			return i
		}
	}
	return -1
}

func (s testFirstScenario) earlyWhy(t time.Duration, got testGot) string {
	if i := s.ownDeadline(t); i >= 0 && errors.Is(got.err, context.DeadlineExceeded) {
		timeout := "First has no timeout here"
		if s.timeout > 0 {
			timeout = fmt.Sprintf("First's own timeout is %v from its start", s.timeout)
		}
		return fmt.Sprintf("replica %d failed at %v with an error wrapping context.DeadlineExceeded, its own per-call "+
			"timeout: that is a failure like any other, not First's timeout (%s, and only First's own timer ends "+
			"it with ErrTimeout). Record it and keep waiting while other replicas may still succeed; do not "+
			"treat an error matching context.DeadlineExceeded as a timeout", i, s.reps[i].at, timeout)
	}
	if s.timeout <= 0 && errors.Is(got.err, ErrTimeout) {
		return fmt.Sprintf("timeout %v means no timeout: start a timer only when timeout > 0 (a nil channel never "+
			"fires in a select)", s.timeout)
	}
	if s.timeout > t && errors.Is(got.err, ErrTimeout) {
		return fmt.Sprintf("the %v timeout counts from the start of First: start one clk.Timer before the loop, not "+
			"a new one for every reply", s.timeout)
	}
	return "a failure is not an answer while other replicas may still succeed; record the error and keep waiting"
}

func (s testFirstScenario) decisionText(at time.Duration, kinds []int) string {
	var parts []string
	for _, k := range kinds {
		switch k {
		case testWin:
			parts = append(parts, fmt.Sprintf("a replica succeeded at %v", at))
		case testAllFailed:
			parts = append(parts, fmt.Sprintf("the last replica failed at %v", at))
		case testTimedOut:
			parts = append(parts, fmt.Sprintf("the %v timeout passed", s.timeout))
		case testCancelled:
			parts = append(parts, "the caller cancelled")
		}
	}
	if at < 0 {
		return "nothing had ended it yet"
	}
	return strings.Join(parts, ", and ")
}

func (s testFirstScenario) lateWhy(kinds []int) string {
	why := s.lateReason(kinds)
	if len(s.reps) == 1 && (kinds[0] == testTimedOut || kinds[0] == testCancelled) {
		why += "; a single replica is raced like many: on a goroutine of its own, never called inline on the " +
			"caller's goroutine"
	}
	return why
}

func (s testFirstScenario) lateReason(kinds []int) string {
	switch kinds[0] {
	case testWin:
		return "return the first success at once; don't wait for the others"
	case testAllFailed:
		return "when the last replica fails, return all their errors at once"
	case testTimedOut:
		return "stop waiting at the timeout on the injected clock: one clk.Timer from the start of First, in the " +
			"select (not time.After or anything else from package time)"
	default:
		return "return at once when the caller gives up: select on ctx.Done() as well, and don't wait for the " +
			"replicas to finish"
	}
}

// checkOutcome checks what First returned at t against what may end it.
func (s testFirstScenario) checkOutcome(h *katatest.H, t time.Duration, kinds []int, c *testFirstCaller, got testGot) bool {
	reqs := s.reqsOf(kinds)
	if got.err == nil {
		var values []string
		for _, r := range s.reps {
			if r.ok && r.at == t {
				values = append(values, r.text)
			}
		}
		if !slices.Contains(kinds, testWin) {
			return s.report(h, reqs, "First returned (%q, nil) at %v, but no replica succeeded then: %s",
				got.v, t, s.decisionText(t, kinds))
		}
		if !slices.Contains(values, got.v) {
			return s.report(h, "R1", "First returned %q at %v; want the value of the replica that succeeded then "+
				"(one of %q), not a later or a failed one", got.v, t, values)
		}
		return true
	}
	if got.v != "" {
		return s.report(h, reqs, "First returned the value %q with the error %q: every failure returns the zero value "+
			"of T, not what a failed replica returned along with its error", got.v, got.msg)
	}
	switch {
	case errors.Is(got.err, ErrTimeout):
		if !slices.Contains(kinds, testTimedOut) {
			req := "R3"
			if s.ownDeadline(t) >= 0 {
				req = reqs
			}
			return s.report(h, req, "First returned a timeout error %q at %v, but %s: %s", got.msg, t,
				s.decisionText(t, kinds), s.earlyWhy(t, got))
		}
		if !errors.Is(got.err, context.DeadlineExceeded) {
			return s.report(h, "R3", "at the timeout First returned %q, which does not match context.DeadlineExceeded: "+
				"wrap both ErrTimeout and context.DeadlineExceeded with %%w", got.msg)
		}
		return s.checkSoFar(h, "R3", t, c, got, "after the timeout")
	case slices.Contains(kinds, testCancelled) && errors.Is(got.err, context.Canceled) && s.onlyOwnCancels(c, got):
		return s.checkSoFar(h, "R6", t, c, got, "after the caller cancelled")
	case slices.Contains(kinds, testAllFailed):
		return s.checkAllFailed(h, c, got)
	}
	why := ""
	if slices.Contains(kinds, testWin) {
		why = ": a failure is not an answer while other replicas may still succeed; return the first success"
	}
	return s.report(h, reqs, "First returned %q (chain %s) at %v, when %s%s", got.msg, katatest.Chain(got.err), t,
		s.decisionText(t, kinds), why)
}

// onlyOwnCancels: the error matches context.Canceled through the caller's
// cancel, not only through a replica's own context.Canceled failure.
func (s testFirstScenario) onlyOwnCancels(c *testFirstCaller, got testGot) bool {
	e := got.err
	for i, err := range c.rs.errs {
		if err != nil && s.reps[i].kind == testCanceled {
			e = testWithout(e, err)
		}
	}
	return e != nil && errors.Is(e, context.Canceled)
}

// testWithout is err with the branch that is drop left out of its tree.
func testWithout(err, drop error) error {
	if err == drop {
		return nil
	}
	switch x := err.(type) {
	case interface{ Unwrap() []error }:
		var keep []error
		for _, e := range x.Unwrap() {
			if e = testWithout(e, drop); e != nil {
				keep = append(keep, e)
			}
		}
		if len(keep) == 0 {
			return nil
		}
		return errors.Join(keep...)
	case interface{ Unwrap() error }:
		inner := x.Unwrap()
		if inner == nil {
			return err
		}
		if testWithout(inner, drop) == nil {
			return nil
		}
		return err
	}
	return err
}

// checkSoFar: the error carries every failure before t (and none that
// had not happened yet).
func (s testFirstScenario) checkSoFar(h *katatest.H, req string, t time.Duration, c *testFirstCaller, got testGot, when string) bool {
	anyMatched := false
	for i, r := range s.reps {
		if !r.ok && errors.Is(got.err, c.rs.errs[i]) {
			anyMatched = true
		}
	}
	for i, r := range s.reps {
		err := c.rs.errs[i]
		if r.ok {
			continue
		}
		if r.at < t && !errors.Is(got.err, err) {
			if msg := katatest.LostWrap(got.err, err, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" && !anyMatched {
				// How the errors are wrapped is graded with R2 and R3.
				return s.report(h, "R2 R3", "First returned %q %s: %s", got.msg, when, msg)
			}
			return s.report(h, req, "%s First returned %q, which does not carry the error of replica %d (%s), which "+
				"failed at %v, before: the error must carry the failures so far (errors.Join keeps them all)", when, got.msg, i,
				testFailName(r), r.at)
		}
		if r.at > t && r.kind != testCanceled && errors.Is(got.err, err) {
			return s.report(h, req, "%s First returned %q, which carries the error of replica %d, which fails only at "+
				"%v, after First returned", when, got.msg, i, r.at)
		}
	}
	if why := testPhantomFailure("First", got.msg, c.rs.view().failed); why != "" {
		return s.report(h, req, "%s First returned %q: %s", when, got.msg, why)
	}
	return true
}

// checkAllFailed: every error, tagged with its replica, in the order of calls.
func (s testFirstScenario) checkAllFailed(h *katatest.H, c *testFirstCaller, got testGot) bool {
	if errors.Is(got.err, ErrTimeout) {
		return s.report(h, "R2", "every replica failed before the timeout, and First returned %q: that is not a "+
			"timeout", got.msg)
	}
	prev := 0
	for i, err := range c.rs.errs {
		if !errors.Is(got.err, err) {
			if msg := katatest.LostWrap(got.err, err, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
				return s.report(h, "R2", "every replica failed and First returned %q: %s", got.msg, msg)
			}
			return s.report(h, "R2", "every replica failed and First returned %q, which does not match the error of "+
				"replica %d (%s): errors.Join keeps them all", got.msg, i, testFailName(s.reps[i]))
		}
		tag := fmt.Sprintf("replica %d: ", i)
		at := strings.Index(got.msg[prev:], tag)
		if at < 0 {
			return s.report(h, "R2", "every replica failed and First returned %q: the error must tag each replica's "+
				"error with its index in calls, in the order of calls (%q next), whatever order they failed in", got.msg, tag)
		}
		prev += at + len(tag)
	}
	if why := testPhantomFailure("First", got.msg, c.rs.view().failed); why != "" {
		return s.report(h, "R2", "every replica failed and First returned %q: %s", got.msg, why)
	}
	return true
}

func TestR1_ExploreTheFirstSuccessWins(t *testing.T) {
	d := testFirstDraw{focus: "R1", minN: 1, maxCall: 3, success: true, ignores: true, timeout: true, distinct: true}
	katatest.Explore(t, 10, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR1_ExploreAReplicasOwnTimeoutIsJustAFailure(t *testing.T) {
	// Replica 0 fails first with a context.DeadlineExceeded of its own, and
	// another replica succeeds later; the others may fail with a
	// context.Canceled or context.DeadlineExceeded of their own too.
	d := testFirstDraw{focus: "R1", minN: 2, maxCall: 2, success: true, honours: true, ignores: true, timeout: true,
		ownCancel: true, lookalike: true}
	katatest.Explore(t, 5, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR2_ExploreEveryFailureIsReturned(t *testing.T) {
	d := testFirstDraw{focus: "R2", minN: 1, maxCall: 2, allFail: true, honours: true, ignores: true, ownCancel: true}
	katatest.Explore(t, 10, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// Replica 0 fails first with a context.DeadlineExceeded of its own, and
	// the others fail later: First returns only after the last failure.
	d.minN, d.lookalike = 2, true
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR3_ExploreTheTimeout(t *testing.T) {
	d := testFirstDraw{focus: "R3", minN: 2, maxCall: 2, success: true, honours: true, mustTime: true, lateOK: 0, odds: 5}
	katatest.Explore(t, 14, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// And always the timeout after two failures: the error carries both.
	twoFailed := testFirstScenario{focus: "R3", callers: 1, timeout: 50 * testMs, reps: []testReplica{
		{at: 10 * testMs, text: "connection refused", honours: true},
		{at: 20 * testMs, text: "503 busy", honours: true},
		{at: 80 * testMs, ok: true, text: "9.99", honours: true},
	}}
	katatest.Explore(t, 1, func(*rapid.T) testFirstScenario { return twoFailed },
		func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// And a single replica, which ignores its ctx and answers after the
	// timeout: one call is raced against the clock like many.
	alone := testFirstScenario{focus: "R3", callers: 1, timeout: 50 * testMs, reps: []testReplica{
		{at: 80 * testMs, ok: true, text: "9.99"},
	}}
	katatest.Explore(t, 1, func(*rapid.T) testFirstScenario { return alone },
		func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR4_ExploreTheLosersAreCancelled(t *testing.T) {
	d := testFirstDraw{focus: "R4", minN: 1, maxCall: 2, success: true, honours: true, ignores: true, timeout: true}
	katatest.Explore(t, 8, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// And when no replica succeeds (every one fails, some with a context
	// error of their own; the timeout passes; the caller cancels, before
	// or while First runs): the ctx of every replica First called ends
	// when it returns, the failed ones' and those still running, whether
	// they honour it or not.
	d = testFirstDraw{focus: "R4", minN: 1, maxCall: 2, allFail: true, honours: true, ignores: true, timeout: true,
		cancel: true, pre: true, ownCancel: true}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR5_ExploreNothingLeaks(t *testing.T) {
	d := testFirstDraw{focus: "R5", minN: 1, maxCall: 2, success: true, honours: true, ignores: true, timeout: true,
		cancel: true, lateOK: 4}
	katatest.Explore(t, 8, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
}

func TestR6_ExploreTheCallersCancel(t *testing.T) {
	d := testFirstDraw{focus: "R6", minN: 0, maxCall: 2, success: true, ignores: true, timeout: true, cancel: true,
		mustStop: true, pre: true, distinct: true, lateOK: 0, odds: 5}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// And always the cancel after two failures: the error carries both.
	twoFailed := testFirstScenario{focus: "R6", callers: 1, cancelAt: 30 * testMs, reps: []testReplica{
		{at: 10 * testMs, text: "connection refused", honours: true},
		{at: 20 * testMs, text: "503 busy", honours: true},
		{at: 60 * testMs, ok: true, text: "9.99", honours: true},
	}}
	katatest.Explore(t, 1, func(*rapid.T) testFirstScenario { return twoFailed },
		func(h *katatest.H, s testFirstScenario) { s.play(h) })
	// And a single replica, which ignores its ctx and answers after the
	// cancel: First returns at the cancel all the same.
	alone := testFirstScenario{focus: "R6", callers: 1, cancelAt: 30 * testMs, reps: []testReplica{
		{at: 60 * testMs, ok: true, text: "9.99"},
	}}
	katatest.Explore(t, 1, func(*rapid.T) testFirstScenario { return alone },
		func(h *katatest.H, s testFirstScenario) { s.play(h) })
}
