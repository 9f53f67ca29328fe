package breaker

// Explored: calls whose caller's ctx ends while their fn still runs. Do
// does not look at ctx, so nothing about the call changes until fn returns:
// a probe keeps its half-open place until then, however its ctx ended
// (cancelled, with a cause or not, or its deadline passed, before Do or
// while fn runs), and at most HalfOpenMaxRequests probes' fns ever run at
// once (R3); a closed call counts as what its fn returned, whatever its
// ctx did meanwhile (R6). Each fn here ignores its ctx, as a slow
// dependency's client may, and returns only when the scenario ends it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How a caller's ctx is when it calls Do.
const (
	testPlLive            = iota // not done
	testPlCancelledBefore        // cancelled before Do, without a cause
	testPlCausedBefore           // cancelled before Do, with a cause
	testPlExpiredBefore          // its deadline passed before Do
	testPlDeadline               // a deadline on the mock clock, d after Do
)

// Step kinds.
const (
	testPlArrive  = iota // n callers call Do at once
	testPlCancel         // a call's ctx is cancelled while its fn runs
	testPlAdvance        // the clock moves
	testPlEnd            // a call's fn returns
)

// What a fn returns.
const (
	testPlOK        = iota // nil
	testPlDown             // a fresh error wrapping testErrDown
	testPlOwnCancel        // an error wrapping context.Canceled of its own
	testPlCtxErr           // its ctx's error, wrapped
)

type testPlStep struct {
	kind  int
	n     int           // arrive: callers at once; cancel, end: which call (1-based, among those let through)
	ctx   int           // arrive: how the callers' ctx is
	d     time.Duration // arrive with testPlDeadline: the deadline; advance: how far
	cause bool          // cancel: with a cause
	out   int           // end: what fn returns
}

type testPlScenario struct {
	req     string // R3: half-open probes; R6: closed calls
	set     Settings
	steps   []testPlStep
	expects string // for the fixed scenarios: what they show
}

func (st testPlStep) String() string {
	switch st.kind {
	case testPlArrive:
		how := [...]string{"a live ctx", "a ctx already cancelled (no cause)", "a ctx already cancelled with a cause",
			"a ctx whose deadline has already passed", fmt.Sprintf("a ctx whose deadline is %v away", st.d)}[st.ctx]
		if st.n == 1 {
			return "1 caller calls Do with " + how
		}
		return fmt.Sprintf("%d callers call Do at once, each with %s", st.n, how)
	case testPlCancel:
		if st.cause {
			return fmt.Sprintf("the caller of call %d cancels its ctx with a cause, while fn runs", st.n)
		}
		return fmt.Sprintf("the caller of call %d cancels its ctx (no cause), while fn runs", st.n)
	case testPlAdvance:
		return fmt.Sprintf("the clock moves %v", st.d)
	}
	out := [...]string{"returns nil", "returns fmt.Errorf(\"stock: %w\", 503)",
		"returns fmt.Errorf(\"stock: %w\", context.Canceled) (its own cancellation)", "returns fmt.Errorf(\"rpc: %w\", ctx.Err())"}[st.out]
	return fmt.Sprintf("the fn of call %d %s", st.n, out)
}

func (s testPlScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, Settings{MaxFailures: %d, OpenTimeout: %v, HalfOpenMaxRequests: %d}); ",
		s.set.MaxFailures, s.set.OpenTimeout, s.set.HalfOpenMaxRequests)
	if s.req == "R3" {
		b.WriteString("it trips, and the open period ends; every fn ignores its ctx and returns only when told")
	} else {
		b.WriteString("closed; every fn ignores its ctx and returns only when told")
	}
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n\t%d. %v", i+1, st)
	}
	if s.expects != "" {
		b.WriteString("\n\t(" + s.expects + ")")
	}
	return b.String()
}

// testPlCall is a call let through, in the model.
type testPlCall struct {
	deadline time.Duration // 0: none
	done     error         // its ctx's error once done: context.Canceled or context.DeadlineExceeded
	ended    bool
	out      int
}

// testPlModel is the README's breaker for these scenarios: half-open for
// R3 (the draws never close nor reopen it), closed for R6 until it trips.
type testPlModel struct {
	half      bool
	maxHalf   int
	maxF      int
	now       time.Duration
	calls     []testPlCall
	failures  int // closed: in a row
	successes int // half-open
	open      bool
	streak    []string // closed: what counted since the count was last reset, for the messages
}

func testNewPlModel(s testPlScenario) *testPlModel {
	m := &testPlModel{half: s.req == "R3", maxHalf: max(s.set.HalfOpenMaxRequests, 1), maxF: s.set.MaxFailures}
	if m.maxF < 1 {
		m.maxF = 5
	}
	return m
}

// running lists the calls whose fn runs (0-based).
func (m *testPlModel) running() []int {
	var out []int
	for i, c := range m.calls {
		if !c.ended {
			out = append(out, i)
		}
	}
	return out
}

// admits says how many of n callers at once are let through.
func (m *testPlModel) admits(n int) int {
	if !m.half {
		return n
	}
	return min(n, m.maxHalf-len(m.running()))
}

func (m *testPlModel) arrive(st testPlStep, let int) {
	for range let {
		c := testPlCall{}
		switch st.ctx {
		case testPlCancelledBefore, testPlCausedBefore:
			c.done = context.Canceled
		case testPlExpiredBefore:
			c.done = context.DeadlineExceeded
		case testPlDeadline:
			c.deadline = m.now + st.d
		}
		m.calls = append(m.calls, c)
	}
}

func (m *testPlModel) advance(d time.Duration) {
	m.now += d
	for i := range m.calls {
		c := &m.calls[i]
		if c.done == nil && c.deadline > 0 && m.now >= c.deadline {
			c.done = context.DeadlineExceeded
		}
	}
}

// counts says what fn's result out counts as for call c: testSuccess,
// testFailure or testCancelled.
func (c testPlCall) counts(out int) int {
	switch out {
	case testPlOK:
		return testSuccess
	case testPlDown:
		return testFailure
	case testPlCtxErr:
		if errors.Is(c.done, context.DeadlineExceeded) {
			return testFailure
		}
	}
	return testCancelled
}

func (m *testPlModel) end(i, out int) {
	c := &m.calls[i]
	c.ended, c.out = true, out
	res := c.counts(out)
	if m.half {
		if res == testSuccess {
			m.successes++
		}
		return
	}
	ctx := "its ctx live"
	if c.done != nil {
		ctx = "its ctx done (" + c.done.Error() + ")"
	}
	switch res {
	case testSuccess:
		m.failures, m.streak = 0, []string{fmt.Sprintf("call %d: a success, with %s", i+1, ctx)}
	case testFailure:
		m.failures++
		m.streak = append(m.streak, fmt.Sprintf("call %d: a failure, with %s", i+1, ctx))
		m.open = m.failures >= m.maxF
	default:
		m.streak = append(m.streak, fmt.Sprintf("call %d: nothing (a cancellation), with %s", i+1, ctx))
	}
}

func testDrawPlaces(req string) func(*rapid.T) testPlScenario {
	return func(r *rapid.T) testPlScenario {
		s := testPlScenario{req: req}
		if req == "R3" {
			s.set.HalfOpenMaxRequests = rapid.IntRange(-1, 3).Draw(r, "HalfOpenMaxRequests")
			s.set.MaxFailures = rapid.SampledFrom([]int{0, 1, 2}).Draw(r, "MaxFailures")
			s.set.OpenTimeout = rapid.SampledFrom([]time.Duration{0, 10 * time.Second}).Draw(r, "OpenTimeout")
		} else {
			s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures") // the defaults are R1's
			s.set.OpenTimeout = 10 * time.Second
			s.set.HalfOpenMaxRequests = 1
		}
		m := testNewPlModel(s)
		for range rapid.IntRange(2, 7).Draw(r, "steps") {
			if m.open {
				break
			}
			running := m.running()
			var live []int // running calls whose ctx is not done
			for _, i := range running {
				if m.calls[i].done == nil {
					live = append(live, i)
				}
			}
			kinds := []int{testPlArrive, testPlArrive, testPlAdvance}
			if len(live) > 0 {
				kinds = append(kinds, testPlCancel, testPlCancel)
			}
			if len(running) > 0 {
				kinds = append(kinds, testPlEnd, testPlEnd)
			}
			st := testPlStep{kind: rapid.SampledFrom(kinds).Draw(r, "step")}
			switch st.kind {
			case testPlArrive:
				hi := 3
				if m.half {
					hi = m.maxHalf + 1
				}
				st.n = rapid.IntRange(1, hi).Draw(r, "callers at once")
				st.ctx = rapid.IntRange(testPlLive, testPlDeadline).Draw(r, "their ctx")
				if st.ctx == testPlDeadline {
					st.d = rapid.SampledFrom([]time.Duration{20 * time.Millisecond, 50 * time.Millisecond}).Draw(r, "deadline")
				}
				m.arrive(st, m.admits(st.n))
			case testPlCancel:
				i := rapid.SampledFrom(live).Draw(r, "cancelled call")
				st.n, st.cause = i+1, rapid.Bool().Draw(r, "with a cause")
				m.calls[i].done = context.Canceled
			case testPlAdvance:
				st.d = rapid.SampledFrom([]time.Duration{20 * time.Millisecond, 30 * time.Millisecond}).Draw(r, "by")
				m.advance(st.d)
			case testPlEnd:
				i := rapid.SampledFrom(running).Draw(r, "ended call")
				c := m.calls[i]
				outs := []int{testPlOwnCancel}
				if !m.half || m.successes+1 < m.maxHalf { // R3: no probe closes the breaker
					outs = append(outs, testPlOK)
				}
				if !m.half {
					outs = append(outs, testPlDown, testPlDown)
				}
				if c.done != nil && (!m.half || c.counts(testPlCtxErr) == testCancelled) { // R3: no probe reopens it
					outs = append(outs, testPlCtxErr, testPlCtxErr)
				}
				st.n, st.out = i+1, rapid.SampledFrom(outs).Draw(r, "fn returns")
				m.end(i, st.out)
			}
			s.steps = append(s.steps, st)
		}
		return s
	}
}

// testPlHeld is a call of Do in these scenarios.
type testPlHeld struct {
	c      katatest.ErrCall
	gate   *katatest.Gate
	plain  chan context.CancelFunc // the cancel without a cause, sent once the call starts
	cancel context.CancelFunc
	out    int // what fn returns once the gate opens
}

func (p *testPlHeld) running() bool { return p.gate.Waiting() == 1 }

// testPlPlayer plays a scenario against the breaker and the model.
type testPlPlayer struct {
	h       *katatest.H
	s       testPlScenario
	b       *Breaker
	m       *testPlModel
	peak    katatest.Peak
	calls   []*testPlHeld // every call started
	through []*testPlHeld // those let through, in the model's order
}

func testPlayPlaces(h *katatest.H, s testPlScenario) {
	p := &testPlPlayer{h: h, s: s, m: testNewPlModel(s)}
	r := testNew(h, s.set) // with a hook: a breaker without one is R6's
	p.b = r.b
	defer p.release()
	if s.req == "R3" {
		timeout := s.set.OpenTimeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		if !r.fails(p.m.maxF, "the failures that trip the breaker") {
			return
		}
		h.Advance(timeout)
	} else if p.m.maxF > 1 {
		// Precondition: a success resets the count (R1's rule, which R1's
		// tests check); a breaker that never resets it ends the scenario
		// here, without a verdict.
		if !r.run(testErrDown, "a failure") || !r.run(nil, "a success") || !r.fails(p.m.maxF-1, "failures") {
			return
		}
		if r.b.State() != Closed {
			h.Logf("a failure, a success, then MaxFailures-1 failures opened the breaker: it does not reset the count " +
				"on a success (R1); the scenario ends here")
			return
		}
		if !r.run(nil, "a success") {
			return
		}
	}
	for i, st := range s.steps {
		where := fmt.Sprintf("at step %d (%v)", i+1, st)
		ok := true
		switch st.kind {
		case testPlArrive:
			ok = p.arrive(st, where)
		case testPlCancel:
			ok = p.cancel(st, where)
		case testPlAdvance:
			h.Advance(st.d)
			p.m.advance(st.d)
			ok = p.stillRunning(where, -1)
		case testPlEnd:
			ok = p.end(st, where)
		}
		if !ok {
			return
		}
	}
	if n := p.peak.Max(); s.req == "R3" && n > p.m.maxHalf {
		h.Errorf("too many probes ran at once: %d probes' fns were running at the same time with HalfOpenMaxRequests %d; "+
			"a probe holds its place until its fn returns", n, s.set.HalfOpenMaxRequests)
	}
}

// settle lets the code settle after calls were started while fns run, when
// calls may queue on the breaker's mutex behind one that holds it over fn:
// those are reported. After the other steps, where no call is started, the
// calls have passed that point already (quiet: synctest.Wait, cheaper).
func (p *testPlPlayer) quiet() {
	synctest.Wait()
}

func (p *testPlPlayer) settle(where string) bool {
	p.h.Helper()
	stuck := p.h.Settle()
	if stuck == nil {
		return true
	}
	p.h.Errorf("%s", testStuckOnMutex(where, len(p.m.running()), stuck))
	return false
}

// release ends every fn still running and lets the calls return.
func (p *testPlPlayer) release() {
	for _, c := range p.calls {
		if c.running() || !c.c.Returned() {
			c.out = testPlOwnCancel
			c.c.Cancel()
			c.gate.Release()
		}
	}
	if !p.h.Failed() {
		p.quiet()
		return
	}
	for i := 0; i < 100 && p.h.Settle() != nil; i++ {
	}
}

func (p *testPlPlayer) start(st testPlStep) *testPlHeld {
	c := &testPlHeld{gate: p.h.Gate(), plain: make(chan context.CancelFunc, 1)}
	var opts []katatest.CtxOption
	switch st.ctx {
	case testPlCausedBefore:
		opts = append(opts, katatest.Cancelled())
	case testPlExpiredBefore:
		opts = append(opts, katatest.Expired())
	case testPlDeadline:
		opts = append(opts, katatest.Timeout(st.d))
	}
	c.c = katatest.StartErr(p.h, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if st.ctx == testPlCancelledBefore {
			cancel()
		}
		c.plain <- cancel
		return p.b.Do(ctx, func(ctx context.Context) error {
			defer p.peak.Enter()()
			_ = c.gate.Hold(context.Background()) // deaf to ctx: a slow dependency's client
			switch c.out {
			case testPlOK:
				return nil
			case testPlDown:
				return fmt.Errorf("stock: %w", testErrDown)
			case testPlOwnCancel:
				return fmt.Errorf("stock: %w", context.Canceled)
			}
			return fmt.Errorf("rpc: %w", ctx.Err())
		})
	}, opts...)
	p.calls = append(p.calls, c)
	return c
}

// ctxs describes the ctx of the calls whose fn runs, for the messages.
func (p *testPlPlayer) ctxs() (desc string, done int) {
	var parts []string
	for _, i := range p.m.running() {
		c := p.m.calls[i]
		switch {
		case errors.Is(c.done, context.Canceled):
			parts, done = append(parts, fmt.Sprintf("call %d's caller had cancelled", i+1)), done+1
		case c.done != nil:
			parts, done = append(parts, fmt.Sprintf("call %d's deadline had passed", i+1)), done+1
		default:
			parts = append(parts, fmt.Sprintf("call %d's ctx was live", i+1))
		}
	}
	if len(parts) == 0 {
		return "none", 0
	}
	return strings.Join(parts, ", "), done
}

// stillRunning checks that every fn the model says runs still runs and its
// Do has not returned; except is a call index (0-based) not to check.
func (p *testPlPlayer) stillRunning(where string, except int) bool {
	p.h.Helper()
	for _, i := range p.m.running() {
		c := p.through[i]
		if i == except {
			continue
		}
		if c.c.Returned() {
			p.h.Errorf("%s: Do returned before its fn did: call %d's fn is still running (it ignores its ctx), but Do "+
				"returned %v. Do does not look at ctx: fn runs on the caller's goroutine, and Do returns when fn returns, "+
				"with fn's error", where, i+1, c.c.Err())
			return false
		}
		if !c.running() {
			p.h.Errorf("%s: call %d's fn is no longer running, although only the test ends it", where, i+1)
			return false
		}
	}
	return true
}

func testPlFns(n int) string {
	if n == 1 {
		return "1 probe's fn was"
	}
	return fmt.Sprintf("%d probes' fns were", n)
}

func testPlCallers(n int) string {
	if n == 1 {
		return "1 more caller"
	}
	return fmt.Sprintf("%d more callers", n)
}

func (p *testPlPlayer) arrive(st testPlStep, where string) bool {
	h := p.h
	h.Helper()
	held := len(p.m.running())
	desc, done := p.ctxs()
	news := make([]*testPlHeld, st.n)
	for i := range news {
		news[i] = p.start(st)
	}
	if !p.settle(where) || !p.stillRunning(where, -1) {
		return false
	}
	var other []string
	var through []*testPlHeld
	rejected := 0
	for i, c := range news {
		switch {
		case c.running():
			through = append(through, c)
		case c.c.Returned() && !c.c.Panicked() && c.gate.Entered() == 0:
			err := c.c.Err()
			if p.m.half && errors.Is(err, ErrTooManyRequests) {
				rejected++
				continue
			}
			other = append(other, fmt.Sprintf("caller %d of %d was rejected with %v", i+1, st.n, err))
		case c.c.Returned() && c.c.Panicked():
			return false
		default:
			other = append(other, fmt.Sprintf("caller %d of %d neither ran fn nor returned", i+1, st.n))
		}
	}
	want := p.m.admits(st.n)
	switch {
	case !p.m.half && len(through) != st.n:
		h.Errorf("%s: a closed breaker lets every call through, but only %d of %d ran fn (%s)", where, len(through), st.n,
			strings.Join(other, "; "))
		return false
	case p.m.half && len(through) > want && done > 0:
		h.Errorf("%s: a probe whose ctx ended gave its place back while its fn was still running: with "+
			"HalfOpenMaxRequests %d, %s running (%s) when %s came, and the breaker let "+
			"%d of them through, so %d probes ran at once. A probe holds its place until its fn returns, however its ctx "+
			"ends (cancelled, with a cause or not, or its deadline passed, even before Do): Do does not look at ctx, and "+
			"at most HalfOpenMaxRequests probes run at once",
			where, p.s.set.HalfOpenMaxRequests, testPlFns(held), desc, testPlCallers(st.n), len(through), held+len(through))
		return false
	case p.m.half && len(through) > want:
		h.Errorf("%s: too many probes ran at once: with HalfOpenMaxRequests %d and %s running (%s), %s "+
			"came and %d were let through; want %d: at most HalfOpenMaxRequests probes run at once, and a "+
			"probe holds its place until its fn returns",
			where, p.s.set.HalfOpenMaxRequests, testPlFns(held), desc, testPlCallers(st.n), len(through), want)
		return false
	case p.m.half && (len(through) < want || len(other) > 0):
		detail := ""
		if len(other) > 0 {
			detail = " (" + strings.Join(other, "; ") + ")"
		}
		h.Errorf("%s: with HalfOpenMaxRequests %d and %s running, %s came: %d ran fn and %d were "+
			"rejected with ErrTooManyRequests%s; want %d let through and the others rejected with ErrTooManyRequests: a "+
			"probe that ends, however it ends, frees its place, and the others are turned away at once",
			where, p.s.set.HalfOpenMaxRequests, testPlFns(held), testPlCallers(st.n), len(through), rejected, detail, want)
		return false
	}
	for _, c := range through {
		c.cancel = <-c.plain
	}
	p.through = append(p.through, through...)
	p.m.arrive(st, len(through))
	return true
}

func (p *testPlPlayer) cancel(st testPlStep, where string) bool {
	c := p.through[st.n-1]
	if st.cause {
		c.c.Cancel()
	} else {
		c.cancel()
	}
	p.m.calls[st.n-1].done = context.Canceled
	p.quiet()
	return p.stillRunning(where, -1)
}

func (p *testPlPlayer) end(st testPlStep, where string) bool {
	h := p.h
	h.Helper()
	c := p.through[st.n-1]
	c.out = st.out
	c.gate.Release()
	p.quiet()
	if !c.c.Returned() {
		h.Errorf("%s: fn returned, but Do did not: after fn returns, Do only records the result and returns", where)
		return false
	}
	if c.c.Panicked() {
		return false
	}
	p.m.end(st.n-1, st.out)
	if !p.stillRunning(where, st.n-1) {
		return false
	}
	got := p.b.State()
	want := Closed
	switch {
	case p.m.half:
		want = HalfOpen
	case p.m.open:
		want = Open
	}
	if got == want {
		return true
	}
	if p.m.half {
		// What a probe's result counts as is R4's and R6's: the breaker
		// moved on, and the places of this half-open period are moot.
		h.Logf("%s: State() was %v (want half-open); the scenario ends here", where, got)
		return false
	}
	streak := strings.Join(p.m.streak, "; ")
	if want == Open {
		h.Errorf("%s: a failure went uncounted: with MaxFailures %d, fn's results since the count was last reset make %d "+
			"failures in a row (%s), but State() was %v; want open. What counts is the error fn returns, whatever the "+
			"caller's ctx did while fn ran (cancelled, or its deadline passed): Do does not look at ctx, and only an "+
			"error matching context.Canceled counts for nothing",
			where, p.m.maxF, p.m.failures, streak, got)
		return false
	}
	h.Errorf("%s: the breaker counted a result as it must not: with MaxFailures %d, fn's results since the count was last "+
		"reset make only %d failures in a row (%s), but State() was %v; want closed. A call whose caller cancelled (or "+
		"whose deadline passed) while fn ran counts as what fn returned: nil is a success and resets the count, an error "+
		"matching context.Canceled counts for nothing; Do does not look at ctx",
		where, p.m.maxF, p.m.failures, streak, got)
	return false
}

// The fixed scenarios: a place given back at the cancel, by every kind of
// ctx end, for the smallest limits.
var testPlFixedR3 = []testPlScenario{
	{req: "R3", set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1},
		expects: "call 1 holds the only place until its fn returns: the second caller is rejected",
		steps:   []testPlStep{{kind: testPlArrive, n: 1, ctx: testPlCausedBefore}, {kind: testPlArrive, n: 1}}},
	{req: "R3", set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 2},
		expects: "the probes hold their places until their fns return",
		steps: []testPlStep{{kind: testPlArrive, n: 2, ctx: testPlDeadline, d: 20 * time.Millisecond},
			{kind: testPlCancel, n: 1}, {kind: testPlArrive, n: 1}, {kind: testPlAdvance, d: 20 * time.Millisecond},
			{kind: testPlArrive, n: 2}, {kind: testPlEnd, n: 1, out: testPlCtxErr}, {kind: testPlArrive, n: 2}}},
	{req: "R3", set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 3},
		expects: "three probes hold the three places until their fns return",
		steps: []testPlStep{{kind: testPlArrive, n: 1, ctx: testPlExpiredBefore}, {kind: testPlArrive, n: 1, ctx: testPlCancelledBefore},
			{kind: testPlArrive, n: 1}, {kind: testPlCancel, n: 3, cause: true}, {kind: testPlArrive, n: 2}}},
}

var testPlFixedR6 = []testPlScenario{
	{req: "R6", set: Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second},
		expects: "calls 1 and 3 fail: two failures in a row, the cancellation of call 2 between them counts for nothing",
		steps: []testPlStep{{kind: testPlArrive, n: 2}, {kind: testPlCancel, n: 1, cause: true}, {kind: testPlCancel, n: 2},
			{kind: testPlEnd, n: 1, out: testPlDown}, {kind: testPlEnd, n: 2, out: testPlCtxErr},
			{kind: testPlArrive, n: 1, ctx: testPlDeadline, d: 50 * time.Millisecond}, {kind: testPlAdvance, d: 50 * time.Millisecond},
			{kind: testPlEnd, n: 3, out: testPlCtxErr}}},
	{req: "R6", set: Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second},
		expects: "call 2's success after its caller cancelled resets the count",
		steps: []testPlStep{{kind: testPlArrive, n: 2}, {kind: testPlEnd, n: 1, out: testPlDown}, {kind: testPlCancel, n: 2},
			{kind: testPlEnd, n: 2, out: testPlOK}, {kind: testPlArrive, n: 1, ctx: testPlExpiredBefore},
			{kind: testPlEnd, n: 3, out: testPlDown}}},
}

func TestR3_ExploreAProbeWhoseCtxEndsHoldsItsPlaceUntilFnReturns(t *testing.T) {
	katatest.Replay(t, testPlFixedR3, testPlayPlaces)
	katatest.Explore(t, 8, testDrawPlaces("R3"), testPlayPlaces)
}

func TestR6_ExploreACallWhoseCtxEndsCountsAsWhatFnReturned(t *testing.T) {
	katatest.Replay(t, testPlFixedR6, testPlayPlaces)
	katatest.Explore(t, 6, testDrawPlaces("R6"), testPlayPlaces)
}
