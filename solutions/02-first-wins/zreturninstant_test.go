package firstwins

// R5, B1, B2 at the instant of the return: the README's promises hold when
// First, Hedge or Collect returns, not a moment later. No timer stays
// pending on clk, and a replica not started when Hedge returns is never
// called. The test counts the timers still running (neither fired nor
// stopped) right after the call returns, on the goroutine that called it,
// with no settle in between: a timer that a goroutine of the code's stops
// only once it sees the cancelled ctx, after the call returned, still
// counts. Drawn: which function, how many replicas, Hedge's delay and the
// steps that start its replicas (the delay passing, or a running replica
// failing part way through it), the timeout (none, or one that ends the
// call), and what ends the call: a success, the last failure (or, for
// Collect, the last answer), the caller's cancel, the caller's deadline
// passing, a ctx done before the call, or the timeout. Before the last step
// (before the call when there is none) the clock may hold whichever
// goroutine makes the next timer right after it made it, as the scheduler
// may hold it there, until the end has come: a goroutine of the code's own
// that makes timers is then still busy with its timer when the call
// returns, unless the call waits for it. The file sorts after the older
// tests of the same items: their messages come first.

import (
	"context"
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

// How a call of the test ends.
const (
	testEndSuccess  = "success"  // a running replica succeeds
	testEndFailures = "failures" // every running replica fails, the last of all (Collect: answers)
	testEndCancel   = "cancel"   // the caller cancels (with a cause)
	testEndDeadline = "deadline" // the caller's ctx deadline passes
	testEndExpired  = "expired"  // the caller's ctx is done before the call
	testEndTimeout  = "timeout"  // the call's own timeout passes
)

// testAtReturnStep starts one more replica of Hedge.
type testAtReturnStep struct {
	fail  int           // -1: the delay passes; else this running replica fails
	after time.Duration // since the last start
}

// testAtReturn is one call of First, Hedge or Collect.
type testAtReturn struct {
	fn      string // "First", "Hedge" or "Collect"
	n       int
	delay   time.Duration // Hedge
	timeout time.Duration // <= 0: none
	steps   []testAtReturnStep
	before  []int // First, Collect: replicas that fail (Collect: answer) at once, one by one, before the end
	ok      []bool
	hold    bool
	end     string
	lag     time.Duration // the clock moves this after the last step, to the end (timeout, deadline)
	winner  int           // testEndSuccess: the replica that succeeds
	honours []bool
}

// walk replays the steps: the instant of the last start and the replicas
// running (started, not failed) after them.
func (s testAtReturn) walk() (at time.Duration, started int, running []int) {
	started = 1
	running = []int{0}
	if s.fn != "Hedge" {
		started, running = s.n, nil
		for i := range s.n {
			if !slices.Contains(s.before, i) {
				running = append(running, i)
			}
		}
		return 0, started, running
	}
	for _, st := range s.steps {
		at += st.after
		if st.fail >= 0 {
			running = slices.DeleteFunc(running, func(i int) bool { return i == st.fail })
		}
		running = append(running, started)
		started++
	}
	return at, started, running
}

func (s testAtReturn) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s with %d replica(s)", s.fn, s.n)
	if s.fn == "Hedge" {
		fmt.Fprintf(&b, ", delay %v", s.delay)
	}
	if s.timeout > 0 {
		fmt.Fprintf(&b, ", timeout %v", s.timeout)
	} else {
		fmt.Fprintf(&b, ", no timeout (%v)", s.timeout)
	}
	b.WriteString("; every replica waits until the test lets it answer")
	for i, h := range s.honours {
		if h {
			fmt.Fprintf(&b, "; replica %d honours its ctx", i)
		}
	}
	if s.end == testEndExpired {
		b.WriteString("; the caller's ctx is done before the call")
	}
	hold := "; the clock holds whichever goroutine makes the next timer right after it made it, until the end has come"
	if s.hold && (len(s.steps) == 0 || s.end == testEndExpired) {
		b.WriteString(hold)
	}
	at := time.Duration(0)
	started := 1
	for k, st := range s.steps {
		if s.hold && k == len(s.steps)-1 {
			b.WriteString(hold)
		}
		at += st.after
		if st.fail < 0 {
			fmt.Fprintf(&b, "; at %v the delay has passed: replica %d starts", at, started)
		} else {
			fmt.Fprintf(&b, "; at %v replica %d fails: replica %d starts at once", at, st.fail, started)
		}
		started++
	}
	for _, i := range s.before {
		what := "fails"
		if s.fn == "Collect" && s.ok[i] {
			what = "succeeds"
		}
		fmt.Fprintf(&b, "; replica %d %s", i, what)
	}
	if s.lag > 0 {
		fmt.Fprintf(&b, "; the clock moves %v", s.lag)
	}
	end, _, running := s.walk()
	end += s.lag
	switch s.end {
	case testEndSuccess:
		fmt.Fprintf(&b, "; at %v replica %d succeeds", end, s.winner)
	case testEndFailures:
		what := "fail"
		if s.fn == "Collect" {
			what = "answer"
		}
		fmt.Fprintf(&b, "; at %v replicas %v %s, the last of all", end, running, what)
	case testEndCancel:
		fmt.Fprintf(&b, "; at %v the caller cancels", end)
	case testEndDeadline:
		fmt.Fprintf(&b, "; at %v the caller's ctx deadline passes", end)
	case testEndTimeout:
		fmt.Fprintf(&b, "; at %v the timeout passes", end)
	}
	return b.String()
}

func testDrawAtReturn(fn string) func(*rapid.T) testAtReturn {
	return func(r *rapid.T) testAtReturn {
		s := testAtReturn{fn: fn}
		minN := 1
		if fn == "Hedge" {
			minN = 2
		}
		s.n = rapid.IntRange(minN, 5).Draw(r, "replicas")
		s.ok = make([]bool, s.n)
		s.honours = make([]bool, s.n)
		for i := range s.n {
			s.honours[i] = rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i))
		}
		unit := 10 * time.Millisecond
		ends := []string{testEndSuccess, testEndCancel, testEndDeadline, testEndTimeout, testEndExpired}
		if fn == "Hedge" {
			s.delay = time.Duration(rapid.IntRange(2, 8).Draw(r, "delay (x10ms)")) * 10 * time.Millisecond
			unit = s.delay / 4
			steps := rapid.IntRange(0, s.n-1).Draw(r, "steps")
			started, running := 1, []int{0}
			for k := range steps {
				st := testAtReturnStep{fail: -1, after: s.delay}
				if rapid.Bool().Draw(r, fmt.Sprintf("step %d: a failure", k)) {
					st.fail = rapid.SampledFrom(running).Draw(r, fmt.Sprintf("step %d: the replica that fails", k))
					st.after = time.Duration(rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("step %d: after (x%v)", k, unit))) * unit
					running = slices.DeleteFunc(running, func(i int) bool { return i == st.fail })
				}
				s.steps = append(s.steps, st)
				running = append(running, started)
				started++
			}
			if started == s.n {
				ends = append(ends, testEndFailures)
			}
		} else {
			for i := range s.n {
				s.ok[i] = fn == "Collect" && rapid.Bool().Draw(r, fmt.Sprintf("replica %d succeeds", i))
			}
			ends = append(ends, testEndFailures)
			k := rapid.IntRange(0, s.n-1).Draw(r, "answered before the end")
			s.before = rapid.Permutation(testSeqN(s.n)).Draw(r, "answer order")[:k]
		}
		if fn == "Collect" {
			ends = slices.DeleteFunc(ends, func(e string) bool { return e == testEndSuccess })
		}
		s.end = rapid.SampledFrom(ends).Draw(r, "end")
		if s.end == testEndExpired {
			s.steps, s.before = nil, nil
		}
		_, started, running := s.walk()
		if s.end == testEndSuccess {
			s.winner = rapid.SampledFrom(running).Draw(r, "winner")
		}
		// The clock moves to the end only while no hedge falls due.
		if s.end == testEndTimeout || s.end == testEndDeadline {
			most := 3
			if started == s.n || fn != "Hedge" {
				most = 12
			}
			s.lag = time.Duration(rapid.IntRange(1, most).Draw(r, fmt.Sprintf("lag (x%v)", unit))) * unit
		}
		last, _, _ := s.walk()
		switch {
		case s.end == testEndTimeout:
			s.timeout = last + s.lag
		case rapid.Bool().Draw(r, "a timeout that never passes"):
			s.timeout = last + s.lag + time.Duration(rapid.IntRange(1, 40).Draw(r, fmt.Sprintf("timeout beyond the end (x%v)", unit)))*unit
		default:
			s.timeout = rapid.SampledFrom([]time.Duration{0, -1, -time.Second}).Draw(r, "no timeout")
		}
		s.hold = rapid.IntRange(0, 3).Draw(r, "hold the next timer's maker (not 0)") != 0
		return s
	}
}

func testSeqN(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func (s testAtReturn) play(h *katatest.H) {
	clk := h.HeldClock()
	gates := make([]*katatest.Gate, s.n)
	var mu sync.Mutex
	ok := slices.Clone(s.ok) // what replica i answers once let go: success or failure
	calls := make([]testCall, s.n)
	for i := range calls {
		gates[i] = h.Gate()
		calls[i] = func(ctx context.Context) (string, error) {
			hold := context.Background()
			if s.honours[i] {
				hold = ctx
			}
			if err := gates[i].Hold(hold); err != nil {
				return "", fmt.Errorf("gave up: %w", err)
			}
			mu.Lock()
			succeeds := ok[i]
			mu.Unlock()
			if succeeds {
				return fmt.Sprintf("%d.99 from %s", 10+i, testHedgeRegions[i]), nil
			}
			return "", &testHedgeErr{testHedgeRegions[i]}
		}
	}
	answer := func(i int, success bool) {
		mu.Lock()
		ok[i] = success
		mu.Unlock()
		gates[i].Release()
	}
	var opts []katatest.CtxOption
	last, _, running := s.walk()
	switch s.end {
	case testEndExpired:
		opts = append(opts, katatest.Expired())
	case testEndDeadline:
		opts = append(opts, katatest.Timeout(last+s.lag))
	}
	if s.hold && (len(s.steps) == 0 || s.end == testEndExpired) {
		clk.HoldNextTimer(true) // before the call: it may make a timer at once
	}
	timers := -1 // timers still running the instant the call returned
	heldAtReturn := false
	c := katatest.Start(h, func(ctx context.Context) (string, error) {
		var v string
		var err error
		switch s.fn {
		case "First":
			v, err = First(ctx, clk, s.timeout, calls...)
		case "Hedge":
			v, err = Hedge(ctx, clk, s.timeout, s.delay, calls...)
		default:
			Collect(ctx, clk, s.timeout, calls...)
		}
		timers = h.Clk.StopRunning() // right away: nothing else has run since
		heldAtReturn = clk.Gate.Waiting() > 0
		return v, err
	}, opts...)
	if c.Broken() {
		return
	}
	// A goroutine the clock holds may hold a lock: Settle, where replicas
	// that answer may wait for it, names them instead of hanging.
	synctest.Wait()
	for k, st := range s.steps {
		if s.hold && k == len(s.steps)-1 {
			clk.HoldNextTimer(true)
		}
		if st.fail < 0 {
			h.Clk.Add(st.after) // the hedge falls due: the code starts the next replica
		} else {
			if st.after > 0 {
				h.Clk.Add(st.after)
			}
			answer(st.fail, false)
		}
		if k == len(s.steps)-1 {
			h.Settle()
		} else {
			synctest.Wait()
		}
	}
	for _, i := range s.before {
		answer(i, s.ok[i])
		h.Settle()
	}
	clk.HoldNextTimer(false) // a hold only from the last step (or the call) on
	switch s.end {
	case testEndSuccess:
		answer(s.winner, true)
	case testEndFailures:
		for _, i := range running {
			answer(i, s.ok[i])
		}
	case testEndCancel:
		c.Cancel()
	case testEndDeadline, testEndTimeout:
		h.Clk.Add(s.lag)
	}
	h.Settle()
	clk.Gate.Release()
	synctest.Wait()
	if !c.Returned() && !c.Stop() {
		// Returning at once is what other tests check (R1, R3, R6, B1):
		// here the call is let go (cancel, the replicas and the clock) and
		// only the timers still running when it returned are judged.
		return
	}
	if timers > 0 {
		s.reportRunning(h, timers, heldAtReturn)
		katatest.Unwind(h, c)
		return
	}
	for _, g := range gates {
		g.Release() // the losers that ignore their ctx answer now
	}
	c.Finish(s.fn)
}

func (s testAtReturn) reportRunning(h *katatest.H, timers int, heldMaker bool) {
	h.T.Helper()
	rule := "no timer stays pending on clk once it returned (R5; a fresh clk.Timer per wait, stopped on every " +
		"way out: defer t.Stop())"
	if s.fn == "Hedge" {
		rule += ", and a replica not started when Hedge returns is never called"
	}
	var why string
	switch {
	case heldMaker && s.fn == "Hedge":
		why = "The goroutine that made that timer was not the one that returned: it was still busy with it (the " +
			"clock held it right after it made the timer, as the scheduler may hold it), and Hedge returned " +
			"without waiting for it. A launcher goroutine that waits on its own hedge timer and is told to stop " +
			"only through the cancelled ctx stops its timer, if at all, after Hedge returned, and may still start " +
			"a replica then. Wait on every hedge timer in Hedge's own select (a fresh clk.Timer per wait, stopped " +
			"on the way out), or make Hedge wait until that goroutine has stopped its timer and exited"
	case heldMaker:
		why = fmt.Sprintf("The goroutine that made that timer was not the one that returned: it was still busy "+
			"with it (the clock held it right after it made the timer, as the scheduler may hold it), and %s "+
			"returned without waiting for it. A goroutine that waits on a timer of its own and is told to stop only "+
			"through the cancelled ctx stops it after %s returned. Wait on the timer in %s's own select, or make %s "+
			"wait until that goroutine has stopped its timer and exited", s.fn, s.fn, s.fn, s.fn)
	default:
		why = fmt.Sprintf("A timer stopped a moment later, by a goroutine that sees the cancelled ctx only after "+
			"%s returned (a launcher or a watcher waiting on a timer of its own), is still pending when %s "+
			"returns. Stop every timer before returning: wait on each in %s's own select and defer its Stop, or "+
			"make %s wait until the goroutine that owns it has stopped it and exited", s.fn, s.fn, s.fn, s.fn)
	}
	h.Errorf("%s returned without stopping every timer it made on clk: %d timer(s) were still running, neither "+
		"fired nor stopped, the instant it returned, against the README's %s. %s (%s)", s.fn, timers, rule, why, s)
}

func TestR5_ExploreNoTimerRunsOnceFirstReturned(t *testing.T) {
	// Always a success while the goroutine that made the timeout's timer
	// is held, which a draw could miss.
	katatest.Replay(t, []testAtReturn{
		{fn: "First", n: 2, timeout: 300 * time.Millisecond, hold: true, end: testEndSuccess, winner: 0,
			ok: make([]bool, 2), honours: []bool{false, true}},
	}, func(h *katatest.H, s testAtReturn) { s.play(h) })
	katatest.Explore(t, 10, testDrawAtReturn("First"), func(h *katatest.H, s testAtReturn) { s.play(h) })
}

func TestB1_ExploreNoTimerRunsOnceHedgeReturned(t *testing.T) {
	// Always a success while the goroutine that made the hedge timer for
	// the next replica is held, which a draw could miss.
	ms := time.Millisecond
	katatest.Replay(t, []testAtReturn{
		{fn: "Hedge", n: 3, delay: 40 * ms, steps: []testAtReturnStep{{fail: -1, after: 40 * ms}}, hold: true,
			end: testEndSuccess, winner: 0, ok: make([]bool, 3), honours: []bool{true, false, true}},
	}, func(h *katatest.H, s testAtReturn) { s.play(h) })
	katatest.Explore(t, 15, testDrawAtReturn("Hedge"), func(h *katatest.H, s testAtReturn) { s.play(h) })
}

func TestB2_ExploreNoTimerRunsOnceCollectReturned(t *testing.T) {
	katatest.Explore(t, 10, testDrawAtReturn("Collect"), func(h *katatest.H, s testAtReturn) { s.play(h) })
}
