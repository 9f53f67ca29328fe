package breaker

// The hook while callers race: goroutines call Do and State at once, around
// every transition (the trip, the end of the open period reached by moving
// the clock while they call, the probes' successes and failures), with fns
// that end at once in every way, or are held and end in a later round,
// honouring their ctx or not. Which transitions happen, and in which order
// their hooks run, depends on the schedule; what every correct breaker
// gives, whatever the order, is checked after each round, once everything
// has settled and the test has asked State:
//
//   - each hook ran on the goroutine of a Do or State call that had not
//     returned yet, and not while that call's fn ran;
//   - each pair is a transition of the README: closed→open, open→half-open,
//     half-open→closed or half-open→open;
//   - each call got the pairs its own steps can make: State and a Do before
//     its fn, at most the lazy move open→half-open; a Do after its fn, at
//     most that move and one more, which opens the breaker only on a
//     failure and closes it only on a success;
//   - the pairs of the round, in any order, make a path from the state
//     State gave before the round to the one it gave after it (each state
//     left as often as entered, the start and the end aside), through every
//     state a caller saw.
//
// A breaker that passes the hook a state read again after it released the
// lock (State(), or a second locked read), instead of the from and to it
// decided, gives a pair that is no transition, or one another goroutine
// made, as soon as another caller moves the breaker in between.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testRaceCall is a goroutine of a round: State, or Do with an fn that
// ends at once as out says, or waits (held) until a later round ends it.
type testRaceCall struct {
	state bool
	held  bool
	deaf  bool // held, and fn ignores its ctx
	out   testOutcome
}

// testRaceEnd ends the fn of a held call, if it ran: fn returns out, or,
// with cancel, the caller cancels its ctx first (an fn that honours it
// then returns the ctx's error; a deaf one still returns out).
type testRaceEnd struct {
	call   int // the call's number in the scenario, from 1
	cancel bool
	out    testOutcome
}

// testRaceRound is what happens at once: the clock moves by advance (once
// everything settled), then the held fns end and the calls start together,
// and the clock moves by during while they run, at the moment the fn of
// call at (of the round, from 0; never a held one) returns, or its Do or
// State returns without running fn.
type testRaceRound struct {
	advance time.Duration
	ends    []testRaceEnd
	calls   []testRaceCall
	during  time.Duration
	at      int
	// hold: the first call's first reading of the clock is held until the
	// others have started and the clock has moved by during
	hold bool
}

type testRaceScenario struct {
	set    Settings
	isF    bool
	marked time.Duration // failures carry RetryAfter(marked, …) (bonus B2); 0: none do
	rounds []testRaceRound
}

func (s testRaceScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, Settings{MaxFailures: %d, OpenTimeout: %v, HalfOpenMaxRequests: %d",
		s.set.MaxFailures, s.set.OpenTimeout, s.set.HalfOpenMaxRequests)
	if s.set.FailureRate > 0 {
		fmt.Fprintf(&b, ", FailureRate: %v, Window: %v, MinRequests: %d", s.set.FailureRate, s.set.Window, s.set.MinRequests)
	}
	if s.isF {
		b.WriteString(", IsFailure: false for httpError codes below 500")
	}
	b.WriteString(", OnStateChange: records each call and its goroutine})")
	if s.marked > 0 {
		fmt.Fprintf(&b, "\n\tfailures that fn returns are wrapped in RetryAfter(%v, …)", s.marked)
	}
	n := 0
	for i, rd := range s.rounds {
		fmt.Fprintf(&b, "\n\tround %d", i+1)
		if rd.advance > 0 {
			fmt.Fprintf(&b, ", after the clock moved %v", rd.advance)
		}
		if rd.hold {
			fmt.Fprintf(&b, ": call %d starts alone and is held right after its first reading of the clock (clk.Now()); "+
				"the clock moves %v; then, all at once, call %d goes on and the others start:", n+1, rd.during, n+1)
		} else {
			b.WriteString(", all at once:")
		}
		for _, e := range rd.ends {
			if e.cancel {
				fmt.Fprintf(&b, "\n\t\tthe caller of held call %d cancels its ctx; then its fn (if it ran) ", e.call)
				b.WriteString("returns the ctx's error if it honours it, or else ")
			} else {
				fmt.Fprintf(&b, "\n\t\tthe fn of held call %d (if it ran) ", e.call)
			}
			b.WriteString(e.out.how)
		}
		for _, c := range rd.calls {
			n++
			switch {
			case c.state:
				fmt.Fprintf(&b, "\n\t\tcall %d: State()", n)
			case c.held && c.deaf:
				fmt.Fprintf(&b, "\n\t\tcall %d: Do, fn waits, ignoring its ctx", n)
			case c.held:
				fmt.Fprintf(&b, "\n\t\tcall %d: Do, fn waits (and honours its ctx)", n)
			default:
				fmt.Fprintf(&b, "\n\t\tcall %d: Do, fn %s", n, c.out.how)
			}
		}
		if rd.during > 0 && !rd.hold {
			at := n - len(rd.calls) + rd.at + 1
			if rd.calls[rd.at].state {
				fmt.Fprintf(&b, "\n\t\tthe clock moves %v while they run, as call %d returns", rd.during, at)
			} else {
				fmt.Fprintf(&b, "\n\t\tthe clock moves %v while they run, as call %d's fn returns (or its Do, if fn does not run)",
					rd.during, at)
			}
		}
		b.WriteString("\n\t\tthen, all settled, the test calls State()")
	}
	return b.String()
}

// Where a call of Do stands when a hook runs on its goroutine.
const (
	testRaceBefore = iota // fn has not started (or never will)
	testRaceInFn          // fn runs
	testRaceAfter         // fn returned or panicked
)

// testRaceRun is one call of the scenario, or the test's own State after a
// round (n 0).
type testRaceRun struct {
	n     int
	round int
	call  testRaceCall
	// how fn ends: a held fn's out and cancel are set before it is
	// released
	out    testOutcome
	cancel bool
	ended  bool // a held fn the scenario ended

	phase int          // guarded by the player's mu
	hooks []testChange // guarded by the player's mu: the pairs its goroutine got
	when  []int        // guarded by the player's mu: the phase of each
	c     *katatest.Call[testRaceDone]
	gate  *katatest.Gate // a held fn waits here
	stop  context.CancelFunc
	done  testRaceDone // once it returned

	reached chan struct{} // closed as fn returns, or as a call that ran no fn returns
	reach   sync.Once
}

// signal tells the test that run has reached its end.
func (run *testRaceRun) signal() { run.reach.Do(func() { close(run.reached) }) }

// testRaceDone is what a call gave.
type testRaceDone struct {
	entered bool  // fn ran
	err     error // Do's error (fn's panic: nil)
	saw     State // State's result
}

// testRaceHook is one call of OnStateChange.
type testRaceHook struct {
	testChange
	g     int
	run   *testRaceRun // the call in progress on that goroutine; nil: none
	phase int
}

// testRaceClock is the mock clock, except that while the test arms it with
// a gate, a caller of Now waits there right after its reading. The test
// arms it while one call runs alone, and disarms it once that call waits.
// The code only loads the gate: an atomic load orders nothing between the
// code's goroutines, so the race detector sees their races as before.
type testRaceClock struct {
	*katatest.Clock
	hold atomic.Pointer[katatest.Gate]
}

func (c *testRaceClock) Now() time.Time {
	now := c.Clock.Now()
	if g := c.hold.Load(); g != nil {
		_ = g.Hold(context.Background())
	}
	return now
}

type testRacePlayer struct {
	h    *katatest.H
	s    testRaceScenario
	b    *Breaker
	clk  *testRaceClock
	runs []*testRaceRun

	mu     sync.Mutex
	active map[int]*testRaceRun // the calls in progress, by goroutine
	hooks  []testRaceHook       // this round's
	own    *testRaceRun         // the test's State after the round
}

func testRacePlay(h *katatest.H, s testRaceScenario) {
	p := &testRacePlayer{h: h, s: s, active: map[int]*testRaceRun{}}
	set := s.set
	if s.isF {
		set.IsFailure = testIsFailure
	}
	set.OnStateChange = p.hook
	p.clk = &testRaceClock{Clock: h.Clk}
	p.b = New(p.clk, set)
	from := Closed
	for k, rd := range s.rounds {
		to, ok := p.round(k+1, rd)
		if !ok || !p.check(k+1, from, to) {
			p.unwind()
			return
		}
		from = to
	}
}

// hook is the breaker's OnStateChange.
func (p *testRacePlayer) hook(from, to State) {
	g := katatest.Goroutine()
	p.mu.Lock()
	defer p.mu.Unlock()
	hc := testRaceHook{testChange: testChange{from, to}, g: g, run: p.active[g]}
	if hc.run != nil {
		hc.phase = hc.run.phase
		hc.run.hooks = append(hc.run.hooks, hc.testChange)
		hc.run.when = append(hc.run.when, hc.phase)
	}
	p.hooks = append(p.hooks, hc)
}

// enter and the function it returns bracket a call of Do or State on the
// calling goroutine.
func (p *testRacePlayer) enter(run *testRaceRun) func() {
	g := katatest.Goroutine()
	p.mu.Lock()
	p.active[g] = run
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.active, g)
		p.mu.Unlock()
	}
}

func (p *testRacePlayer) setPhase(run *testRaceRun, phase int) {
	p.mu.Lock()
	run.phase = phase
	p.mu.Unlock()
}

// mark wraps a failure fn returns in RetryAfter, when the scenario says so.
// A breaker without bonus B2 (its RetryAfter panics) gets the failure as it
// is: this test is about the hook.
func (p *testRacePlayer) mark(err error) (marked error) {
	if p.s.marked <= 0 || err == nil {
		return err
	}
	defer func() {
		if recover() != nil {
			marked = err
		}
	}()
	return RetryAfter(p.s.marked, err)
}

// start starts call c of round k; it calls once begin is closed.
func (p *testRacePlayer) start(k int, c testRaceCall, begin <-chan struct{}) {
	run := &testRaceRun{n: len(p.runs) + 1, round: k, call: c, out: c.out, reached: make(chan struct{})}
	p.runs = append(p.runs, run)
	ctx, stop := context.WithCancel(context.Background())
	run.stop = stop
	p.h.Own(stop)
	if c.held {
		run.gate = p.h.Gate()
	}
	run.c = katatest.Go(p.h, func() (d testRaceDone, _ error) {
		defer stop()
		<-begin
		defer run.signal()
		defer p.enter(run)()
		if c.state {
			d.saw = p.b.State()
			return d, nil
		}
		if c.out.ctx {
			stop() // the caller has given up: fn returns the ctx's error
		}
		defer func() {
			if v := recover(); v != nil {
				if run.out.panic == nil || !d.entered {
					panic(v) // not fn's panic: the breaker's own
				}
			}
		}()
		d.err = p.b.Do(ctx, func(ctx context.Context) error {
			p.setPhase(run, testRaceInFn)
			defer p.setPhase(run, testRaceAfter)
			d.entered = true
			if c.held {
				wait := ctx
				if c.deaf {
					wait = context.Background()
				}
				if err := run.gate.Hold(wait); err != nil {
					return fmt.Errorf("stock: %w", err)
				}
			}
			if run.out.panic != nil {
				v := run.out.panic()
				run.signal()
				panic(v)
			}
			err := run.out.err(ctx)
			if run.out.kind == testFailure {
				err = p.mark(err)
			}
			run.signal()
			return err
		})
		return d, nil
	})
}

// round plays round k and returns the state the test's State gives after
// it. ok is false if the round could not be played out (reported).
func (p *testRacePlayer) round(k int, rd testRaceRound) (State, bool) {
	h := p.h
	if rd.advance > 0 {
		h.Advance(rd.advance)
	}
	p.mu.Lock()
	p.hooks = nil
	p.mu.Unlock()
	begin := make(chan struct{})
	first := len(p.runs)
	calls := rd.calls
	var gate *katatest.Gate
	if rd.hold {
		// The first call runs alone up to its first reading of the clock.
		gate = h.Gate()
		p.clk.hold.Store(gate)
		open := make(chan struct{})
		close(open)
		p.start(k, calls[0], open)
		calls = calls[1:]
		synctest.Wait()
		p.clk.hold.Store(nil)
	}
	if gate != nil && gate.Waiting() > 0 {
		// The clock moves, and the others start, while it is held.
		h.Clk.Add(rd.during)
		for _, c := range calls {
			p.start(k, c, begin)
		}
		close(begin)
		gate.Release()
		rd.during, begin = 0, make(chan struct{})
	} else {
		if gate != nil {
			gate.Release()
		}
		for _, c := range calls {
			p.start(k, c, begin)
		}
		synctest.Wait() // every caller waits at the start line
	}
	for _, e := range rd.ends {
		run := p.runs[e.call-1]
		run.ended, run.cancel, run.out = true, e.cancel, e.out
		if e.cancel {
			run.stop()
			if run.call.deaf {
				run.gate.Release()
			}
		} else {
			run.gate.Release()
		}
	}
	close(begin)
	if rd.during > 0 {
		// As call at's fn returns, unless a held fn runs: a breaker that
		// holds its lock while fn runs would keep call at waiting on it.
		held := false
		for _, run := range p.runs[:first] {
			held = held || (run.call.held && !run.ended && run.gate.Entered() > 0)
		}
		if !held {
			h.IfItHangs("round %d: call %d never returned, nor did its fn, although it returns at once: Do and "+
				"State never wait (a call stuck on the breaker's mutex: some path returns without unlocking it)", k, first+rd.at+1)
			<-p.runs[first+rd.at].reached
		}
		h.Clk.Add(rd.during) // while they call
	}
	if stuck := h.Settle(); stuck != nil {
		running := 0
		for _, run := range p.runs {
			if run.gate != nil && run.gate.Waiting() > 0 {
				running++
			}
		}
		h.Errorf("%s", testStuckOnMutex(fmt.Sprintf("round %d", k), running, stuck))
		return 0, false
	}
	for _, run := range p.runs {
		if run.c.Returned() {
			if run.c.Panicked() {
				return 0, false // reported
			}
			run.done, _ = run.c.Result()
			continue
		}
		what := ""
		switch {
		case run.call.state:
			what = "State never waits"
		case run.ended:
			what = "its fn has returned, and after fn Do only records the result"
		case !run.call.held:
			what = "its fn returns at once"
		case run.gate.Waiting() == 0:
			what = "it neither ran fn nor was rejected: Do never waits to let a call through or turn it away"
		default:
			continue // held in its fn
		}
		h.Errorf("round %d: call %d did not return, although %s", k, run.n, what)
		return 0, false
	}
	// The test's own State, after everything settled: the round's end.
	own := &testRaceRun{round: k, call: testRaceCall{state: true}}
	leave := p.enter(own)
	own.done.saw = p.b.State()
	leave()
	p.own = own
	return own.done.saw, true
}

// unwind ends every held fn after a failure, and lets the calls run out.
func (p *testRacePlayer) unwind() {
	for _, run := range p.runs {
		if run.stop != nil {
			run.stop()
		}
		if run.gate != nil {
			run.gate.Release()
		}
	}
	for i := 0; i < 100 && p.h.Settle() != nil; i++ {
		p.h.Clk.Add(time.Hour)
	}
}

// testRaceLegal is the README's transitions, bonuses included.
var testRaceLegal = []testChange{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Closed}, {HalfOpen, Open}}

// testRaceMistake names the mistake, first words of every failure about
// the pairs.
const testRaceMistake = "OnStateChange got a pair that is not the transition the breaker made"

const testRaceFix = "pass the hook the from and to you decided under the lock, not a state read again after unlocking " +
	"(State() or a second locked read): another goroutine may have moved the breaker in between, and its change " +
	"reaches the hook by its own call"

// what says what call run is, for the messages.
func (run *testRaceRun) what() string {
	switch {
	case run.n == 0:
		return "the test's State() after the round"
	case run.call.state:
		return fmt.Sprintf("call %d (State)", run.n)
	case run.call.held && run.ended && run.cancel && !run.call.deaf:
		return fmt.Sprintf("call %d (Do, fn held, then cancelled: it returned the ctx's error)", run.n)
	case run.call.held && run.ended:
		return fmt.Sprintf("call %d (Do, fn held, then %s)", run.n, run.out.how)
	case run.call.held:
		return fmt.Sprintf("call %d (Do, fn held)", run.n)
	}
	return fmt.Sprintf("call %d (Do, fn %s)", run.n, run.out.how)
}

// counts is what fn's end counts as, for the check of a call's pairs:
// testSuccess for nil, testFailure for a failure fn returns, else
// testAnswer (a cancellation, an answer, a panic: what those count as is
// the business of other tests, not of the hook's).
func (run *testRaceRun) counts() int {
	switch {
	case run.cancel && !run.call.deaf:
		return testAnswer // a cancellation: R6's own tests check that it counts for nothing
	case run.out.kind == testSuccess:
		return testSuccess
	case run.out.kind == testFailure && run.out.panic == nil:
		return testFailure
	}
	return testAnswer
}

// check checks the hooks of round k, which took the breaker from from (what
// State said before it) to to (what State said after it).
func (p *testRacePlayer) check(k int, from, to State) bool {
	h := p.h
	p.mu.Lock()
	hooks := slices.Clone(p.hooks)
	p.mu.Unlock()
	where := fmt.Sprintf("round %d", k)
	// Where each ran.
	for _, hc := range hooks {
		switch {
		case hc.run == nil:
			h.Errorf("%s: OnStateChange(%v, %v) ran on goroutine %d, where no call of Do or State was in progress: "+
				"call the hook on the goroutine of the Do or State that made the transition, before that call returns "+
				"(not with go, not from a goroutine or a timer of the breaker's own)", where, hc.from, hc.to, hc.g)
			return false
		case hc.phase == testRaceInFn:
			h.Errorf("%s: OnStateChange(%v, %v) ran on the goroutine of %s while its fn was running: the hook runs on "+
				"the goroutine of the call that made the transition, in Do or State, never from inside another call's fn",
				where, hc.from, hc.to, hc.run.what())
			return false
		}
	}
	// Each pair a transition.
	for _, hc := range hooks {
		if !slices.Contains(testRaceLegal, hc.testChange) {
			h.Errorf("%s (%v, %v), on the goroutine of %s in %s: the breaker has no such transition (it has %v): "+
				"%s.", testRaceMistake, hc.from, hc.to, hc.run.what(), where, testRaceLegal, testRaceFix)
			return false
		}
	}
	// Each call's pairs, what its own steps can make.
	for _, run := range append(p.runs[:len(p.runs):len(p.runs)], p.own) {
		if run.round != k && !run.ended {
			continue
		}
		p.mu.Lock()
		pairs, when := slices.Clone(run.hooks), slices.Clone(run.when)
		run.hooks, run.when = nil, nil
		p.mu.Unlock()
		if msg := run.wrongPairs(pairs, when); msg != "" {
			h.Errorf("%s: %s got %s: %s.", testRaceMistake, run.what(), msg, testRaceFix)
			return false
		}
	}
	// A path from from to to, through every state a caller saw.
	bal := map[State]int{from: 1}
	bal[to]--
	for _, hc := range hooks {
		bal[hc.from]--
		bal[hc.to]++
	}
	var pairs []string
	for _, hc := range hooks {
		pairs = append(pairs, hc.testChange.String())
	}
	seen := fmt.Sprintf("%d pairs, in the order they reached the hook: %v", len(hooks), pairs)
	if len(hooks) == 0 {
		seen = "no pair at all"
	}
	for _, st := range []State{Closed, Open, HalfOpen} {
		if bal[st] != 0 {
			h.Errorf("%s: before %s State() said %v, after it %v, and the hook got %s; in any order they do not lead "+
				"from %v to %v (%v is entered %d more times than it is left, counting the start and the end): %s.",
				testRaceMistake, where, from, to, seen, from, to, st, bal[st], testRaceFix)
			return false
		}
	}
	reached := map[State]bool{from: true}
	for grew := true; grew; {
		grew = false
		for _, hc := range hooks {
			if reached[hc.from] != reached[hc.to] {
				reached[hc.from], reached[hc.to], grew = true, true, true
			}
		}
	}
	for _, hc := range hooks {
		if !reached[hc.from] {
			h.Errorf("%s: before %s State() said %v, after it %v, and the hook got %s; %v is never reached from %v: %s.",
				testRaceMistake, where, from, to, seen, hc.testChange, from, testRaceFix)
			return false
		}
	}
	for _, run := range p.runs {
		if run.round != k {
			continue
		}
		saw, how := run.done.saw, "State() returned"
		switch {
		case run.call.state:
		case run.done.entered:
			continue
		case errors.Is(run.done.err, ErrOpen):
			saw, how = Open, "Do was rejected with ErrOpen"
		case errors.Is(run.done.err, ErrTooManyRequests):
			saw, how = HalfOpen, "Do was rejected with ErrTooManyRequests"
		default:
			continue
		}
		if saw != from && !slices.ContainsFunc(hooks, func(hc testRaceHook) bool { return hc.to == saw }) {
			h.Errorf("%s: in %s, for %s, %s, so the breaker was %v, but it was %v before the round and the hook got %s, "+
				"none into %v: a transition reached the hook with another pair, or not at all: %s.",
				testRaceMistake, where, run.what(), how, saw, from, seen, saw, testRaceFix)
			return false
		}
	}
	return true
}

// wrongPairs says what is wrong with the pairs the goroutine of run got
// (when: the phase of the call at each), or "".
func (run *testRaceRun) wrongPairs(pairs []testChange, when []int) string {
	move := testChange{Open, HalfOpen}
	if run.call.state {
		if len(pairs) == 0 || (len(pairs) == 1 && pairs[0] == move) {
			return ""
		}
		return fmt.Sprintf("%v, while State can make only the lazy move %v, once", pairs, move)
	}
	var before, after []testChange
	for i, c := range pairs {
		if when[i] == testRaceBefore {
			before = append(before, c)
		} else {
			after = append(after, c)
		}
	}
	if len(before) > 1 || (len(before) == 1 && before[0] != move) {
		return fmt.Sprintf("%v before its fn ran (or with no fn run), where Do can make only the lazy move %v, once", before, move)
	}
	moves, other := 0, []testChange(nil)
	for _, c := range after {
		if c == move {
			moves++
		} else {
			other = append(other, c)
		}
	}
	switch {
	case moves > 1 || len(other) > 1:
		return fmt.Sprintf("%v after its fn ended, where Do records one result: at most the lazy move %v and one "+
			"transition that result makes", after, move)
	case len(other) == 0:
		return ""
	}
	c := other[0]
	switch counts := run.counts(); {
	case counts == testSuccess && c.to == Open:
		return fmt.Sprintf("%v after its fn succeeded: a success never opens the breaker", c)
	case counts == testFailure && c.to == Closed:
		return fmt.Sprintf("%v after its fn failed: a failure never closes the breaker", c)
	}
	return ""
}

// testDrawRace draws a breaker and cycles of rounds of callers at once
// around each transition: failures, then the one that trips the breaker,
// held right after it read the clock while others call and the clock
// moves a whole open period; the end of the open period, with callers
// calling State and probes that succeed, fail or are held; then the held
// probes end while new callers arrive, and fail or succeed. The clock
// moves a whole open period while some rounds' callers call, right as one
// of their fns returns.
func testDrawRace(r *rapid.T) testRaceScenario {
	s := testRaceScenario{isF: rapid.Bool().Draw(r, "IsFailure")}
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	timeout := rapid.SampledFrom([]time.Duration{time.Second, 10 * time.Second}).Draw(r, "OpenTimeout")
	s.set.OpenTimeout = timeout
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 3).Draw(r, "HalfOpenMaxRequests")
	need := s.set.MaxFailures // failures in a row that trip it
	if rapid.IntRange(0, 3).Draw(r, "FailureRate") == 0 {
		s.set.FailureRate = rapid.SampledFrom([]float64{0.5, 1}).Draw(r, "rate")
		s.set.MinRequests = rapid.IntRange(1, 3).Draw(r, "MinRequests")
		s.set.Window = rapid.SampledFrom([]time.Duration{0, timeout}).Draw(r, "Window")
		need = s.set.MinRequests
	}
	period := timeout
	if rapid.IntRange(0, 3).Draw(r, "RetryAfter") == 0 {
		s.marked = rapid.SampledFrom([]time.Duration{timeout / 2, 2 * timeout}).Draw(r, "Retry-After")
		period = max(period, s.marked)
	}
	d := &testRaceDraw{r: r}
	cycles := rapid.IntRange(1, 2).Draw(r, "cycles")
	for i := range cycles {
		// The failures before the one that trips the breaker (if it is
		// closed), with calls of State and cancellations.
		d.round(0, 0, 0)
		for range need - 1 {
			d.add(testRaceCall{out: testDrawOutcome(r, "failure", testFailure)})
		}
		for range rapid.IntRange(0, 2).Draw(r, "other calls") {
			if rapid.Bool().Draw(r, "State") {
				d.add(testRaceCall{state: true})
			} else {
				d.add(testRaceCall{out: testDrawOutcome(r, "cancelled", testCancelled)})
			}
		}
		if len(d.last().calls) == 0 {
			d.rounds = d.rounds[:len(d.rounds)-1]
		}
		// The failure that trips it, held after it read the clock, while
		// the others call and the clock moves a whole open period.
		d.round(0, 0, 0)
		d.last().hold, d.last().during = true, period
		d.add(testRaceCall{out: testDrawOutcome(r, "tripping failure", testReturned)})
		d.calls(rapid.IntRange(1, 4).Draw(r, "callers"), true)
		// The end of the open period.
		if rapid.Bool().Draw(r, "the period ends while they call") {
			d.round(period-1, 0, 0)
			d.now = 1
		} else {
			d.round(period, 0, period)
		}
		d.calls(rapid.IntRange(2, 6).Draw(r, "callers"), true)
		// The held fns end, new callers arrive.
		ending := len(d.held)
		if i < cycles-1 {
			ending = rapid.IntRange(0, ending).Draw(r, "held fns that end")
		}
		d.round(0, ending, period)
		d.calls(rapid.IntRange(1, 4).Draw(r, "callers"), i < cycles-1)
	}
	if len(d.held) > 0 {
		d.round(0, len(d.held), 0)
	}
	s.rounds = d.rounds
	return s
}

// testRaceDraw builds the rounds of a scenario.
type testRaceDraw struct {
	r      *rapid.T
	rounds []testRaceRound
	held   []int // calls held and not ended yet
	n      int   // calls so far
	now    time.Duration
}

func (d *testRaceDraw) last() *testRaceRound { return &d.rounds[len(d.rounds)-1] }

// round starts a round after the clock moved by advance: the first ending
// held fns end, in a drawn order and way; the clock may move by during
// while the round's calls call (decided once they are added).
func (d *testRaceDraw) round(advance time.Duration, ending int, during time.Duration) {
	r := d.r
	rd := testRaceRound{advance: advance}
	if during > 0 && rapid.Bool().Draw(r, "the clock moves while they call") {
		rd.during = during
	}
	d.held = rapid.Permutation(d.held).Draw(r, "order the held fns end in")
	for _, c := range d.held[:ending] {
		e := testRaceEnd{call: c, cancel: rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("held call %d cancelled", c)) == 0}
		e.out = testDrawOutcome(r, fmt.Sprintf("held call %d", c), testSuccess, testSuccess, testFailure, testFailure, testAnswer)
		rd.ends = append(rd.ends, e)
	}
	d.held = d.held[ending:]
	d.rounds = append(d.rounds, rd)
}

// calls adds n calls to the last round: State, Do with an fn that ends at
// once in any way, or (if hold) that waits; and picks the call as whose
// fn returns the clock moves, if it does.
func (d *testRaceDraw) calls(n int, hold bool) {
	r := d.r
	for range n {
		c := testRaceCall{}
		switch kind := rapid.IntRange(0, 5).Draw(r, "call"); {
		case kind == 0:
			c.state = true
		case kind == 1 && hold:
			c.held = true
			c.deaf = rapid.Bool().Draw(r, "deaf")
		default:
			c.out = testDrawOutcome(r, "call", testSuccess, testSuccess, testFailure, testFailure, testAnswer, testCancelled)
		}
		d.add(c)
	}
	rd := d.last()
	if rd.hold {
		return
	}
	if d.now > 0 {
		rd.during, d.now = d.now, 0
	}
	var at []int
	for i, c := range rd.calls {
		if !c.held {
			at = append(at, i)
		}
	}
	if rd.during > 0 && len(at) > 0 {
		rd.at = rapid.SampledFrom(at).Draw(r, "the clock moves as this call's fn returns")
	} else {
		rd.during = 0
	}
}

// add adds a call to the last round.
func (d *testRaceDraw) add(c testRaceCall) {
	d.n++
	if c.held {
		d.held = append(d.held, d.n)
	}
	rd := d.last()
	rd.calls = append(rd.calls, c)
}

func TestR6_ExploreHookPairsAreTheTransitionsMade(t *testing.T) {
	katatest.Explore(t, 4, testDrawRace, testRacePlay)
}
