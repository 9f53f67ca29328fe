package breaker

// Explored requirements: each test draws many scenarios (katatest.Explore),
// plays them against a small model of the README's breaker and checks,
// step by step, that the breaker did what the model says.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testHTTPError is an error of a type of its own, as an HTTP client's would
// be: the IsFailure of the scenarios rejects codes below 500.
type testHTTPError struct{ code int }

func (e *testHTTPError) Error() string { return "status " + strconv.Itoa(e.code) }

// testIsFailure is the IsFailure of the scenarios that set one.
func testIsFailure(err error) bool {
	var he *testHTTPError
	return !errors.As(err, &he) || he.code >= 500
}

// What an outcome counts as, in the README's terms.
const (
	testSuccess = iota
	testFailure
	testAnswer    // an error IsFailure rejects (a failure when IsFailure is nil)
	testCancelled // matches context.Canceled: counts for nothing
	testReturned  // a failure fn returns (no panic)
)

// testOutcome is how one call's fn ends.
type testOutcome struct {
	how  string
	kind int
	// make builds a fresh error (identity is what "as it is" means) or a
	// panic value; ctx is the call's.
	err   func(ctx context.Context) error
	panic func() any // nil: fn returns err
	ctx   bool       // the caller cancels its ctx before fn returns
	// marked: err carries RetryAfter(ra, …) (bonus B2)
	marked bool
	ra     time.Duration
}

func (o testOutcome) String() string { return o.how }

// testCounts says what the outcome counts as for a breaker with or without
// IsFailure.
func (o testOutcome) counts(isFailure bool) int {
	if o.kind == testAnswer {
		if isFailure {
			return testSuccess
		}
		return testFailure
	}
	return o.kind
}

// testDrawOutcome draws how a call ends, among kinds.
func testDrawOutcome(r *rapid.T, label string, kinds ...int) testOutcome {
	k := rapid.SampledFrom(kinds).Draw(r, label+" kind")
	return rapid.SampledFrom(testOutcomesOf(r, label, k)).Draw(r, label)
}

func testOutcomesOf(r *rapid.T, label string, kind int) []testOutcome {
	switch kind {
	case testSuccess:
		return []testOutcome{{how: "returns nil", kind: testSuccess, err: func(context.Context) error { return nil }}}
	case testReturned:
		var out []testOutcome
		for _, o := range testOutcomesOf(r, label, testFailure) {
			if o.panic == nil {
				out = append(out, o)
			}
		}
		return out
	case testFailure:
		text := rapid.SampledFrom([]string{"503 service unavailable", "connection reset by peer",
			"i/o timeout", "database is failing over"}).Draw(r, label+" text")
		return []testOutcome{
			{how: fmt.Sprintf("returns errors.New(%q)", text), kind: testFailure,
				err: func(context.Context) error { return errors.New(text) }},
			{how: fmt.Sprintf("returns fmt.Errorf(\"stock: %%w\", errors.New(%q))", text), kind: testFailure,
				err: func(context.Context) error { return fmt.Errorf("stock: %w", errors.New(text)) }},
			{how: "returns &httpError{503}", kind: testFailure,
				err: func(context.Context) error { return &testHTTPError{503} }},
			{how: "returns context.DeadlineExceeded wrapped with %w", kind: testFailure,
				err: func(context.Context) error { return fmt.Errorf("inventory: %w", context.DeadlineExceeded) }},
			{how: "panics with a string", kind: testFailure, panic: func() any { return "inventory: nil row" }},
			{how: "panics with an error value", kind: testFailure, panic: func() any { return errors.New(text) }},
			{how: "panics with a runtime error (index out of range)", kind: testFailure,
				panic: func() any { return testRuntimePanic() }},
			// Values that would count otherwise if fn returned them: a
			// panic is a failure whatever it carries.
			{how: "panics with &httpError{404}, an answer if fn returned it", kind: testFailure,
				panic: func() any { return &testHTTPError{404} }},
			{how: "panics with fmt.Errorf(\"stock: %w\", context.Canceled), a cancellation if fn returned it", kind: testFailure,
				panic: func() any { return fmt.Errorf("stock: %w", context.Canceled) }},
		}
	case testAnswer:
		code := rapid.SampledFrom([]int{400, 404, 409, 422}).Draw(r, label+" code")
		return []testOutcome{
			{how: fmt.Sprintf("returns &httpError{%d}", code), kind: testAnswer,
				err: func(context.Context) error { return &testHTTPError{code} }},
			{how: fmt.Sprintf("returns &httpError{%d} wrapped with %%w", code), kind: testAnswer,
				err: func(context.Context) error { return fmt.Errorf("sku 42: %w", &testHTTPError{code}) }},
		}
	case testCancelled:
		return []testOutcome{
			{how: "returns context.Canceled", kind: testCancelled,
				err: func(context.Context) error { return context.Canceled }},
			{how: "returns context.Canceled wrapped with %w", kind: testCancelled,
				err: func(context.Context) error { return fmt.Errorf("stock lookup: %w", context.Canceled) }},
			{how: "returns its ctx.Err() wrapped with %w, the caller having cancelled", kind: testCancelled, ctx: true,
				err: func(ctx context.Context) error { return fmt.Errorf("rpc: %w", ctx.Err()) }},
		}
	}
	panic("unknown outcome kind")
}

// testRuntimePanic returns the value of a real runtime panic.
func testRuntimePanic() (v any) {
	defer func() { v = recover() }()
	var rows []int
	i := len(rows) + 2
	_ = rows[i]
	return nil
}

// testFailingText is a failure whose text speaks of a cancellation, for the
// scenarios of R6: only errors.Is(err, context.Canceled) makes a cancellation.
func testFailingText(r *rapid.T, label string) testOutcome {
	text := rapid.SampledFrom([]string{"upstream request canceled", "context canceled by the proxy",
		"operation was canceled by the peer"}).Draw(r, label+" text")
	return testOutcome{how: fmt.Sprintf("returns errors.New(%q), a failure whatever its text", text), kind: testFailure,
		err: func(context.Context) error { return errors.New(text) }}
}

// Step kinds of a scenario.
const (
	testStepCall    = iota // a call whose fn ends at once
	testStepState          // State()
	testStepAdvance        // the clock moves
	testStepHold           // n calls at once whose fn waits until told to end
	testStepEnd            // a held call's fn ends
	testStepVerdict        // IsFailure, holding a held call's verdict (testStep.slow), decides
)

type testStep struct {
	kind      int
	out       testOutcome
	ctxCancel bool // the caller's ctx is cancelled before the call
	d         time.Duration
	n         int  // testStepHold: callers at once; testStepEnd, testStepVerdict: which held call (1-based, among those let through)
	slow      bool // testStepEnd: IsFailure takes its time over fn's error, until a testStepVerdict
}

// testScenario is a breaker's settings and what happens to it.
type testScenario struct {
	req string // the requirement whose statements the scenario checks
	set Settings
	isF bool
	// allow: IsFailure is an allowlist, true only for the failures fn
	// returns, false for any other error (isF must be set too)
	allow bool
	// nest: OnStateChange calls Do from inside the hook (nil: it does not)
	nest  *testNest
	steps []testStep
	// quiet: calls stuck on the mutex while IsFailure decides end the
	// scenario without a verdict (R6 names that mistake)
	quiet bool
}

func (s testScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, Settings{MaxFailures: %d, OpenTimeout: %v, HalfOpenMaxRequests: %d",
		s.set.MaxFailures, s.set.OpenTimeout, s.set.HalfOpenMaxRequests)
	if s.set.FailureRate > 0 {
		fmt.Fprintf(&b, ", FailureRate: %v, Window: %v, MinRequests: %d", s.set.FailureRate, s.set.Window, s.set.MinRequests)
	}
	switch {
	case s.allow:
		b.WriteString(", IsFailure: true only for the outage errors fn returns (5xx, resets, timeouts), false for any other error")
	case s.isF:
		b.WriteString(", IsFailure: false for httpError codes below 500")
	}
	if s.nest != nil {
		fmt.Fprintf(&b, ", OnStateChange: on the first %v that a call of State or a call's result makes, calls Do, "+
			"whose fn %s, and waits for it", s.nest.on, s.nest.out.how)
	}
	b.WriteString("})")
	held := 0
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n\t%d. ", i+1)
		switch st.kind {
		case testStepCall:
			ctx := ""
			if st.ctxCancel {
				ctx = " (the caller's ctx is already cancelled)"
			}
			fmt.Fprintf(&b, "Do: fn %s%s", st.out.how, ctx)
		case testStepState:
			b.WriteString("State()")
		case testStepAdvance:
			fmt.Fprintf(&b, "the clock moves %v", st.d)
		case testStepHold:
			fmt.Fprintf(&b, "%d goroutine(s) call Do at once; each fn that runs waits (held calls %d-%d)", st.n, held+1, held+st.n)
			held += st.n
		case testStepEnd:
			fmt.Fprintf(&b, "the fn of held call %d %s", st.n, st.out.how)
			if st.slow {
				b.WriteString(", and IsFailure takes its time deciding what that error counts as")
			}
		case testStepVerdict:
			fmt.Fprintf(&b, "IsFailure returns its verdict on the error of held call %d", st.n)
		}
	}
	return b.String()
}

// testModel is the README's breaker, one step at a time, on the mock
// clock's time since the scenario began.
type testModel struct {
	maxF, maxHalf int
	timeout       time.Duration
	isF           bool
	// defaulted: OpenTimeout was 0 or below, so timeout is its default
	defaulted bool

	now        time.Duration
	state      State
	gen        int
	failures   int
	probes     int
	successes  int
	openUntil  time.Duration
	openedFrom State // the state the breaker opened from: Closed (a trip) or HalfOpen (a failed probe)
	openedAt   time.Duration
	// endedAt is the instant the last open period ended, if the breaker
	// turned half-open at exactly that instant (edged)
	endedAt time.Duration
	edged   bool
	// what the failure that opened the breaker carried (bonus B2)
	openedMarked bool
	openedRA     time.Duration
	sawMarked    bool // some error fn returned carried a Retry-After
	changes      []testChange

	// With FailureRate (bonus B1): the outcomes of the closed state that
	// are still in the window, oldest first.
	rate     float64
	window   time.Duration
	minReq   int
	outcomes []testWindowed
	// the window when FailureRate opened the breaker: outcomes, failures
	openedN, openedF int
	// The results recorded in the current closed generation, and in the
	// last one that ended: a failure message replays them to say what a
	// breaker that counts a panic or a cancellation otherwise did.
	log, lastLog []testLogged
	// how the probe that reopened the breaker panicked ("" if it did not)
	probePanic string

	// The Do that OnStateChange calls (nil: none), once: after nestFrom
	// transitions, it made those up to nestTo.
	nest             *testNest
	nestDone         bool
	nestFrom, nestTo int
}

// testWindowed is an outcome in the window of FailureRate.
type testWindowed struct {
	at     time.Duration
	failed bool
}

// testLogged is a result recorded in the closed state.
type testLogged struct {
	at       time.Duration
	res      int // testSuccess, testFailure or testCancelled
	panic    bool
	how      string
	deadline bool // fn returned an error matching context.DeadlineExceeded: a failure
}

// testNest is a hook that calls Do: on the first transition on made by a
// call of State or by a call's result (not by the admission of a Do, where
// the README leaves open whether the hook runs before or after the call
// takes its place), OnStateChange calls Do once, whose fn ends as out says,
// and waits for it.
type testNest struct {
	on  testChange
	out testOutcome
}

func testNewModel(s Settings, isF bool) *testModel {
	m := &testModel{maxF: s.MaxFailures, maxHalf: s.HalfOpenMaxRequests, timeout: s.OpenTimeout, isF: isF}
	if m.maxF < 1 {
		m.maxF = 5
	}
	if m.timeout <= 0 {
		m.timeout, m.defaulted = 60*time.Second, true
	}
	m.maxHalf = max(m.maxHalf, 1)
	m.rate, m.window, m.minReq = s.FailureRate, s.Window, max(s.MinRequests, 1)
	if m.window <= 0 {
		m.window = 60 * time.Second
	}
	return m
}

// nested plays the Do that the hook calls, if the transitions since before
// include the one it waits for: the call is let through or rejected, and
// ends, before the call that made the transition returns. ran says whether
// it happened; rej is the error it was rejected with.
func (m *testModel) nested(before int) (ran bool, rej error) {
	if m.nest == nil || m.nestDone || !slices.Contains(m.changes[before:], m.nest.on) {
		return false, nil
	}
	m.nestDone, m.nestFrom = true, len(m.changes)
	gen, rej := m.admit()
	if rej == nil {
		m.record(gen, m.nest.out)
	}
	m.nestTo = len(m.changes)
	return true, rej
}

// stateOf is the state of generation gen.
func (m *testModel) stateOf(gen int) State {
	if gen == 0 {
		return Closed
	}
	return m.changes[gen-1].to
}

func (m *testModel) set(to State) {
	m.changes = append(m.changes, testChange{m.state, to})
	m.state = to
	m.gen++
	m.failures, m.probes, m.successes = 0, 0, 0
	m.outcomes = nil
	if m.changes[len(m.changes)-1].from == Closed {
		m.lastLog, m.log = m.log, nil
	}
}

func (m *testModel) expire() {
	if m.state == Open && m.now >= m.openUntil {
		m.edged, m.endedAt = m.now == m.openUntil, m.now
		m.set(HalfOpen)
	}
}

// admit returns the call's generation, or the error it is rejected with.
func (m *testModel) admit() (int, error) {
	m.expire()
	switch {
	case m.state == Open:
		return 0, ErrOpen
	case m.state == HalfOpen && m.probes >= m.maxHalf:
		return 0, ErrTooManyRequests
	case m.state == HalfOpen:
		m.probes++
	}
	return m.gen, nil
}

func (m *testModel) record(gen int, o testOutcome) {
	m.sawMarked = m.sawMarked || o.marked
	if gen != m.gen {
		return
	}
	res := o.counts(m.isF)
	switch m.state {
	case Closed:
		m.log = append(m.log, testLogged{m.now, res, o.panic != nil, o.how,
			o.panic == nil && strings.Contains(o.how, "context.DeadlineExceeded")})
		if m.rate > 0 {
			m.recordRate(o, res)
			return
		}
		switch res {
		case testSuccess:
			m.failures = 0
		case testFailure:
			if m.failures++; m.failures >= m.maxF {
				m.open(Closed, o)
			}
		}
	case HalfOpen:
		m.probes--
		switch res {
		case testSuccess:
			if m.successes++; m.successes >= m.maxHalf {
				m.set(Closed)
			}
		case testFailure:
			m.open(HalfOpen, o)
		}
	}
}

// recordRate records a closed breaker's outcome with FailureRate (B1).
func (m *testModel) recordRate(o testOutcome, res int) {
	if res == testCancelled {
		return
	}
	m.outcomes = slices.DeleteFunc(append(m.outcomes, testWindowed{m.now, res == testFailure}),
		func(w testWindowed) bool { return m.now >= w.at+m.window })
	failures := 0
	for _, w := range m.outcomes {
		if w.failed {
			failures++
		}
	}
	if res == testFailure && len(m.outcomes) >= m.minReq && float64(failures) >= m.rate*float64(len(m.outcomes)) {
		m.openedN, m.openedF = len(m.outcomes), failures
		m.open(Closed, o)
	}
}

// trips replays the results of a closed generation, each counted as as
// says, and reports whether they open the breaker.
func (m *testModel) trips(log []testLogged, as func(testLogged) int) bool {
	failures := 0
	var window []testWindowed
	for _, e := range log {
		res := as(e)
		if res == testCancelled {
			continue
		}
		if m.rate <= 0 {
			if res == testSuccess {
				failures = 0
			} else if failures++; failures >= m.maxF {
				return true
			}
			continue
		}
		window = slices.DeleteFunc(append(window, testWindowed{e.at, res == testFailure}),
			func(w testWindowed) bool { return e.at >= w.at+m.window })
		n := 0
		for _, w := range window {
			if w.failed {
				n++
			}
		}
		if res == testFailure && len(window) >= m.minReq && float64(n) >= m.rate*float64(len(window)) {
			return true
		}
	}
	return false
}

// open opens the breaker on the failure o: for OpenTimeout, or for the
// longer of OpenTimeout and the Retry-After that o carries (bonus B2).
func (m *testModel) open(from State, o testOutcome) {
	m.set(Open)
	m.probePanic = ""
	if from == HalfOpen && o.panic != nil {
		m.probePanic = o.how
	}
	m.openedFrom, m.openedAt, m.openUntil = from, m.now, m.now+m.timeout
	m.openedMarked, m.openedRA = o.marked, o.ra
	if o.marked {
		m.openUntil = m.now + max(m.timeout, o.ra)
	}
}

// testGoroutine is the id of the calling goroutine, as a stack trace names it.
func testGoroutine() string {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := bytes.Fields(buf[:n])
	if len(f) < 2 {
		return "?"
	}
	return string(f[1])
}

// testHookCall is one call of OnStateChange and the goroutine it ran on.
type testHookCall struct {
	testChange
	g string
}

// testOutcomeOf is what a call of Do gave.
type testCallResult struct {
	g        string
	ran      bool
	err      error
	returned error // what fn returned
	thrown   any   // what fn panicked with
	panicked bool
	caught   any // what Do panicked with
	hooks    int // OnStateChange calls seen when Do returned
}

// testHeldCall is a call whose fn waits until the scenario ends it.
type testHeldCall struct {
	c       *katatest.Call[testCallResult]
	cancel  context.CancelFunc
	entered chan struct{}
	end     chan testOutcome
	gen     int  // in the model
	through bool // let through (fn ran)
	ended   bool
	out     testOutcome
	// deciding: fn ended and IsFailure is held in verdict until a
	// testStepVerdict
	deciding bool
	verdict  *katatest.Gate
}

// testPlayer plays a scenario against the breaker and the model.
type testPlayer struct {
	h        *katatest.H
	b        *Breaker
	m        *testModel
	hooks    katatest.Recorder[testHookCall]
	held     []*testHeldCall // all held calls, in order
	through  []*testHeldCall // those let through, in order
	ok       bool
	req      string
	quiet    bool
	panicked bool   // the last call's fn panicked and made a transition
	late     string // set once a result came in after a state change: what the failures then mean
	admitted string // why the model let the call being checked through, said before its outcome was recorded
	slowMu   sync.Mutex
	slow     []testSlowVerdict // errors whose verdict IsFailure holds
	allow    bool
	outages  []error // the failures fn returned: an allowlist IsFailure says true for these only
	// what miscounted found: a panic, a cancellation counted otherwise
	panics, cancels, deadlines bool

	// The Do the hook calls (testScenario.nest): armed during the steps
	// whose transition may start it; the call, once started (under slowMu).
	nest        *testNest
	nestArmed   atomic.Bool
	nestUsed    atomic.Bool // once only
	nestCall    *katatest.Call[testCallResult]
	nestWaiting atomic.Int32  // hooks waiting for their Do
	giveUp      chan struct{} // closed to end those waits
	gaveUp      sync.Once
}

// testSlowVerdict is an error fn returned on which IsFailure waits for
// gate (its dynamic type is comparable: the test made it).
type testSlowVerdict struct {
	err  error
	gate *katatest.Gate
}

// isFailure is the scenario's IsFailure: testIsFailure, which first waits
// for the verdict's gate when fn's error is one the scenario holds.
func (p *testPlayer) isFailure(err error) bool {
	p.slowMu.Lock()
	var gate *katatest.Gate
	for _, v := range p.slow {
		if v.err == err {
			gate = v.gate
		}
	}
	p.slowMu.Unlock()
	if gate != nil {
		_ = gate.Hold(context.Background())
	}
	if p.allow {
		p.slowMu.Lock()
		defer p.slowMu.Unlock()
		return slices.ContainsFunc(p.outages, func(o error) bool { return errors.Is(err, o) })
	}
	return testIsFailure(err)
}

func testPlay(h *katatest.H, s testScenario) {
	p := &testPlayer{h: h, m: testNewModel(s.set, s.isF), ok: true, req: s.req, quiet: s.quiet, allow: s.allow,
		nest: s.nest, giveUp: make(chan struct{})}
	p.m.nest = s.nest
	set := s.set
	if s.isF {
		set.IsFailure = p.isFailure
	}
	set.OnStateChange = func(from, to State) {
		p.hooks.Add(testHookCall{testChange{from, to}, testGoroutine()})
		if s.nest != nil && s.nest.on == (testChange{from, to}) && p.nestArmed.Load() && p.nestUsed.CompareAndSwap(false, true) {
			p.callNested(s.nest.out)
		}
	}
	p.b = New(h.Clk, set)
	defer p.cleanup()
	for i, st := range s.steps {
		if !p.ok {
			return
		}
		if s.nest != nil {
			// The move to half-open only by State; the others by a call's result.
			toHalf := s.nest.on == testChange{Open, HalfOpen}
			p.nestArmed.Store(st.kind == testStepState && toHalf || (st.kind == testStepCall || st.kind == testStepEnd) && !toHalf)
		}
		where := fmt.Sprintf("at step %d (t=%v, %v)", i+1, p.m.now, st.describe())
		switch st.kind {
		case testStepCall:
			p.call(st, where)
		case testStepState:
			p.state(where)
		case testStepAdvance:
			h.Advance(st.d)
			p.m.now += st.d
		case testStepHold:
			p.hold(st.n, where)
		case testStepEnd:
			p.endHeld(st, where)
		case testStepVerdict:
			p.verdict(st, where)
		}
		p.nestArmed.Store(false)
	}
}

// callNested is the hook calling Do: on a goroutine of its own, so that a
// breaker that holds a lock while the hook runs leaves it stuck on that
// lock, where settle sees it, rather than this goroutine; the hook waits
// for it as if it had called Do itself.
func (p *testPlayer) callNested(out testOutcome) {
	c := katatest.Go(p.h, func() (testCallResult, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if out.ctx {
			cancel()
		}
		return p.do(ctx, out, nil, nil), nil
	})
	p.slowMu.Lock()
	p.nestCall = c
	p.slowMu.Unlock()
	p.nestWaiting.Add(1)
	defer p.nestWaiting.Add(-1)
	select {
	case <-c.Done():
	case <-p.giveUp:
	}
}

// checkNested plays the hook's Do in the model if the transitions made
// since before include the one it waits for, and checks what it gave.
func (p *testPlayer) checkNested(where string, before int) {
	ran, rej := p.m.nested(before)
	if !ran || !p.ok {
		return
	}
	p.slowMu.Lock()
	c := p.nestCall
	p.slowMu.Unlock()
	if c == nil || !c.Returned() {
		p.fail("%s: the breaker moved %v, and the call that made that transition returned before OnStateChange had "+
			"run (this hook calls Do, and waits for it): the hook runs on the goroutine of the Do or State that made "+
			"the transition, before that call returns", where, p.nest.on)
		return
	}
	got, _ := c.Result()
	p.check(fmt.Sprintf("%s, in the Do that OnStateChange(%v) called", where, p.nest.on), got, p.nest.out, rej)
}

func (st testStep) describe() string {
	switch st.kind {
	case testStepCall:
		return "Do whose fn " + st.out.how
	case testStepState:
		return "State()"
	case testStepHold:
		return fmt.Sprintf("%d calls of Do at once", st.n)
	case testStepEnd:
		return fmt.Sprintf("the fn of held call %d %s", st.n, st.out.how)
	case testStepVerdict:
		return fmt.Sprintf("IsFailure decides on the error of held call %d", st.n)
	}
	return "the clock moves"
}

func (p *testPlayer) fail(format string, args ...any) {
	p.h.Helper()
	if p.ok {
		if p.late != "" {
			format = "%s What the breaker did then: " + format
			args = append([]any{p.late}, args...)
		}
		p.h.Errorf(format, args...)
	}
	p.ok = false
}

// do runs Do on the calling goroutine with an fn that waits for gate (if
// not nil) and then ends as out says (out from gate, if any).
func (p *testPlayer) do(ctx context.Context, out testOutcome, entered chan struct{}, end chan testOutcome) (res testCallResult) {
	res.g = testGoroutine()
	defer func() {
		if r := recover(); r != nil {
			res.panicked, res.caught = true, r
		}
		res.hooks = len(p.hooks.All())
	}()
	res.err = p.b.Do(ctx, func(ctx context.Context) error {
		res.ran = true
		if entered != nil {
			close(entered)
			out = <-end
		}
		if out.panic != nil {
			res.thrown = out.panic()
			panic(res.thrown)
		}
		res.returned = out.err(ctx)
		if out.kind == testFailure {
			p.slowMu.Lock()
			p.outages = append(p.outages, res.returned)
			p.slowMu.Unlock()
		}
		return res.returned
	})
	return res
}

func (p *testPlayer) call(st testStep, where string) {
	c := katatest.Go(p.h, func() (testCallResult, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if st.ctxCancel || st.out.ctx {
			cancel()
		}
		return p.do(ctx, st.out, nil, nil), nil
	})
	if p.holding() || p.nest != nil {
		// A call stuck on the mutex behind a running fn (or a hook) would
		// hang Result.
		if !p.settle(where) {
			return
		}
		if !c.Returned() {
			p.fail("%s: Do did not return, although fn returns at once: Do never waits for anything", where)
			return
		}
	}
	got, _ := c.Result()
	before := len(p.m.changes)
	gen, rej := p.m.admit()
	p.admitted = p.admitRule() // what let the call through, before its outcome moves the model
	mid := len(p.m.changes)
	if rej == nil {
		p.m.record(gen, st.out)
	}
	p.check(where, got, st.out, rej)
	p.admitted = ""
	p.checkNested(where, mid)
	p.panicked = got.panicked && len(p.m.changes) > before
	p.checkHooks(where, before, got.hooks, got.g)
}

// check compares what a call of Do gave with what the model says.
func (p *testPlayer) check(where string, got testCallResult, out testOutcome, rej error) {
	p.h.Helper()
	switch {
	case rej != ErrOpen && !got.ran && !got.panicked && errors.Is(got.err, ErrOpen) && p.lateEnd(where):
	case rej == ErrOpen && got.ran && p.miscounted(Closed) != "":
		p.fail("%s: %s: Do let the next call through (fn ran); want an error matching ErrOpen — %s",
			where, p.miscounted(Closed), p.countRule())
	case rej == nil && !got.ran && errors.Is(got.err, ErrOpen) && p.miscounted(Open) != "":
		p.fail("%s: %s: Do returned %v without running fn; want it let through — %s",
			where, p.miscounted(Open), testDescribeErr(got.err), p.countRule())
	case rej != nil && got.ran:
		p.fail("%s: Do let the call through (fn ran), but the breaker was %s: %s", where, p.why(rej), p.rejectRule(rej))
	case rej != nil && (got.panicked || !errors.Is(got.err, rej)):
		p.fail("%s: Do returned %v; want an error matching %s, at once, without running fn: %s",
			where, testDescribeErr(got.err), testName(rej), p.rejectRule(rej))
	case rej != nil:
	case !got.ran:
		why := p.admitted
		if why == "" {
			why = p.admitRule()
		}
		p.fail("%s: Do did not run fn and returned %v, but %s, so it lets the call through",
			where, testDescribeErr(got.err), why)
	case out.panic != nil && !got.panicked:
		p.fail("%s: fn panicked with %v (%T), but Do returned %v: Do panics on with the same value", where, got.thrown, got.thrown, testDescribeErr(got.err))
	case out.panic != nil && got.caught != got.thrown && p.req == "R1": // R1 checks the value; the others what it counts as
		p.fail("%s: fn panicked with %v (%T), but Do panicked with %v (%T): Do panics on with the same value, not another one",
			where, got.thrown, got.thrown, got.caught, got.caught)
	case out.panic == nil && got.panicked:
		p.fail("%s: fn returned, but Do panicked with %v", where, got.caught)
	case out.panic == nil && got.err != got.returned:
		p.fail("%s: fn returned %s but Do returned %s: when fn runs, Do returns its error as it is (the very value, "+
			"err == what fn returned, not wrapped or rebuilt)", where, testDescribeErr(got.returned), testDescribeErr(got.err))
	}
}

// testMiscounts are the ways a breaker counts a panic or a cancellation
// otherwise than the README says.
var testMiscounts = []struct {
	of   int // testOfPanic, testOfCancel or testOfDeadline: the kind of result counted wrong
	as   func(testLogged) int
	what string // what it counts as
}{
	{testOfPanic, func(e testLogged) int { return testIf(e.panic, testSuccess, e.res) }, "a success"},
	{testOfPanic, func(e testLogged) int { return testIf(e.panic, testCancelled, e.res) }, "nothing"},
	{testOfCancel, func(e testLogged) int { return testIf(!e.panic && e.res == testCancelled, testFailure, e.res) }, "a failure"},
	{testOfCancel, func(e testLogged) int { return testIf(!e.panic && e.res == testCancelled, testSuccess, e.res) }, "a success"},
	{testOfDeadline, func(e testLogged) int { return testIf(e.deadline, testCancelled, e.res) }, "nothing, as if it were a cancellation"},
	{testOfDeadline, func(e testLogged) int { return testIf(e.deadline, testSuccess, e.res) }, "a success"},
}

// The kinds of result testMiscounts counts wrong.
const (
	testOfPanic = iota
	testOfCancel
	testOfDeadline
)

func testIf(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

// miscounted says, when the breaker stands at got while the model is
// elsewhere, that it counted a panic or a cancellation otherwise than the
// README says, if that explains got: replayed that way, the results of the
// closed state (or the probe that reopened it) put it where it is. ""
// otherwise. It sets p.panics and p.cancels for countRule.
func (p *testPlayer) miscounted(got State) string {
	m := p.m
	p.panics, p.cancels, p.deadlines = false, false, false
	if m.state == Open && m.openedFrom == HalfOpen && m.probePanic != "" && m.now == m.openedAt && got != Open {
		p.panics = true
		return fmt.Sprintf("fn %s, and the breaker did not count that panic as a failure", m.probePanic)
	}
	var log []testLogged
	switch {
	case m.state == Closed && got == Open:
		log = m.log
	case m.state == Open && m.openedFrom == Closed && got == Closed:
		log = m.lastLog
	case m.state == HalfOpen && m.openedFrom == Closed && m.probes == 0 && got == Closed:
		log = m.lastLog // it opened, and its open period is over
	default:
		return ""
	}
	// Each kind of result that, counted some wrong way, explains got: the
	// first such result in the log, and every way that explains it.
	var says []string
	for _, kind := range []int{testOfPanic, testOfCancel, testOfDeadline} {
		var how string
		var as []string
		for _, mc := range testMiscounts {
			if mc.of != kind || m.trips(log, mc.as) != (got == Open) {
				continue
			}
			for _, e := range log {
				if mc.as(e) != e.res {
					how = e.how
					as = append(as, mc.what)
					break
				}
			}
		}
		switch {
		case how == "":
		case kind == testOfDeadline:
			p.deadlines = true
			says = append(says, fmt.Sprintf("a call whose fn %s counted as %s", how, strings.Join(as, " or ")))
		case kind == testOfPanic:
			p.panics = true
			says = append(says, fmt.Sprintf("fn %s, and the breaker did not count that panic as a failure (it counted it as %s)",
				how, strings.Join(as, " or ")))
		default:
			p.cancels = true
			says = append(says, fmt.Sprintf("a call whose fn %s (its caller gave up) counted as %s", how, strings.Join(as, " or ")))
		}
	}
	return strings.Join(says, ", or ")
}

// countRule says what a panic or a cancellation counts as, for the
// message of miscounted.
func (p *testPlayer) countRule() string {
	var rules []string
	if p.panics {
		rules = append(rules, "a panic in fn is a failure, whatever its value, even an error that IsFailure would call an "+
			"answer or one that matches context.Canceled (IsFailure is asked only about the errors fn returns, and a panic "+
			"is not one). Record a failure in a defer when fn panics, without judging the panic's value, then let the "+
			"panic go on up.")
	}
	if p.deadlines {
		rules = append(rules, "an error fn returns that matches context.DeadlineExceeded is a failure like any other: "+
			"the dependency did not answer in time. Only context.Canceled (the caller gave up) counts as nothing.")
	}
	if p.cancels {
		rules = append(rules, "an error matching context.Canceled counts as nothing: not a failure, not a success, no "+
			"outcome of the window, even when IsFailure is set. Check errors.Is(err, context.Canceled) first, and ask "+
			"IsFailure only about the other errors.")
	}
	return strings.Join(rules, " And ") + " Here: " + p.stateRule()
}

func testDescribeErr(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T)", err.Error(), err)
}

// why says why the model rejects a call, in the README's terms.
func (p *testPlayer) why(rej error) string {
	m := p.m
	if rej == ErrTooManyRequests {
		return fmt.Sprintf("half-open with %d probe(s) already running and HalfOpenMaxRequests %d", m.probes, m.maxHalf)
	}
	return fmt.Sprintf("open since t=%v until t=%v", m.openedAt, m.openUntil)
}

func (p *testPlayer) rejectRule(rej error) string {
	if rej == ErrOpen && p.req == "B2" {
		return p.periodRule()
	}
	if rej == ErrTooManyRequests {
		return "a half-open breaker runs at most HalfOpenMaxRequests probes at once and rejects the others with ErrTooManyRequests"
	}
	if p.m.openedFrom == HalfOpen {
		return "a failed probe reopens the breaker for a fresh OpenTimeout from that failure"
	}
	return fmt.Sprintf("%s; while open, Do returns ErrOpen without calling fn",
		p.tripRule())
}

func (p *testPlayer) tripRule() string {
	if m := p.m; m.rate > 0 {
		return fmt.Sprintf("with FailureRate %v, a failure opened it at t=%v: the window then held %d outcome(s), %d failed, "+
			"and %s; it stays open for OpenTimeout %v", m.rate, m.openedAt, m.openedN, m.openedF, p.rateRule(), m.timeout)
	}
	return fmt.Sprintf("it trips on exactly the %d-th failure in a row (MaxFailures below 1 means 5) and stays open for OpenTimeout %v (0 or below means 60s)",
		p.m.maxF, p.m.timeout)
}

func (p *testPlayer) admitRule() string {
	m := p.m
	switch m.state {
	case Closed:
		if m.rate > 0 {
			return "the breaker is closed: " + p.windowNow()
		}
		why := fmt.Sprintf("the breaker is closed (%d failure(s) in a row so far, MaxFailures %d; a success or an error IsFailure rejects resets the count, a cancellation counts for nothing)",
			m.failures, m.maxF)
		if n := len(m.changes); n > 0 && m.changes[n-1].to == Closed {
			why += "; it closed again after its probes succeeded, and the count starts afresh when the state changes: failures from before do not count"
		}
		return why
	case HalfOpen:
		if m.changes[len(m.changes)-1].to == HalfOpen && m.now >= m.openUntil && p.req == "B2" {
			return p.periodRule() + "; so from then a half-open breaker lets probes through"
		}
		if m.changes[len(m.changes)-1].to == HalfOpen && m.now >= m.openUntil {
			return fmt.Sprintf("the open period ended at t=%v (OpenTimeout %v after the failure at t=%v) and a half-open breaker runs up to HalfOpenMaxRequests (%d) probes",
				m.openUntil, m.timeout, m.openedAt, m.maxHalf)
		}
		return "the breaker is half-open with a probe's place free"
	}
	return "the breaker lets it through"
}

// checkHooks checks OnStateChange: once per transition, in order, on the
// goroutine of the call that made it, before that call returns.
func (p *testPlayer) checkHooks(where string, before, seenAtReturn int, g string) {
	p.h.Helper()
	if !p.ok || p.req != "R6" || p.holding() {
		return
	}
	got := p.hooks.All()
	want := p.m.changes
	var gotCh []testChange
	for _, c := range got {
		gotCh = append(gotCh, c.testChange)
	}
	if !slices.Equal(gotCh, want) && p.panicked {
		st, ok := p.stateNow()
		if miss := p.miscounted(st); ok && miss != "" {
			p.fail("%s: %s: State() is %v; want %v, and OnStateChange saw %v; want %v — %s", where, miss, st, p.m.state,
				gotCh, want, p.countRule())
			return
		}
	}
	if !slices.Equal(gotCh, want) && p.panicked && len(gotCh) < len(want) {
		if st, ok := p.stateNow(); ok && st != p.m.state {
			p.fail("%s: fn panicked, and the breaker did not count that failure: State() is %v; want %v (%v) — a panic "+
				"in fn is a failure: record the result in a defer, which runs even when fn panics, and let the panic go on up",
				where, st, p.m.state, want[len(want)-1])
			return
		}
		p.fail("%s: fn panicked, and that failure moved the breaker %v, but OnStateChange was not called for that "+
			"transition: a transition made by a call whose fn panicked is reported like any other, on the call's "+
			"goroutine before the panic goes on up (call the hook from the deferred code that records the failure). "+
			"So far OnStateChange saw %v; want %v", where, want[len(want)-1], gotCh, want)
		return
	}
	if !slices.Equal(gotCh, want) {
		p.fail("%s: so far OnStateChange saw %v; want %v (the breaker's transitions): OnStateChange fires once per transition, "+
			"and a call that made one has called it before it returns", where, gotCh, want)
		return
	}
	if seenAtReturn < len(want) {
		p.fail("%s: the call that moved the breaker %v returned before OnStateChange was called: the hook runs on the "+
			"goroutine of the call that made the transition, before that call returns", where, want[len(want)-1])
		return
	}
	for i, c := range got[before:] {
		want := g
		if i += before; p.m.nestDone && i >= p.m.nestFrom && i < p.m.nestTo {
			p.slowMu.Lock()
			res, _ := p.nestCall.Result()
			p.slowMu.Unlock()
			want = res.g // made by the Do that the hook called
		}
		if want != "" && c.g != want {
			p.fail("%s: OnStateChange(%v) ran on goroutine %s, not on the goroutine %s of the call that made the transition: "+
				"the hook runs on that call's goroutine, before it returns", where, c.testChange, c.g, want)
			return
		}
	}
}

// lateEnd is for a breaker that acted as open (ErrOpen, or State() open)
// at the very instant its open period ended, where the README has it
// half-open: if one nanosecond later State() is half-open, the breaker ends
// its open periods a moment late. That is R3's mistake, and a precondition
// of the other items: it is named as such, rather than in the terms of the
// item under test, which would blame something else. True if reported. R3
// says it in its own words.
func (p *testPlayer) lateEnd(where string) bool {
	m := p.m
	if p.req == "R3" || !m.edged || m.endedAt != m.now {
		return false
	}
	p.h.Advance(1)
	if st, ok := p.stateNow(); !ok || st != HalfOpen {
		return false
	}
	or := ""
	if p.req == "B2" && m.sawMarked { // a Retry-After that set this period by mistake looks the same
		or = "; or, if a Retry-After that some other failure carried set this period: " + p.periodRule()
	}
	p.fail("precondition (R3): %s: the breaker was still open at t=%v, the very instant its open period ended (opened at "+
		"t=%v for %v), and half-open only 1ns later: it is half-open from exactly the end of the open period "+
		"(compare clk.Now() with !Before(end), not After)%s", where, m.now, m.openedAt, m.openUntil-m.openedAt, or)
	return true
}

// stateNow asks State, for a message only: ok is false if it did not
// return (the scenario has failed already).
func (p *testPlayer) stateNow() (State, bool) {
	c := katatest.Go(p.h, func() (State, error) { return p.b.State(), nil })
	if p.h.Settle() != nil || !c.Returned() {
		return 0, false
	}
	st, _ := c.Result()
	return st, true
}

func (p *testPlayer) state(where string) {
	p.panicked = false
	before := len(p.m.changes)
	c := katatest.Go(p.h, func() (testCallResult, error) {
		got := p.b.State()
		return testCallResult{g: testGoroutine(), err: nil, caught: got, hooks: len(p.hooks.All())}, nil
	})
	if (p.holding() || p.nest != nil) && !p.settle(where) {
		return
	}
	res, _ := c.Result()
	p.m.expire()
	want := p.m.state
	// The Do the hook calls, if any, ran before State returned: State may
	// report the state it made or the one that Do left.
	p.checkNested(where, before)
	if !p.ok {
		return
	}
	if got := res.caught.(State); got != want && got != p.m.state {
		if got == Open && p.lateEnd(where) {
			return
		}
		if miss := p.miscounted(got); miss != "" {
			p.fail("%s: %s: State() was %v; want %v — %s", where, miss, got, want, p.countRule())
			return
		}
		p.fail("%s: State() was %v; want %v — %s", where, got, want, p.stateRule())
		return
	}
	p.checkHooks(where, before, res.hooks, res.g)
}

func (p *testPlayer) stateRule() string {
	m := p.m
	switch {
	case p.req == "B2" && (m.state == Open || m.state == HalfOpen && m.successes == 0):
		return p.periodRule()
	case m.rate > 0 && m.state == Open && m.openedFrom == Closed:
		return p.tripRule() + fmt.Sprintf(", until t=%v", m.openUntil)
	case m.rate > 0 && m.state == Closed:
		return "it is closed: " + p.windowNow()
	case m.state == HalfOpen && m.openedFrom == HalfOpen:
		return fmt.Sprintf("a failed probe at t=%v reopened it for a fresh OpenTimeout %v: from t=%v the next Do or State finds it half-open",
			m.openedAt, m.timeout, m.openUntil) + m.probesSince()
	case m.state == HalfOpen:
		return fmt.Sprintf("it opened at t=%v, so from t=%v (exactly OpenTimeout %v later) the next Do or State finds it half-open",
			m.openedAt, m.openUntil, m.timeout) + m.probesSince()
	case m.state == Open && m.openedFrom == HalfOpen:
		return fmt.Sprintf("a failed probe at t=%v reopened it for a fresh OpenTimeout %v, until t=%v", m.openedAt, m.timeout, m.openUntil)
	case m.state == Open:
		return p.tripRule() + fmt.Sprintf("; it opened at t=%v, so it is open until t=%v", m.openedAt, m.openUntil)
	case len(m.changes) > 0 && m.changes[len(m.changes)-1].from == HalfOpen && m.isF:
		return fmt.Sprintf("HalfOpenMaxRequests (%d) successful probes close it, with fresh counts; a probe whose error "+
			"IsFailure rejects (an answer, such as a 404) is a successful probe, not a failed one", m.maxHalf)
	case len(m.changes) > 0 && m.changes[len(m.changes)-1].from == HalfOpen:
		return fmt.Sprintf("HalfOpenMaxRequests (%d) successful probes close it, with fresh counts", m.maxHalf)
	}
	return fmt.Sprintf("it is closed with %d failure(s) in a row (MaxFailures %d): a success or an error IsFailure rejects resets the count, a cancellation counts for nothing",
		m.failures, m.maxF)
}

// rateRule says, for B1, when a failure opens a closed breaker.
func (p *testPlayer) rateRule() string {
	m := p.m
	return fmt.Sprintf("a failure opens it when the outcomes recorded in the last Window (%v; 0 or below means 60s) number at least "+
		"MinRequests (%d; below 1 means 1) and failures >= FailureRate·outcomes; MaxFailures is not used. An outcome "+
		"recorded at t counts while now < t+Window; a success and an error IsFailure rejects are outcomes, a panic is a "+
		"failure, a cancellation is no outcome at all; the window starts empty each time the breaker closes",
		m.window, m.minReq)
}

// windowNow says, for B1, what the window of a closed breaker holds now.
func (p *testPlayer) windowNow() string {
	m := p.m
	n, f := 0, 0
	for _, w := range m.outcomes {
		if m.now < w.at+m.window {
			n++
			if w.failed {
				f++
			}
		}
	}
	return fmt.Sprintf("with FailureRate %v its window holds %d outcome(s), %d failed, at t=%v; %s", m.rate, n, f, m.now, p.rateRule())
}

// probesSince says what the probes of this half-open period did, if any
// ended: none of them failed, or the breaker would be open again.
func (m *testModel) probesSince() string {
	if m.successes == 0 {
		return ""
	}
	return fmt.Sprintf("; since then %d probe(s) ended as successes (an error that IsFailure rejects counts as a success, "+
		"not a failure), fewer than the HalfOpenMaxRequests (%d) that close it, and no probe failed", m.successes, m.maxHalf)
}

// settle lets the code settle; with fns held, a call stuck on the
// breaker's mutex would hang synctest.Wait, so it uses Settle and stops the
// scenario if calls are stuck (the older tests say why).
func (p *testPlayer) settle(where string) bool {
	if stuck := p.h.Settle(); stuck != nil {
		if p.nestWaiting.Load() > 0 {
			p.fail("%s: OnStateChange(%v) called Do (a hook may call State or Do), and that Do got stuck on a mutex "+
				"while the hook waited for it: your breaker holds a lock while OnStateChange runs (its own, or one "+
				"that makes the calls of the hook wait for each other), so a hook that calls Do waits for ever: that "+
				"Do needs the breaker's lock, and calls the hook again when it makes a transition of its own. Call "+
				"the hook with no lock held. Stuck:\n\t%s", where, p.nest.on, strings.Join(stuck, "\n\t"))
			p.release()
			return false
		}
		if p.quiet || p.req != "R3" && p.req != "R5" { // the scenario stops here; R3 and R5 say why
			p.ok = false
			return false
		}
		p.fail("%s", testStuckOnMutex(where, p.running(), stuck))
		return false
	}
	return true
}

// release ends the waits of the hooks for their Do, and lets the
// goroutines stuck on a mutex go.
func (p *testPlayer) release() {
	p.gaveUp.Do(func() { close(p.giveUp) })
	for i := 0; i < 100 && p.h.Settle() != nil; i++ {
	}
}

// running counts the held calls whose fn started and was not told to end.
func (p *testPlayer) running() int {
	n := 0
	for _, hc := range p.held {
		select {
		case <-hc.entered:
			if !hc.ended || hc.deciding {
				n++
			}
		default:
		}
	}
	return n
}

// holding reports whether a held call may be running its fn.
func (p *testPlayer) holding() bool {
	for _, hc := range p.held {
		if (!hc.ended || hc.deciding) && !hc.c.Returned() {
			return true
		}
	}
	return false
}

func (p *testPlayer) hold(n int, where string) {
	before := len(p.m.changes)
	batch := make([]*testHeldCall, n)
	for i := range batch {
		hc := &testHeldCall{entered: make(chan struct{}), end: make(chan testOutcome, 1)}
		ctx, cancel := context.WithCancel(context.Background())
		hc.cancel = cancel
		hc.c = katatest.Go(p.h, func() (testCallResult, error) {
			defer cancel()
			return p.do(ctx, testOutcome{}, hc.entered, hc.end), nil
		})
		batch[i] = hc
		p.held = append(p.held, hc)
	}
	if !p.settle(where) {
		return
	}
	var ran, rejected int
	var rejErr error
	for _, hc := range batch {
		select {
		case <-hc.entered:
			ran++
		default:
		}
		if hc.c.Returned() {
			rejected++
			res, _ := hc.c.Result()
			if !res.ran && rejErr == nil {
				rejErr = res.err
			}
		}
	}
	// The model: the same calls, one after the other.
	var wantRan int
	var wantRej error
	for range n {
		if gen, rej := p.m.admit(); rej == nil {
			wantRan++
			_ = gen
		} else {
			wantRej = rej
		}
	}
	if ran+rejected != n {
		p.fail("%s: %d of %d calls neither ran fn nor returned: Do never waits — it lets a call through or rejects it at once", where, n-ran-rejected, n)
		return
	}
	if ran < wantRan && errors.Is(rejErr, ErrOpen) && p.lateEnd(where) {
		return
	}
	if ran != wantRan {
		p.fail("%s: %d of %d calls made at once ran fn; want %d — %s", where, ran, n, wantRan, p.holdRule(wantRej))
		return
	}
	if wantRej != nil && !errors.Is(rejErr, wantRej) {
		p.fail("%s: the calls that did not run got %v; want an error matching %s — %s", where, testDescribeErr(rejErr), testName(wantRej), p.holdRule(wantRej))
		return
	}
	for _, hc := range batch {
		select {
		case <-hc.entered:
			hc.through, hc.gen = true, p.m.gen
			p.through = append(p.through, hc)
		default:
		}
	}
	// The hook of a transition made here may run any time before the
	// held call that made it returns: it is checked later.
	_ = before
}

func (p *testPlayer) holdRule(rej error) string {
	m := p.m
	switch {
	case m.state == HalfOpen:
		return fmt.Sprintf("a half-open breaker runs at most HalfOpenMaxRequests (%d) probes at once and rejects the others at once with ErrTooManyRequests", m.maxHalf)
	case rej == ErrOpen:
		return p.rejectRule(rej)
	}
	return "a closed breaker lets every call through; closed calls run in parallel"
}

func (p *testPlayer) endHeld(st testStep, where string) {
	hc := p.through[st.n-1]
	before := len(p.m.changes)
	hc.ended, hc.out = true, st.out
	if st.out.ctx {
		hc.cancel()
	}
	if st.slow {
		p.endSlow(hc, st, where)
		return
	}
	hc.end <- st.out
	if !p.settle(where) {
		return
	}
	if !hc.c.Returned() {
		p.fail("%s: fn ended, but Do did not return: after fn, Do only records the result and returns", where)
		return
	}
	got, _ := hc.c.Result()
	stale := hc.gen != p.m.gen
	p.m.record(hc.gen, st.out)
	p.check(where, got, st.out, nil)
	p.checkNested(where, before)
	if !p.ok {
		return
	}
	p.panicked = got.panicked && len(p.m.changes) > before
	if p.req == "R6" && stale && len(p.m.changes) == before && len(p.hooks.All()) > before {
		p.fail("%s: a call let through before the breaker's state changed ended and changed the state (OnStateChange saw %v): "+
			"a call's result counts only in the generation that let it through", where, p.hooks.All()[before:])
		return
	}
	p.checkHooks(where, before, got.hooks, got.g)
}

// endSlow ends a held call's fn with an error whose verdict IsFailure
// holds: the call stays in Do, past fn, until a testStepVerdict.
func (p *testPlayer) endSlow(hc *testHeldCall, st testStep, where string) {
	hc.deciding, hc.verdict = true, p.h.Gate()
	out := st.out
	inner := out.err
	out.err = func(ctx context.Context) error {
		err := inner(ctx)
		p.slowMu.Lock()
		p.slow = append(p.slow, testSlowVerdict{err, hc.verdict})
		p.slowMu.Unlock()
		return err
	}
	hc.end <- out
	if !p.settle(where) {
		return
	}
	if hc.verdict.Waiting() != 1 {
		p.fail("%s: fn returned an error that is neither nil nor a cancellation, and Do did not ask IsFailure about it "+
			"(or returned without waiting for its answer): IsFailure is asked about every error fn returns except "+
			"those matching context.Canceled, and its answer decides what the call counts as", where)
	}
}

// verdict lets IsFailure answer about a held call's error; the breaker then
// records the call's result, in the generation that let it through.
func (p *testPlayer) verdict(st testStep, where string) {
	hc := p.through[st.n-1]
	hc.verdict.Release()
	if !p.settle(where) {
		return
	}
	hc.deciding = false
	if !hc.c.Returned() {
		p.fail("%s: IsFailure returned, but Do did not: after fn, Do only records the result and returns", where)
		return
	}
	got, _ := hc.c.Result()
	if hc.gen != p.m.gen && p.late == "" {
		p.late = fmt.Sprintf("A result that came in after a state change counted in the new generation: held call %d, "+
			"let through while the breaker was %v, whose fn %s, but the breaker changed state while IsFailure was still "+
			"deciding what that error counts as; when IsFailure answered (%s), the breaker was %v, and that late result "+
			"must count for nothing there (no failure, no success, no probe's place freed). Check the generation that let "+
			"the call through in the same critical section that records the result, after IsFailure has answered, not "+
			"in one before it.", st.n, p.m.stateOf(hc.gen), hc.out.how, where, p.m.state)
	}
	p.m.record(hc.gen, hc.out)
	p.check(where, got, hc.out, nil)
}

// cleanup ends the held calls the scenario left running.
func (p *testPlayer) cleanup() {
	defer p.h.Advance(24 * time.Hour) // no open period outlives the scenario
	p.gaveUp.Do(func() { close(p.giveUp) })
	for _, hc := range p.held {
		if hc.verdict != nil {
			hc.verdict.Release()
		}
	}
	for range 100 {
		for _, hc := range p.held {
			select {
			case <-hc.entered:
				if !hc.ended {
					hc.ended = true
					hc.end <- testOutcome{how: "returns nil", err: func(context.Context) error { return nil }}
				}
			default:
			}
		}
		stuck := p.h.Settle()
		if stuck != nil {
			continue
		}
		done := true
		for _, hc := range p.held {
			done = done && hc.c.Returned()
		}
		if done {
			return
		}
	}
}

// --- the scenarios of each requirement ---

func testDrawMaxFailures(r *rapid.T, withDefaults bool) int {
	if withDefaults && rapid.IntRange(0, 3).Draw(r, "default MaxFailures") == 0 {
		return rapid.SampledFrom([]int{0, -1, -3}).Draw(r, "MaxFailures")
	}
	return rapid.IntRange(1, 4).Draw(r, "MaxFailures")
}

func testDrawTimeout(r *rapid.T, withDefaults bool) time.Duration {
	if withDefaults && rapid.IntRange(0, 3).Draw(r, "default OpenTimeout") == 0 {
		return rapid.SampledFrom([]time.Duration{0, -time.Second}).Draw(r, "OpenTimeout")
	}
	return rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Millisecond, 1500 * time.Millisecond,
		10 * time.Second, 90 * time.Second}).Draw(r, "OpenTimeout")
}

// testDrawAdvances draws moves of the clock that add up to total, with a
// State or a call now and then while the breaker must still be open.
func testDrawUntil(r *rapid.T, total time.Duration, label string) []testStep {
	var steps []testStep
	left := total
	for left > 0 {
		d := left
		if left > 1 && rapid.Bool().Draw(r, label+" split") {
			d = time.Duration(rapid.Int64Range(1, int64(left)-1).Draw(r, label+" part"))
		}
		steps = append(steps, testStep{kind: testStepAdvance, d: d})
		left -= d
	}
	return steps
}

// testTrip makes the closed breaker trip: maxF failures in a row.
func testTrip(r *rapid.T, maxF int, label string) []testStep {
	var steps []testStep
	for i := range maxF {
		steps = append(steps, testStep{kind: testStepCall,
			out: testDrawOutcome(r, fmt.Sprintf("%s failure %d", label, i+1), testReturned)})
	}
	return steps
}

func testEffective(maxF int, timeout time.Duration) (int, time.Duration) {
	if maxF < 1 {
		maxF = 5
	}
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	return maxF, timeout
}

// R1: calls in the closed state, one at a time, that succeed, fail in every
// way the README names, or get an answer IsFailure rejects.
func testDrawR1(r *rapid.T) testScenario {
	s := testScenario{req: "R1"}
	s.isF, s.allow = testDrawIsFailure(r, 2)
	s.set.MaxFailures = testDrawMaxFailures(r, true)
	s.set.OpenTimeout = 10 * time.Second
	n := rapid.IntRange(1, 12).Draw(r, "calls")
	for i := range n {
		st := testStep{kind: testStepCall, out: testDrawOutcome(r, fmt.Sprintf("call %d", i+1), testSuccess, testFailure, testFailure, testAnswer)}
		s.steps = append(s.steps, st)
		if rapid.IntRange(0, 3).Draw(r, "ask State") == 0 {
			s.steps = append(s.steps, testStep{kind: testStepState})
		}
	}
	return s
}

// testDrawIsFailure draws a breaker's IsFailure: none (1 in odds), or one
// that rejects the answers (a denylist), or one that accepts only the
// failures (an allowlist).
func testDrawIsFailure(r *rapid.T, odds int) (isF, allow bool) {
	isF = rapid.IntRange(0, odds-1).Draw(r, "IsFailure") > 0
	return isF, isF && rapid.Bool().Draw(r, "IsFailure an allowlist")
}

// testPanics: with an IsFailure that accepts only the failures fn returns,
// calls whose fn panics, with an error value or a string, are failures:
// in the closed state (failures in a row for R1, the rate for B1) and as
// a probe (R4, where a probe that gets an answer then closes it).
func testPanics(req string) testScenario {
	s := testScenario{req: req, isF: true, allow: true, set: Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	errPanic := testOutcome{how: "panics with errors.New(\"nil row\")", kind: testFailure, panic: func() any { return errors.New("nil row") }}
	strPanic := testOutcome{how: "panics with a string", kind: testFailure, panic: func() any { return "inventory: nil row" }}
	if req == "B1" {
		// A cancellation is no outcome: 1 outcome, then 2 failures of 2.
		// Then, closed again, a panic and a failure: 2 failures of 2.
		s.set.FailureRate, s.set.MinRequests = 1, 2
		cancelled := testOutcomesOf(nil, "", testCancelled)[1]
		s.steps = []testStep{{kind: testStepCall, out: cancelled}, {kind: testStepCall, out: fail}, {kind: testStepState},
			{kind: testStepCall, out: fail}, {kind: testStepState},
			{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: testOutcomesOf(nil, "", testSuccess)[0]},
			{kind: testStepCall, out: errPanic}, {kind: testStepCall, out: fail}, {kind: testStepState},
			{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: testOutcomesOf(nil, "", testSuccess)[0]},
			{kind: testStepCall, out: strPanic}, {kind: testStepCall, out: fail}, {kind: testStepState}}
		return s
	}
	if req == "R1" {
		s.steps = []testStep{{kind: testStepCall, out: fail}, {kind: testStepCall, out: errPanic}, {kind: testStepState},
			{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: testOutcomesOf(nil, "", testSuccess)[0]},
			{kind: testStepCall, out: strPanic}, {kind: testStepCall, out: fail}, {kind: testStepState}}
		return s
	}
	// Then a probe that gets an answer IsFailure rejects: a success.
	answer := testOutcome{how: "returns &httpError{404}", kind: testAnswer, err: func(context.Context) error { return &testHTTPError{404} }}
	s.steps = []testStep{{kind: testStepCall, out: fail}, {kind: testStepCall, out: fail}, {kind: testStepAdvance, d: 10 * time.Second},
		{kind: testStepCall, out: errPanic}, {kind: testStepState}, {kind: testStepAdvance, d: 10 * time.Second},
		{kind: testStepHold, n: 1}, {kind: testStepEnd, n: 1, out: strPanic}, {kind: testStepState},
		{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: answer}, {kind: testStepState}}
	return s
}

func TestR1_ExploreTripsOnTheNthFailureInARow(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testPanics("R1")) })
	katatest.Explore(t, 10, testDrawR1, testPlay)
}

// R3: trip, let the clock run to the exact end of the open period (with
// States on the way), then several callers at once in the half-open state.
func testDrawR3(r *rapid.T) testScenario {
	s := testScenario{req: "R3"}
	s.set.MaxFailures = testDrawMaxFailures(r, false)
	s.set.OpenTimeout = testDrawTimeout(r, true)
	s.set.HalfOpenMaxRequests = rapid.IntRange(-1, 3).Draw(r, "HalfOpenMaxRequests")
	_, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	if rapid.Bool().Draw(r, "time before the trip") {
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Duration(rapid.IntRange(1, 5000).Draw(r, "ms before")) * time.Millisecond})
	}
	s.steps = append(s.steps, testTrip(r, s.set.MaxFailures, "trip")...)
	for _, st := range testDrawUntil(r, timeout-time.Nanosecond, "open period") {
		s.steps = append(s.steps, st, testStep{kind: testStepState})
	}
	s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Nanosecond})
	if rapid.Bool().Draw(r, "State first") {
		s.steps = append(s.steps, testStep{kind: testStepState})
	}
	s.steps = append(s.steps, testStep{kind: testStepHold, n: rapid.IntRange(1, 5).Draw(r, "callers at once")})
	if rapid.Bool().Draw(r, "more callers") {
		s.steps = append(s.steps, testStep{kind: testStepHold, n: rapid.IntRange(1, 3).Draw(r, "more callers at once")})
	}
	return s
}

func TestR3_ExploreHalfOpenAtTheEndOfTheOpenPeriod(t *testing.T) {
	katatest.Explore(t, 8, testDrawR3, testPlay)
}

// R4: from half-open, probes that end in any order and in every way, with
// the clock moving between them; after a reopen, the clock runs to the
// exact end of the fresh period.
func testDrawR4(r *rapid.T) testScenario {
	s := testScenario{req: "R4"}
	s.isF, s.allow = testDrawIsFailure(r, 4)
	s.set.MaxFailures = testDrawMaxFailures(r, false)
	s.set.OpenTimeout = testDrawTimeout(r, false)
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 3).Draw(r, "HalfOpenMaxRequests")
	maxF, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	s.steps = append(s.steps, testTrip(r, maxF, "trip")...)
	s.steps = append(s.steps, testStep{kind: testStepAdvance, d: timeout})
	probes := s.set.HalfOpenMaxRequests
	s.steps = append(s.steps, testStep{kind: testStepHold, n: probes})
	order := rapid.Permutation(seq(probes)).Draw(r, "order the probes end in")
	for i, k := range order {
		if rapid.Bool().Draw(r, fmt.Sprintf("time before probe %d ends", k)) {
			s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Duration(rapid.IntRange(1, 3000).Draw(r, "ms")) * time.Millisecond})
		}
		kinds := []int{testSuccess, testAnswer, testFailure}
		out := testDrawOutcome(r, fmt.Sprintf("probe %d", k), kinds...)
		s.steps = append(s.steps, testStep{kind: testStepEnd, n: k, out: out})
		s.steps = append(s.steps, testStep{kind: testStepState})
		if out.counts(s.isF) == testFailure {
			// Reopened: the rest end in a later generation. Run the
			// fresh period to its edge.
			for _, k2 := range order[i+1:] {
				s.steps = append(s.steps, testStep{kind: testStepEnd, n: k2, out: testDrawOutcome(r, "stale probe", testSuccess)})
			}
			for _, st := range testDrawUntil(r, timeout-time.Nanosecond, "fresh period") {
				s.steps = append(s.steps, st, testStep{kind: testStepState})
			}
			s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Nanosecond}, testStep{kind: testStepState})
			return s
		}
	}
	// Closed with fresh counts: MaxFailures-1 failures keep it closed.
	for i := range maxF - 1 {
		s.steps = append(s.steps, testStep{kind: testStepCall, out: testDrawOutcome(r, fmt.Sprintf("after close %d", i), testReturned)})
	}
	s.steps = append(s.steps, testStep{kind: testStepState})
	return s
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}

func TestR4_ExploreProbesCloseOrReopen(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testPanics("R4")) })
	katatest.Explore(t, 12, testDrawR4, testPlay)
}

// R5: calls let through in one state end, in any order and in every way,
// after the breaker has moved on.
func testDrawR5(r *rapid.T) testScenario {
	s := testScenario{req: "R5"}
	s.set.MaxFailures = testDrawMaxFailures(r, false)
	s.set.OpenTimeout = testDrawTimeout(r, false)
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 2).Draw(r, "HalfOpenMaxRequests")
	maxF, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	slow := rapid.IntRange(1, 3).Draw(r, "slow closed calls")
	s.steps = append(s.steps, testStep{kind: testStepHold, n: slow})
	s.steps = append(s.steps, testTrip(r, maxF, "trip")...)
	var stale []int
	for i := range slow {
		stale = append(stale, i+1)
	}
	held := slow
	phase := rapid.IntRange(0, 2).Draw(r, "when the slow calls end") // open, half-open, half-open with probes running
	if phase >= 1 {
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: timeout}, testStep{kind: testStepState})
	}
	if phase == 2 {
		s.steps = append(s.steps, testStep{kind: testStepHold, n: s.set.HalfOpenMaxRequests})
		held += s.set.HalfOpenMaxRequests
	}
	for _, k := range rapid.Permutation(stale).Draw(r, "order the slow calls end in") {
		out := testDrawOutcome(r, fmt.Sprintf("slow call %d", k), testSuccess, testReturned)
		s.steps = append(s.steps, testStep{kind: testStepEnd, n: k, out: out}, testStep{kind: testStepState})
	}
	if phase >= 1 {
		// A new caller: the stale calls hold no probe's place.
		s.steps = append(s.steps, testStep{kind: testStepHold, n: 1})
	}
	return s
}

func TestR5_ExploreLateResultsChangeNothing(t *testing.T) {
	katatest.Explore(t, 8, testDrawR5, testPlay)
}

// R6: cancellations of every kind among failures, closed and half-open;
// failures whose text speaks of a cancellation are still failures.
func testDrawR6(r *rapid.T) testScenario {
	s := testScenario{req: "R6"}
	s.isF, s.allow = testDrawIsFailure(r, 2)
	s.set.MaxFailures = rapid.IntRange(1, 4).Draw(r, "MaxFailures")
	s.set.OpenTimeout = testDrawTimeout(r, false)
	s.set.HalfOpenMaxRequests = 1
	_, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	for i := range s.set.MaxFailures {
		for range rapid.IntRange(0, 2).Draw(r, "cancellations") {
			s.steps = append(s.steps, testStep{kind: testStepCall, out: testDrawOutcome(r, "cancelled", testCancelled),
				ctxCancel: rapid.Bool().Draw(r, "ctx cancelled")})
		}
		out := testDrawOutcome(r, fmt.Sprintf("failure %d", i+1), testReturned)
		if rapid.IntRange(0, 2).Draw(r, "text speaks of cancel") == 0 {
			out = testFailingText(r, "failure")
		}
		s.steps = append(s.steps, testStep{kind: testStepCall, out: out, ctxCancel: rapid.IntRange(0, 3).Draw(r, "failure's ctx cancelled") == 0},
			testStep{kind: testStepState})
	}
	// Half-open: a cancelled probe frees its place and changes nothing.
	s.steps = append(s.steps, testStep{kind: testStepAdvance, d: timeout}, testStep{kind: testStepHold, n: 1})
	s.steps = append(s.steps, testStep{kind: testStepEnd, n: 1, out: testDrawOutcome(r, "cancelled probe", testCancelled)},
		testStep{kind: testStepState}, testStep{kind: testStepHold, n: 1})
	return s
}

func TestR6_ExploreCancellationCountsForNothing(t *testing.T) {
	katatest.Explore(t, 8, testDrawR6, testPlay)
}

// B1: calls in the closed state that succeed, fail in every way the README
// names (panics included), get an answer IsFailure rejects or are
// cancelled, with the clock moving to the edges of the window; each time
// the rate opens the breaker, a probe closes it again and the window
// starts empty.
func testDrawB1(r *rapid.T) testScenario {
	s := testScenario{req: "B1"}
	s.isF, s.allow = testDrawIsFailure(r, 2)
	s.set.FailureRate = rapid.SampledFrom([]float64{0.25, 0.5, 0.75, 1}).Draw(r, "FailureRate")
	s.set.Window = rapid.SampledFrom([]time.Duration{0, 1500 * time.Millisecond, 10 * time.Second}).Draw(r, "Window")
	s.set.MinRequests = rapid.IntRange(-1, 5).Draw(r, "MinRequests")
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	s.set.OpenTimeout = 10 * time.Second
	m := testNewModel(s.set, s.isF)
	ok := testOutcomesOf(r, "", testSuccess)[0]
	call := func(out testOutcome) {
		s.steps = append(s.steps, testStep{kind: testStepCall, out: out})
		if gen, rej := m.admit(); rej == nil {
			m.record(gen, out)
		}
	}
	for i := range rapid.IntRange(1, 12).Draw(r, "calls") {
		if m.state == Open { // a probe closes it: the window starts empty
			s.steps = append(s.steps, testStep{kind: testStepAdvance, d: m.openUntil - m.now})
			m.now = m.openUntil
			call(ok)
		}
		if rapid.IntRange(0, 2).Draw(r, "the clock moves") == 0 {
			d := rapid.SampledFrom([]time.Duration{time.Nanosecond, m.window / 3, m.window - time.Nanosecond, m.window}).Draw(r, "by")
			s.steps = append(s.steps, testStep{kind: testStepAdvance, d: d})
			m.now += d
		}
		call(testDrawOutcome(r, fmt.Sprintf("call %d", i+1), testSuccess, testFailure, testFailure, testAnswer, testCancelled))
		if rapid.IntRange(0, 2).Draw(r, "ask State") == 0 {
			s.steps = append(s.steps, testStep{kind: testStepState})
		}
	}
	s.steps = append(s.steps, testStep{kind: testStepState})
	return s
}

func TestB1_ExploreTheRateCountsEveryKindOfOutcome(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testPanics("B1")) })
	katatest.Explore(t, 8, testDrawB1, testPlay)
}

// periodRule says, for B2, how long the breaker stays open and why.
func (p *testPlayer) periodRule() string {
	m := p.m
	timeout := fmt.Sprint(m.timeout)
	if m.defaulted {
		timeout += ": an OpenTimeout of 0 or below takes the default, check <= 0, not == 0"
	}
	carried := fmt.Sprintf("carried no Retry-After, so it stays open for OpenTimeout (%s)", timeout)
	if m.openedMarked {
		carried = fmt.Sprintf("carried RetryAfter(%v, …), so it stays open for the longer of OpenTimeout (%s) and %v",
			m.openedRA, timeout, m.openedRA)
	}
	return fmt.Sprintf("only the failure that opens the breaker sets the open period: the failure at t=%v that opened "+
		"it %s, until t=%v. A Retry-After "+
		"carried by any other error (an earlier failure of the streak, an error IsFailure rejects, a cancellation, "+
		"a call let through before the breaker opened) changes nothing", m.openedAt, carried, m.openUntil)
}

// testMark draws whether o, if fn returns an error, carries a Retry-After,
// and how: RetryAfter itself, wrapped again with %w, or inside errors.Join.
func testMark(r *rapid.T, o testOutcome, timeout time.Duration, label string, odds int) testOutcome {
	if o.panic != nil || o.kind == testSuccess || rapid.IntRange(0, odds-1).Draw(r, label+" marked") != 0 {
		return o
	}
	d := rapid.SampledFrom([]time.Duration{-time.Second, 0, timeout / 2, timeout, timeout + time.Nanosecond,
		2 * timeout, timeout + 90*time.Second}).Draw(r, label+" Retry-After")
	inner, how := o.err, strings.TrimPrefix(o.how, "returns ")
	o.marked, o.ra = true, d
	switch rapid.IntRange(0, 2).Draw(r, label+" mark") {
	case 0:
		o.how = fmt.Sprintf("returns RetryAfter(%v, %s)", d, how)
		o.err = func(ctx context.Context) error { return RetryAfter(d, inner(ctx)) }
	case 1:
		o.how = fmt.Sprintf("returns fmt.Errorf(\"stock: %%w\", RetryAfter(%v, %s))", d, how)
		o.err = func(ctx context.Context) error { return fmt.Errorf("stock: %w", RetryAfter(d, inner(ctx))) }
	default:
		o.how = fmt.Sprintf("returns errors.Join(RetryAfter(%v, %s), errors.New(\"cache miss\"))", d, how)
		o.err = func(ctx context.Context) error {
			return errors.Join(RetryAfter(d, inner(ctx)), errors.New("cache miss"))
		}
	}
	return o
}

// testPeriod is how long the failure o keeps the breaker open.
func testPeriod(o testOutcome, timeout time.Duration) time.Duration {
	if o.marked {
		return max(timeout, o.ra)
	}
	return timeout
}

// B2: errors that carry a Retry-After everywhere in a breaker's life (the
// failures of a streak, the one that trips it, answers IsFailure rejects,
// cancellations, calls that end after the trip, probes), and every open
// period run to its exact edge: only the failure that opens the breaker
// sets how long it stays open.
func testDrawB2(r *rapid.T) testScenario {
	s := testScenario{req: "B2", isF: rapid.Bool().Draw(r, "IsFailure")}
	s.set.MaxFailures = rapid.IntRange(1, 4).Draw(r, "MaxFailures")
	s.set.OpenTimeout = testDrawTimeout(r, false)
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 2).Draw(r, "HalfOpenMaxRequests")
	maxF, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	slow := rapid.IntRange(0, 2).Draw(r, "slow closed calls")
	if slow > 0 {
		s.steps = append(s.steps, testStep{kind: testStepHold, n: slow})
	}
	// The streak: failures in a row stay below MaxFailures until the trip.
	inRow := 0
	for i := range rapid.IntRange(0, 5).Draw(r, "calls before the trip") {
		label := fmt.Sprintf("call %d", i+1)
		o := testDrawOutcome(r, label, testSuccess, testFailure, testFailure, testAnswer, testCancelled)
		switch o.counts(s.isF) {
		case testFailure:
			if inRow+1 >= maxF {
				o = testOutcomesOf(r, label, testSuccess)[0]
				inRow = 0
			} else {
				inRow++
			}
		case testSuccess:
			inRow = 0
		}
		s.steps = append(s.steps, testStep{kind: testStepCall, out: testMark(r, o, timeout, label, 2)})
	}
	var trip testOutcome
	for i := range maxF - inRow {
		label := fmt.Sprintf("trip failure %d", i+1)
		trip = testMark(r, testDrawOutcome(r, label, testReturned), timeout, label, 2)
		s.steps = append(s.steps, testStep{kind: testStepCall, out: trip})
	}
	s.steps = append(s.steps, testStep{kind: testStepState})
	for _, k := range rapid.Permutation(seq(slow)).Draw(r, "order the slow calls end in") {
		label := fmt.Sprintf("slow call %d", k)
		o := testMark(r, testDrawOutcome(r, label, testSuccess, testReturned), timeout, label, 1)
		s.steps = append(s.steps, testStep{kind: testStepEnd, n: k, out: o}, testStep{kind: testStepState})
	}
	edge := func(period time.Duration, label string) {
		for _, st := range testDrawUntil(r, period-time.Nanosecond, label) {
			s.steps = append(s.steps, st, testStep{kind: testStepState})
		}
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Nanosecond}, testStep{kind: testStepState})
	}
	edge(testPeriod(trip, timeout), "open period")
	// Probes, ending in any order and in every way.
	probes := s.set.HalfOpenMaxRequests
	s.steps = append(s.steps, testStep{kind: testStepHold, n: probes})
	order := rapid.Permutation(seq(probes)).Draw(r, "order the probes end in")
	for i, k := range order {
		label := fmt.Sprintf("probe %d", k)
		o := testMark(r, testDrawOutcome(r, label, testSuccess, testAnswer, testReturned, testCancelled), timeout, label, 2)
		s.steps = append(s.steps, testStep{kind: testStepEnd, n: slow + k, out: o}, testStep{kind: testStepState})
		if o.counts(s.isF) == testFailure {
			for _, k2 := range order[i+1:] {
				label := fmt.Sprintf("stale probe %d", k2)
				stale := testMark(r, testDrawOutcome(r, label, testReturned), timeout, label, 1)
				s.steps = append(s.steps, testStep{kind: testStepEnd, n: slow + k2, out: stale}, testStep{kind: testStepState})
			}
			edge(testPeriod(o, timeout), "fresh period")
			break
		}
	}
	return s
}

// testStreakScenario: the first failure of a streak carries a Retry-After
// longer than OpenTimeout, the one that trips the breaker carries none.
func testStreakScenario() testScenario {
	s := testScenario{req: "B2", set: Settings{MaxFailures: 3, OpenTimeout: 10 * time.Second}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	first := fail
	first.how, first.marked, first.ra = "returns RetryAfter(1m0s, errors.New(\"503 service unavailable\"))", true, time.Minute
	first.err = func(context.Context) error { return RetryAfter(time.Minute, errors.New("503 service unavailable")) }
	s.steps = []testStep{{kind: testStepCall, out: first}, {kind: testStepCall, out: fail}, {kind: testStepCall, out: fail},
		{kind: testStepState}, {kind: testStepAdvance, d: 10*time.Second - 1}, {kind: testStepState},
		{kind: testStepAdvance, d: 1}, {kind: testStepState}}
	return s
}

func TestB2_ExploreOnlyTheFailureThatOpensSetsThePeriod(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testStreakScenario()) })
	katatest.Explore(t, 8, testDrawB2, testPlay)
}
