package firstwins

// Explored B1: Hedge over drawn scenarios. A small model of the README's
// rule (calls[0] at once; the next replica when delay has passed since the
// last one started, or at once when any replica fails, whichever comes
// first; nothing after Hedge returned) computes when each replica must
// start and what Hedge returns; the test plays the scenario on the mock
// clock and checks the start instants, the result, that no timer Hedge
// made is left pending on clk, and that no replica is called after Hedge
// returned. Replicas fail with errors of their own, some matching
// context.DeadlineExceeded or context.Canceled (just failures), and the
// caller may cancel (Hedge returns ctx.Err() and the failures so far, as
// First does). Two events the README does not order (two replicas answering
// at the same instant while others wait to start, an answer as a hedge
// falls due, anything at the timeout) are moved apart by 1ms when drawn;
// with delay <= 0, any success among answers at one instant may win. One
// test draws them together on purpose: a success at the very instant a
// hedge falls due, either with the clock running its clk.AfterFunc
// functions late (after the success reached Hedge) or with the gate
// released and the clock moved in one step; Hedge may start that replica
// first or not, but nothing once it returned.

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

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testHedgeReplica is what one replica of Hedge does once started.
type testHedgeReplica struct {
	after   time.Duration // how long it runs once started
	ok      bool          // succeeds; otherwise fails
	honours bool          // returns as soon as its ctx is done
	kind    int           // the kind of error it fails with
}

// The errors a replica fails with: its own, or one of its own that matches
// a context error (a per-call timeout, a closed pool), which is a failure
// like any other, not Hedge's timeout or the caller's cancel.
const (
	testHedgeBusy = iota
	testHedgeOwnExpiry
	testHedgeOwnCancel
	testHedgeErrKinds
)

// testHedgeScenario is one run of Hedge.
type testHedgeScenario struct {
	delay   time.Duration
	timeout time.Duration // <= 0: none
	cancel  time.Duration // when the caller cancels; 0: never
	reps    []testHedgeReplica
	// meet: a success may fall at the instant a hedge falls due (and
	// Hedge may then start that replica first, or not).
	meet bool
	// late: at that instant, a function the clock runs for a timer that
	// fires (clk.AfterFunc) runs late, once the success has reached Hedge;
	// otherwise the success comes as the clock moves, in one step.
	late bool
}

var testHedgeRegions = []string{"eu", "us", "asia", "sa", "af"}

func (s testHedgeScenario) value(i int) string {
	return fmt.Sprintf("%d.99 from %s", 10+i, testHedgeRegions[i])
}

// testHedgeErr is replica i's own error: a distinct value per replica.
type testHedgeErr struct{ region string }

func (e *testHedgeErr) Error() string { return "503 busy in " + e.region }

// err is replica i's error when it fails, a fresh value per call.
func (s testHedgeScenario) err(i int) error {
	region := testHedgeRegions[i]
	switch s.reps[i].kind {
	case testHedgeOwnExpiry:
		return fmt.Errorf("%s: own per-call timeout: %w", region, context.DeadlineExceeded)
	case testHedgeOwnCancel:
		return fmt.Errorf("%s: connection pool closed: %w", region, context.Canceled)
	}
	return &testHedgeErr{region}
}

// failsWith says what replica i's failure is, when its error matches a
// context error: that is where a design that reads it as a timeout or a
// cancel goes wrong.
func (s testHedgeScenario) failsWith(i int) string {
	switch s.reps[i].kind {
	case testHedgeOwnExpiry:
		return " with an error matching context.DeadlineExceeded, its own per-call timeout: that is a failure " +
			"like any other, not Hedge's timeout;"
	case testHedgeOwnCancel:
		return " with an error matching context.Canceled of its own, while the caller's ctx is live: that is a " +
			"failure like any other;"
	}
	return ""
}

func (s testHedgeScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hedge with %d replica(s), delay %v", len(s.reps), s.delay)
	if s.delay <= 0 {
		b.WriteString(" (every replica at once)")
	}
	fmt.Fprintf(&b, ", timeout %v", s.timeout)
	if s.timeout <= 0 {
		b.WriteString(" (no timeout)")
	}
	if s.cancel > 0 {
		fmt.Fprintf(&b, ", the caller cancels at %v", s.cancel)
	}
	b.WriteString(";")
	for i, r := range s.reps {
		what := fmt.Sprintf("succeeds with %q", s.value(i))
		if !r.ok {
			what = fmt.Sprintf("fails with %q", s.err(i).Error())
		}
		ctx := "ignores its ctx"
		if r.honours {
			ctx = "honours its ctx"
		}
		fmt.Fprintf(&b, "\n  replica %d: once started, runs %v, then %s; %s", i, r.after, what, ctx)
	}
	if m, ok := s.simulate(); ok {
		var starts []string
		for i, st := range m.starts {
			starts = append(starts, fmt.Sprintf("replica %d at %v", i, st.at))
		}
		fmt.Fprintf(&b, "\n  by the README: %s start; Hedge returns at %v, when %s", strings.Join(starts, ", "),
			m.endAt, m.endText(s))
		if m.mayStart {
			fmt.Fprintf(&b, ", the instant the hedge for replica %d falls due: the README does not order the two, "+
				"so Hedge may start replica %d before it returns, or not, but it calls no replica once it returned",
				len(m.starts), len(m.starts))
			if s.late {
				b.WriteString("\n  at that instant the clock fires its timers first, but a function it runs for " +
					"one (clk.AfterFunc) runs on its own goroutine, and here it runs only once the success has " +
					"reached Hedge")
			} else {
				b.WriteString("\n  at that instant the success comes as the clock moves, in one step")
			}
		}
	}
	return b.String()
}

// What ends Hedge.
const (
	testHedgeWin = iota
	testHedgeAllFailed
	testHedgeTimedOut
	testHedgeCancelled
)

// testHedgeStart is when the README starts a replica, and why.
type testHedgeStart struct {
	at      time.Duration
	why     string
	byDelay bool // the delay since the last start, not a failure, started it
}

// testHedgeModel is what the README says of a scenario.
type testHedgeModel struct {
	starts  []testHedgeStart // the replicas started, calls[0] first
	endAt   time.Duration    // when Hedge returns
	outcome int
	winners []int // the replicas whose success may be returned (several only at one instant with delay <= 0)
	failed  []int // the replicas that failed before Hedge returned, or with its last failure
	last    int   // the replica whose failure was the last (testHedgeAllFailed)
	tie     int   // when simulate fails: the replica to move, -1 for the timeout, -2 for the cancel
	// mayStart: a success came as the hedge for replica len(starts) fell
	// due (s.meet), so that replica may start at endAt, before Hedge returns.
	mayStart bool
}

func (m testHedgeModel) endText(s testHedgeScenario) string {
	switch m.outcome {
	case testHedgeWin:
		if len(m.winners) == 1 {
			return fmt.Sprintf("replica %d succeeds", m.winners[0])
		}
		return fmt.Sprintf("replicas %v succeed", m.winners)
	case testHedgeAllFailed:
		return fmt.Sprintf("replica %d fails, the last of the %d to fail", m.last, len(s.reps))
	}
	if m.outcome == testHedgeCancelled {
		return fmt.Sprintf("the caller cancels at %v", s.cancel)
	}
	return fmt.Sprintf("the %v timeout passes", s.timeout)
}

// simulate plays the README's rules. It fails (ok false, m.tie set) when
// two events at one instant would need an order the README does not give.
func (s testHedgeScenario) simulate() (m testHedgeModel, ok bool) {
	n := len(s.reps)
	ended := make([]bool, n)
	due := time.Duration(-1) // when the next replica is due by the delay; -1: none
	start := func(at time.Duration, why string) {
		m.starts = append(m.starts, testHedgeStart{at: at, why: why})
		due = -1
		if s.delay > 0 && len(m.starts) < n {
			due = at + s.delay
		}
	}
	start(0, "Hedge starts calls[0] at once")
	for s.delay <= 0 && len(m.starts) < n {
		start(0, fmt.Sprintf("delay %v <= 0 starts every replica at once", s.delay))
	}
	for {
		// The next instant anything happens, and what happens then.
		now := time.Duration(-1)
		next := func(at time.Duration) {
			if now < 0 || at < now {
				now = at
			}
		}
		for i, st := range m.starts {
			if !ended[i] {
				next(st.at + s.reps[i].after)
			}
		}
		if due >= 0 {
			next(due)
		}
		if s.timeout > 0 {
			next(s.timeout)
		}
		if s.cancel > 0 {
			next(s.cancel)
		}
		var ends []int
		for i, st := range m.starts {
			if !ended[i] && st.at+s.reps[i].after == now {
				ends = append(ends, i)
			}
		}
		hedge, timeout := due == now, s.timeout > 0 && s.timeout == now
		events := len(ends)
		if hedge {
			events++
		}
		cancel := s.cancel > 0 && s.cancel == now
		if cancel && (events > 0 || timeout) {
			m.tie = -2
			return m, false
		}
		if timeout && events > 0 {
			m.tie = -1
			return m, false
		}
		if s.meet && hedge && len(ends) == 1 && s.reps[ends[0]].ok {
			m.endAt, m.outcome, m.winners, m.mayStart = now, testHedgeWin, ends, true
			return m, true
		}
		if events > 1 && s.delay > 0 {
			m.tie = slices.Max(ends)
			return m, false
		}
		m.endAt = now
		if cancel {
			m.outcome = testHedgeCancelled
			return m, true
		}
		if timeout {
			m.outcome = testHedgeTimedOut
			return m, true
		}
		if hedge {
			prev := len(m.starts) - 1
			start(now, fmt.Sprintf("the %v delay has passed since replica %d started at %v", s.delay, prev,
				m.starts[prev].at))
			m.starts[len(m.starts)-1].byDelay = true
			continue
		}
		var failed []int
		for _, i := range ends {
			ended[i] = true
			if s.reps[i].ok {
				m.winners = append(m.winners, i)
			} else {
				failed = append(failed, i)
			}
		}
		if len(m.winners) > 0 {
			m.outcome = testHedgeWin
			return m, true
		}
		m.failed = append(m.failed, failed...)
		if len(m.failed) == n {
			m.outcome, m.last = testHedgeAllFailed, failed[len(failed)-1]
			return m, true
		}
		if s.delay > 0 && len(m.starts) < n {
			// One failure (no two answers share an instant here).
			i, newest := failed[0], len(m.starts)-1
			why := fmt.Sprintf("replica %d fails then%s and a failure starts the next replica at once, without "+
				"waiting for the rest of the delay", i, s.failsWith(i))
			if i != newest {
				why = fmt.Sprintf("replica %d fails then%s while replica %d, started after it, is still running: "+
					"the failure of any replica starts the next one at once, not only that of the replica started "+
					"last", i, s.failsWith(i), newest)
			}
			start(now, why)
		}
	}
}

// testHedgeDraw is what a test lets vary.
type testHedgeDraw struct {
	minN              int
	shortest, longest int // a replica runs shortest..longest quarters of the delay
	odds              int // a replica succeeds one time in odds
	timeoutOdds       int // a timeout one time in timeoutOdds
	cancelOdds        int // the caller cancels one time in cancelOdds (never with meet)
	// meet: a delay > 0, and a replica that succeeds at the very instant a
	// hedge falls due.
	meet bool
}

func (d testHedgeDraw) draw(r *rapid.T) testHedgeScenario {
	var s testHedgeScenario
	n := rapid.IntRange(d.minN, 5).Draw(r, "replicas")
	unit := 10 * time.Millisecond
	if !d.meet && rapid.IntRange(0, 7).Draw(r, "delay <= 0") == 0 {
		s.delay = rapid.SampledFrom([]time.Duration{0, -1, -time.Second}).Draw(r, "delay")
	} else {
		s.delay = time.Duration(rapid.IntRange(2, 6).Draw(r, "delay (x10ms)")) * 10 * time.Millisecond
		unit = s.delay / 4
	}
	for i := range n {
		s.reps = append(s.reps, testHedgeReplica{
			after:   time.Duration(rapid.IntRange(d.shortest, d.longest).Draw(r, fmt.Sprintf("replica %d runs (x%v)", i, unit))) * unit,
			ok:      rapid.IntRange(0, d.odds-1).Draw(r, fmt.Sprintf("replica %d succeeds", i)) == 0,
			honours: rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i)),
			kind:    rapid.IntRange(0, testHedgeErrKinds-1).Draw(r, fmt.Sprintf("replica %d fails with", i)),
		})
	}
	if rapid.IntRange(0, d.timeoutOdds-1).Draw(r, "a timeout") == 0 {
		s.timeout = time.Duration(rapid.IntRange(1, 16).Draw(r, fmt.Sprintf("timeout (x%v)", unit))) * unit
	} else {
		s.timeout = rapid.SampledFrom([]time.Duration{0, -1, -time.Second}).Draw(r, "no timeout")
	}
	if !d.meet && rapid.IntRange(0, d.cancelOdds-1).Draw(r, "the caller cancels") == 0 {
		s.cancel = time.Duration(rapid.IntRange(1, 16).Draw(r, fmt.Sprintf("cancel at (x%v)", unit))) * unit
	}
	s.separate()
	if d.meet {
		s.meetAHedge(r, unit)
	}
	return s
}

// separate moves apart, by 1ms at a time, the events the README does not
// order.
func (s *testHedgeScenario) separate() {
	for range 1000 {
		m, ok := s.simulate()
		if ok {
			break
		}
		if m.tie == -2 {
			s.cancel += time.Millisecond
		} else if m.tie < 0 {
			s.timeout += time.Millisecond
		} else {
			s.reps[m.tie].after += time.Millisecond
		}
	}
}

// meetAHedge picks an instant when the README starts a replica because the
// delay has passed, and makes one of the replicas still running then succeed at that instant.
// Nothing changes before it, and nothing else happens at it (separate has
// moved everything else apart).
func (s *testHedgeScenario) meetAHedge(r *rapid.T, unit time.Duration) {
	hedges := func() (at []int) {
		m, _ := s.simulate()
		for i, st := range m.starts {
			if st.byDelay {
				at = append(at, i)
			}
		}
		return at
	}
	due := hedges()
	if len(due) == 0 {
		// Replica 0 still runs when the delay has passed, and no timeout
		// comes first: replica 1 is then started by the delay.
		s.timeout = 0
		s.reps[0].after = max(s.reps[0].after, s.delay+unit)
		s.separate()
		due = hedges()
	}
	m, _ := s.simulate()
	next := rapid.SampledFrom(due).Draw(r, "the hedge a success meets")
	at := m.starts[next].at
	var running []int
	for i, st := range m.starts[:next] {
		if st.at < at && st.at+s.reps[i].after > at {
			running = append(running, i)
		}
	}
	w := rapid.SampledFrom(running).Draw(r, "the replica that succeeds then")
	s.reps[w].after, s.reps[w].ok = at-m.starts[w].at, true
	s.meet = true
	s.late = rapid.IntRange(0, 3).Draw(r, "clk.AfterFunc's functions run late (not 0)") != 0
}

// testLateFuncs is the mock clock, except that while it holds them, the
// functions it runs for the timers that fire (clk.AfterFunc) wait to be let
// go: such a function runs on a goroutine of its own, whenever the
// scheduler gets to it, even after Stop has returned false.
type testLateFuncs struct {
	*katatest.Clock
	mu   sync.Mutex
	hold chan struct{} // nil: the functions run at once
}

func (c *testLateFuncs) AfterFunc(d time.Duration, f func()) *clock.Timer {
	return c.Clock.AfterFunc(d, func() {
		c.mu.Lock()
		hold := c.hold
		c.mu.Unlock()
		if hold != nil {
			<-hold
		}
		f()
	})
}

// advanceLate moves the clock d, holding the functions of the timers that
// fire meanwhile until letGo (which h also owns, for an unwind).
func (c *testLateFuncs) advanceLate(h *katatest.H, d time.Duration) (letGo func()) {
	hold := make(chan struct{})
	var once sync.Once
	letGo = func() { once.Do(func() { close(hold) }) }
	h.Own(letGo)
	c.mu.Lock()
	c.hold = hold
	c.mu.Unlock()
	h.Advance(d)
	c.mu.Lock()
	c.hold = nil
	c.mu.Unlock()
	return letGo
}

// testHedgeRun is the replicas of one run: when each was called.
type testHedgeRun struct {
	h    *katatest.H
	mu   sync.Mutex
	at   []time.Duration // when replica i was called; -1: not called
	ctxs []context.Context
	errs []error
	// failed is the text of the error replica i returned; "" for none.
	failed []string
}

func (run *testHedgeRun) starts() []time.Duration {
	run.mu.Lock()
	defer run.mu.Unlock()
	return slices.Clone(run.at)
}

type testHedgeGot struct {
	v   string
	err error
}

func (s testHedgeScenario) play(h *katatest.H) {
	m, ok := s.simulate()
	if !ok {
		h.Errorf("precondition: the scenario has events at one instant that the README does not order")
		return
	}
	n := len(s.reps)
	run := &testHedgeRun{h: h, at: make([]time.Duration, n), ctxs: make([]context.Context, n), failed: make([]string, n)}
	gates := make([]*katatest.Gate, n)
	calls := make([]func(context.Context) (string, error), n)
	for i, rep := range s.reps {
		run.at[i] = -1
		run.errs = append(run.errs, s.err(i))
		gates[i] = h.Gate()
		calls[i] = func(ctx context.Context) (v string, err error) {
			run.mu.Lock()
			if run.at[i] < 0 {
				run.at[i], run.ctxs[i] = h.Elapsed(), ctx
			}
			run.mu.Unlock()
			defer func() {
				if err != nil {
					run.mu.Lock()
					run.failed[i] = err.Error()
					run.mu.Unlock()
				}
			}()
			if rep.after > 0 {
				hold := context.Background()
				if rep.honours {
					hold = ctx
				}
				if err := gates[i].Hold(hold); err != nil {
					return "", fmt.Errorf("gave up: %w", err)
				}
			}
			if rep.ok {
				return s.value(i), nil
			}
			return "stale " + s.value(i), run.errs[i] // a value along with the error, which Hedge must not return
		}
	}
	var clk clock.Clock = h.Clk
	var late *testLateFuncs
	if m.mayStart && s.late {
		late = &testLateFuncs{Clock: h.Clk}
		clk = late
	}
	c := katatest.Start(h, func(ctx context.Context) (testHedgeGot, error) {
		v, err := Hedge(ctx, clk, s.timeout, s.delay, calls...)
		return testHedgeGot{v, err}, nil
	})
	if c.Broken() {
		return
	}
	// Every instant something happens, up to the return.
	instants := []time.Duration{0, m.endAt}
	for i, st := range m.starts {
		instants = append(instants, st.at)
		if end := st.at + s.reps[i].after; end <= m.endAt {
			instants = append(instants, end)
		}
	}
	slices.Sort(instants)
	for _, t := range slices.Compact(instants) {
		release := func() {
			for i, st := range m.starts {
				if s.reps[i].after > 0 && st.at+s.reps[i].after == t {
					gates[i].Release()
				}
			}
		}
		if m.mayStart && t == m.endAt && late != nil {
			// The hedge's timer fires, but its function runs only once
			// the success has reached Hedge.
			letGo := late.advanceLate(h, t-h.Elapsed())
			release()
			synctest.Wait()
			returned, before := c.Returned(), run.starts()
			letGo()
			synctest.Wait()
			if returned && !s.checkNoneCalledByALateFunc(h, m, before, run.starts()) {
				katatest.Unwind(h, c)
				return
			}
		} else if m.mayStart && t == m.endAt {
			// The success and the hedge in one step: the winner is let
			// go, then the clock moves without waiting for it.
			release()
			h.Clk.Add(t - h.Elapsed())
		} else {
			if t > h.Elapsed() {
				h.Advance(t - h.Elapsed())
			}
			release()
			if m.outcome == testHedgeCancelled && t == m.endAt {
				c.Cancel()
			}
		}
		synctest.Wait()
		// A return before its time first: the starts it missed follow from it.
		if !s.checkNotReturned(h, m, t, c) || !s.checkStarts(h, m, t, run.starts()) || !s.checkReturned(h, m, t, c) {
			katatest.Unwind(h, c)
			return
		}
	}
	got, _ := c.Result()
	if !s.checkResult(h, m, run, got) || !s.checkCtxsEnded(h, m, run) {
		katatest.Unwind(h, c)
		return
	}
	// The replicas still running wait on gates, not on the clock: any
	// timer left on clk is Hedge's. Its firing must start nothing.
	moved := h.PendingTimer()
	if !s.checkNoneCalledLate(h, m, run.starts(), moved) {
		katatest.Unwind(h, c)
		return
	}
	if moved != 0 {
		h.Errorf("Hedge returned at %v (%s) and left a timer pending on clk (WaitForAllTimers moved the mock "+
			"clock %v further): stop every timer Hedge made, on every way out, and stop the hedge timer for the "+
			"next replica whenever a replica starts early after a failure, since the next one is then due "+
			"delay after that start (never Reset a mock timer; clk.After cannot be stopped)",
			m.endAt, m.endText(s), moved)
		katatest.Unwind(h, c)
		return
	}
	for _, g := range gates {
		g.Release() // the losers that ignore their ctx answer now, after Hedge returned
	}
	if _, _, ok := c.Finish("Hedge"); !ok {
		return
	}
	s.checkNoneCalledLate(h, m, run.starts(), 0)
}

// checkCtxsEnded: once Hedge returned, the ctx of every replica it called
// is cancelled, whatever that replica did.
func (s testHedgeScenario) checkCtxsEnded(h *katatest.H, m testHedgeModel, run *testHedgeRun) bool {
	h.T.Helper()
	run.mu.Lock()
	ctxs, failed := slices.Clone(run.ctxs), slices.Clone(run.failed)
	run.mu.Unlock()
	for i, ctx := range ctxs {
		if ctx == nil || ctx.Err() != nil {
			continue
		}
		did := "was still running"
		if !s.reps[i].honours {
			did += " (it ignores its ctx)"
		}
		switch {
		case failed[i] != "":
			did = fmt.Sprintf("had failed with %q", failed[i])
		case slices.Contains(m.winners, i):
			did = "had succeeded"
		}
		h.Errorf("Hedge returned at %v (%s), but the ctx replica %d got, which %s, was never cancelled: Hedge, "+
			"like First, cancels the replicas' ctx on every return, the winner's and the failed replicas' too, not "+
			"only the losers still running; a ctx left live keeps whatever the replica started under it running, "+
			"and stays registered on the caller's ctx until that ends. Derive one ctx for all the replicas with "+
			"context.WithCancel(ctx) and defer cancel(), or cancel every replica's ctx on the way out",
			m.endAt, m.endText(s), i, did)
		return false
	}
	return true
}

// checkNoneCalledByALateFunc: no replica is called by a function of the
// clock's (clk.AfterFunc) that ran after Hedge returned.
func (s testHedgeScenario) checkNoneCalledByALateFunc(h *katatest.H, m testHedgeModel, before, after []time.Duration) bool {
	h.T.Helper()
	for i := range after {
		if before[i] < 0 && after[i] >= 0 {
			h.Errorf("Hedge called replica %d after it had returned at %v (%s): the hedge for replica %d fell due at "+
				"that instant, and the function its clk.AfterFunc runs came only after Hedge had returned, yet "+
				"started a replica; a replica not started when Hedge returns is never called. Such a function runs "+
				"on its own goroutine, whenever the scheduler gets to it, even after Stop returned false (the timer "+
				"had fired): have it check, under the lock Hedge takes on its way out, that Hedge has not returned, "+
				"or start replicas only from Hedge's own select on a fresh clk.Timer", i, m.endAt, m.endText(s),
				len(m.starts))
			return false
		}
	}
	return true
}

// checkNoneCalledLate: once Hedge returned, no replica it had not started
// is called, even when the clock moves on (moved: how far PendingTimer
// moved it, firing the timers Hedge left).
func (s testHedgeScenario) checkNoneCalledLate(h *katatest.H, m testHedgeModel, got []time.Duration, moved time.Duration) bool {
	h.T.Helper()
	started := len(m.starts)
	if m.mayStart {
		started++ // the one whose hedge fell due with the success: it may have started at endAt
	}
	for i, at := range got {
		if at < 0 || (i < started && at <= m.endAt) {
			continue
		}
		msg := fmt.Sprintf("Hedge called replica %d at %v, after it had returned at %v (%s): a replica not started "+
			"when Hedge returns is never called", i, at, m.endAt, m.endText(s))
		if m.mayStart {
			msg += fmt.Sprintf("; the hedge for replica %d fell due at that instant too: Hedge may start replica %d "+
				"before it returns, or not, but nothing after", started-1, started-1)
		}
		if moved != 0 {
			msg += fmt.Sprintf("; a timer Hedge left on clk started it as the clock moved on (%v until every timer "+
				"left had fired): a clk.AfterFunc's function still runs when Stop comes too late (Stop returns "+
				"false once the timer has fired), so the function must check, under the lock Hedge takes on its "+
				"way out, that Hedge has not returned; or start replicas only from Hedge's own select on a fresh "+
				"clk.Timer, stopped on every way out", moved)
		}
		h.Errorf("%s", msg)
		return false
	}
	return true
}

// checkStarts: by instant t, exactly the replicas the README starts by
// then have started, each at its instant.
func (s testHedgeScenario) checkStarts(h *katatest.H, m testHedgeModel, t time.Duration, got []time.Duration) bool {
	h.T.Helper()
	rule := "the next replica starts when delay has passed on clk since the last one started, or at once when " +
		"a replica fails, whichever comes first"
	for i, at := range got {
		var want *testHedgeStart
		if i < len(m.starts) {
			want = &m.starts[i]
		}
		switch {
		case m.mayStart && i == len(m.starts) && at == m.endAt:
			// due by the delay at the instant of the success: either way
		case want != nil && want.at <= t && at < 0:
			h.Errorf("Hedge had not started replica %d at %v, when it was due: %s (%s)", i, want.at, want.why, rule)
			return false
		case want != nil && at >= 0 && at > want.at:
			h.Errorf("Hedge started replica %d at %v, late: it was due at %v, when %s (%s)", i, at, want.at,
				want.why, rule)
			return false
		case at >= 0 && (want == nil || at < want.at):
			due := "never: Hedge returns before it is due, and a replica not started when Hedge returns is never called"
			if want != nil {
				due = fmt.Sprintf("at %v, when %s", want.at, want.why)
			}
			h.Errorf("Hedge started replica %d at %v, before it was due (%s): %s", i, at, due, rule)
			return false
		}
	}
	return true
}

// checkNotReturned: Hedge does not return before m.endAt.
func (s testHedgeScenario) checkNotReturned(h *katatest.H, m testHedgeModel, t time.Duration, c *katatest.Call[testHedgeGot]) bool {
	h.T.Helper()
	if t < m.endAt && c.Returned() {
		got, _ := c.Result()
		why := "a failure is not an answer while other replicas may still succeed"
		if errors.Is(got.err, ErrTimeout) {
			why = fmt.Sprintf("the %v timeout counts from the start of Hedge", s.timeout)
			if s.timeout <= 0 {
				why = "timeout <= 0 means no timeout"
			}
			if errors.Is(got.err, context.DeadlineExceeded) {
				why = "a replica's error matching context.DeadlineExceeded is its own per-call timeout: that is a " +
					"failure like any other, not Hedge's timeout; " + why
			}
		}
		h.Errorf("Hedge returned (%q, %v) at %v, before anything ended it (it returns at %v, when %s): %s", got.v,
			got.err, t, m.endAt, m.endText(s), why)
		return false
	}
	return true
}

// checkReturned: Hedge has returned at m.endAt.
func (s testHedgeScenario) checkReturned(h *katatest.H, m testHedgeModel, t time.Duration, c *katatest.Call[testHedgeGot]) bool {
	h.T.Helper()
	if t == m.endAt && !c.Returned() {
		why := "return the first success at once"
		switch m.outcome {
		case testHedgeAllFailed:
			why = "when the last replica fails, return all their errors at once"
		case testHedgeTimedOut:
			why = "stop waiting at the timeout on the injected clock: one clk.Timer from the start of Hedge, " +
				"in the select"
		case testHedgeCancelled:
			why = "when the caller's ctx is done, return at once with ctx.Err() and the failures so far: " +
				"select on ctx.Done() too, and don't wait for the replicas"
		}
		for i, st := range m.starts {
			if r := s.reps[i]; !r.honours && st.at+r.after > t {
				why += fmt.Sprintf("; don't wait for the others: replica %d ignores its ctx and answers only at %v, "+
					"its late answer is dropped", i, st.at+r.after)
				break
			}
		}
		h.Errorf("Hedge was still waiting at %v, when %s: %s (results, errors and the timeout are as for First)%s",
			t, m.endText(s), why, h.Waiting())
		return false
	}
	return true
}

// checkResult: what Hedge returned is what First would, for the replicas
// that ran.
func (s testHedgeScenario) checkResult(h *katatest.H, m testHedgeModel, run *testHedgeRun, got testHedgeGot) bool {
	h.T.Helper()
	when := fmt.Sprintf("at %v, when %s", m.endAt, m.endText(s))
	if m.outcome != testHedgeTimedOut && errors.Is(got.err, ErrTimeout) {
		why := "every replica failed before any timeout, so that is not a timeout"
		if m.outcome == testHedgeWin {
			why = "a success is returned as it is"
		}
		if m.outcome == testHedgeCancelled {
			why = "the caller cancelled before any timeout, so the error is ctx.Err(), not a timeout"
		}
		if s.timeout <= 0 {
			why = fmt.Sprintf("timeout %v means no timeout: timeout <= 0 means no timeout, so arm a timer only "+
				"when timeout > 0", s.timeout)
		}
		if errors.Is(got.err, context.DeadlineExceeded) {
			why = "a replica's error matching context.DeadlineExceeded is its own per-call timeout: that is a " +
				"failure like any other, not Hedge's timeout (only Hedge's own timer ends it with ErrTimeout); " +
				"record it and go on while other replicas may still succeed. " + why
		}
		h.Errorf("Hedge returned a timeout error (%q, %v) %s: %s", got.v, got.err, when, why)
		return false
	}
	if m.outcome == testHedgeWin {
		var want []string
		for _, i := range m.winners {
			want = append(want, s.value(i))
		}
		if got.err != nil || !slices.Contains(want, got.v) {
			h.Errorf("Hedge returned (%q, %v) %s; want the value of the replica that succeeded (one of %q) and "+
				"a nil error", got.v, got.err, when, want)
			return false
		}
		return true
	}
	if got.err == nil || got.v != "" {
		h.Errorf("Hedge returned (%q, %v) %s; want the zero value and an error: every failure returns the zero "+
			"value of T", got.v, got.err, when)
		return false
	}
	if m.outcome == testHedgeCancelled && !errors.Is(got.err, context.Canceled) {
		h.Errorf("Hedge returned %q %s; want an error matching ctx.Err() (context.Canceled), with the failures "+
			"so far (chain %s)", got.err, when, katatest.Chain(got.err))
		return false
	}
	if m.outcome == testHedgeTimedOut {
		if !errors.Is(got.err, ErrTimeout) || !errors.Is(got.err, context.DeadlineExceeded) {
			h.Errorf("Hedge returned %q %s; want an error matching ErrTimeout and context.DeadlineExceeded "+
				"(chain %s)", got.err, when, katatest.Chain(got.err))
			return false
		}
	}
	for _, i := range m.failed {
		if !errors.Is(got.err, run.errs[i]) {
			if msg := katatest.LostWrap(got.err, run.errs[i], `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
				h.Errorf("Hedge returned %q %s: %s", got.err, when, msg)
			} else if fw := s.failsWith(i); fw != "" {
				h.Errorf("replica %d failed%s yet Hedge returned %q %s, which does not match its error: the "+
					"error carries every failure so far (errors.Join keeps them all)", i, fw, got.err, when)
			} else {
				h.Errorf("Hedge returned %q %s, which does not match the error of replica %d, which failed "+
					"before: the error carries every failure so far (errors.Join keeps them all)", got.err, when, i)
			}
			return false
		}
	}
	if m.outcome == testHedgeAllFailed {
		msg, prev := got.err.Error(), 0
		for i := range s.reps {
			tag := fmt.Sprintf("replica %d: ", i)
			at := strings.Index(msg[prev:], tag)
			if at < 0 {
				h.Errorf("every replica failed and Hedge returned %q: the error must tag each replica's error with "+
					"its index in calls, in the order of calls (%q next), whatever order they failed in", msg, tag)
				return false
			}
			prev += at + len(tag)
		}
	}
	run.mu.Lock()
	failed := slices.Clone(run.failed)
	run.mu.Unlock()
	if why := testPhantomFailure("Hedge", got.err.Error(), failed); why != "" {
		h.Errorf("Hedge returned %q %s: %s", got.err, when, why)
		return false
	}
	return true
}

func TestB1_ExploreTheHedgeSchedule(t *testing.T) {
	// Replicas that run up to three delays, mostly failing: older ones
	// still run when newer ones start, and fail while they do.
	d := testHedgeDraw{minN: 3, shortest: 3, longest: 9, odds: 6, timeoutOdds: 8, cancelOdds: 5}
	katatest.Explore(t, 15, d.draw, func(h *katatest.H, s testHedgeScenario) { s.play(h) })
	// And always a timeout, then a cancel, with one replica failed, one
	// still running and one never started, which a draw could miss.
	ms := time.Millisecond
	reps := []testHedgeReplica{{after: 30 * ms}, {after: 90 * ms, honours: true}, {after: 10 * ms, ok: true}}
	katatest.Replay(t, []testHedgeScenario{
		{delay: 40 * ms, timeout: 50 * ms, reps: reps},
		{delay: 40 * ms, cancel: 50 * ms, reps: reps},
	}, func(h *katatest.H, s testHedgeScenario) { s.play(h) })
}

func TestB1_ExploreNoHedgeTimerIsLeftPending(t *testing.T) {
	// Replicas that answer before the next one is due: failures start the
	// next replica early, and Hedge returns before the delay is up.
	d := testHedgeDraw{minN: 2, shortest: 0, longest: 2, odds: 4, timeoutOdds: 8, cancelOdds: 5}
	katatest.Explore(t, 15, d.draw, func(h *katatest.H, s testHedgeScenario) { s.play(h) })
}

func TestB1_ExploreASuccessAsAHedgeFallsDue(t *testing.T) {
	// A replica succeeds at the very instant the delay starts the next
	// one: either order is right, but a hedge that fires as Hedge returns
	// (its clk.AfterFunc function running late, or the clock moving as the
	// success comes) must start nothing once Hedge returned, and leave no
	// timer behind.
	d := testHedgeDraw{minN: 2, shortest: 3, longest: 9, odds: 6, timeoutOdds: 8, meet: true}
	katatest.Explore(t, 10, d.draw, func(h *katatest.H, s testHedgeScenario) { s.play(h) })
}
