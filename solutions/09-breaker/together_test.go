package breaker

// Many callers at once: goroutines call Do and State on one breaker
// together, while fns held from earlier rounds end in a drawn order, and
// the clock moves between rounds. Whatever the schedule, what they saw must
// be what the README's breaker gives when it takes one step at a time
// (katatest.History and h.Linearizable, on porcupine). A Do is two steps:
// the breaker lets the call through or rejects it (between Do's start and
// fn's start, or Do's return), then it records fn's result (between fn's
// return and Do's return).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLinMaxCalls bounds the calls of a scenario: the model keeps the
// generation that let each one through.
const testLinMaxCalls = 32

// testLinCall is one goroutine of a round: State, or Do with an fn that
// ends at once as out says or waits until a later round ends it.
type testLinCall struct {
	state bool
	held  bool
	out   testOutcome
}

// testLinEnd ends the fn of a held call, if it ran.
type testLinEnd struct {
	call int // the call's number in the scenario, from 1
	out  testOutcome
}

// testLinRound is what happens at once, after the clock moved.
type testLinRound struct {
	advance time.Duration
	ends    []testLinEnd
	calls   []testLinCall
}

type testLinScenario struct {
	set    Settings
	isF    bool
	rounds []testLinRound
}

func (s testLinScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, Settings{MaxFailures: %d, OpenTimeout: %v, HalfOpenMaxRequests: %d",
		s.set.MaxFailures, s.set.OpenTimeout, s.set.HalfOpenMaxRequests)
	if s.isF {
		b.WriteString(", IsFailure: false for httpError codes below 500")
	}
	b.WriteString("})")
	var now time.Duration
	n := 0
	for i, rd := range s.rounds {
		now += rd.advance
		fmt.Fprintf(&b, "\n\tround %d", i+1)
		if rd.advance > 0 {
			fmt.Fprintf(&b, ", after the clock moved %v", rd.advance)
		}
		fmt.Fprintf(&b, " (t=%v), all at once:", now)
		for _, e := range rd.ends {
			fmt.Fprintf(&b, "\n\t\tthe held fn of call %d %s (if it ran)", e.call, e.out.how)
		}
		for _, c := range rd.calls {
			n++
			switch {
			case c.state:
				fmt.Fprintf(&b, "\n\t\tcall %d: State()", n)
			case c.held:
				fmt.Fprintf(&b, "\n\t\tcall %d: Do, fn waits", n)
			default:
				fmt.Fprintf(&b, "\n\t\tcall %d: Do, fn %s", n, c.out.how)
			}
		}
	}
	return b.String()
}

// The operations of the history.
type (
	// testLinAdmitIn: Do lets call n through (output testLinThrough) or
	// rejects it (output: the error's name).
	testLinAdmitIn struct {
		call int
		now  time.Duration
	}
	// testLinRecordIn: fn of call n ended as how says, which counts as
	// counts; Do records it and returns.
	testLinRecordIn struct {
		call   int
		counts int
		how    string
		now    time.Duration
	}
	// testLinStateIn: State(); output: the State.
	testLinStateIn struct{ now time.Duration }
)

const testLinThrough = "let through"

// testLinRejection names the error Do returned without running fn.
func testLinRejection(err error) string {
	switch {
	case errors.Is(err, ErrOpen):
		return "ErrOpen"
	case errors.Is(err, ErrTooManyRequests):
		return "ErrTooManyRequests"
	}
	return testDescribeErr(err)
}

// testLinState is the README's breaker between two steps.
type testLinState struct {
	state     State
	gen       int
	failures  int
	probes    int
	successes int
	openUntil time.Duration
	through   [testLinMaxCalls]int // the generation that let each call through, plus 1; 0: not let through
}

// testLinModel is the README's breaker, one step at a time.
func testLinModel(s Settings) porcupine.Model {
	set := func(st testLinState, to State) testLinState {
		st.state, st.gen = to, st.gen+1
		st.failures, st.probes, st.successes = 0, 0, 0
		return st
	}
	expire := func(st testLinState, now time.Duration) testLinState {
		if st.state == Open && now >= st.openUntil {
			return set(st, HalfOpen)
		}
		return st
	}
	open := func(st testLinState, now time.Duration) testLinState {
		st = set(st, Open)
		st.openUntil = now + s.OpenTimeout
		return st
	}
	return porcupine.Model{
		Init: func() any { return testLinState{} },
		Step: func(state, input, output any) (bool, any) {
			st := state.(testLinState)
			switch in := input.(type) {
			case testLinStateIn:
				st = expire(st, in.now)
				return output == st.state, st
			case testLinAdmitIn:
				st = expire(st, in.now)
				want := testLinThrough
				switch {
				case st.state == Open:
					want = "ErrOpen"
				case st.state == HalfOpen && st.probes >= s.HalfOpenMaxRequests:
					want = "ErrTooManyRequests"
				case st.state == HalfOpen:
					st.probes++
				}
				if want == testLinThrough {
					st.through[in.call-1] = st.gen + 1
				}
				return output == want, st
			case testLinRecordIn:
				if st.through[in.call-1] != st.gen+1 {
					return true, st // let through in an earlier generation: counts for nothing
				}
				switch st.state {
				case Closed:
					switch in.counts {
					case testSuccess:
						st.failures = 0
					case testFailure:
						if st.failures++; st.failures >= s.MaxFailures {
							st = open(st, in.now)
						}
					}
				case HalfOpen:
					st.probes--
					switch in.counts {
					case testSuccess:
						if st.successes++; st.successes >= s.HalfOpenMaxRequests {
							st = set(st, Closed)
						}
					case testFailure:
						st = open(st, in.now)
					}
				}
				return true, st
			}
			return false, st
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case testLinStateIn:
				return fmt.Sprintf("t=%v: State() returned %v", in.now, output)
			case testLinAdmitIn:
				if output == testLinThrough {
					return fmt.Sprintf("t=%v: call %d: Do let the call through (fn started)", in.now, in.call)
				}
				return fmt.Sprintf("t=%v: call %d: Do returned %v without calling fn", in.now, in.call, output)
			case testLinRecordIn:
				counts := map[int]string{testSuccess: "a success", testFailure: "a failure"}[in.counts]
				return fmt.Sprintf("t=%v: call %d: fn %s, which counts as %s; then Do returned", in.now, in.call, in.how, counts)
			}
			return fmt.Sprint(input)
		},
	}
}

// testLinRun is a goroutine of the scenario.
type testLinRun struct {
	c       *katatest.Call[struct{}]
	held    bool
	ended   bool
	entered chan struct{}       // closed when a held fn starts
	end     chan testLinRelease // tells a held fn how to end
	cancel  context.CancelFunc
}

type testLinRelease struct {
	out   testOutcome
	now   time.Duration
	round int
}

type testLinPlayer struct {
	h    *katatest.H
	b    *Breaker
	isF  bool
	hi   katatest.History
	runs []*testLinRun
}

func testLinPlay(h *katatest.H, s testLinScenario) {
	p := &testLinPlayer{h: h, isF: s.isF}
	set := s.set
	if s.isF {
		set.IsFailure = testIsFailure
	}
	set.OnStateChange = func(from, to State) {} // calling a nil hook is R6's business
	p.b = New(h.Clk, set)
	defer h.Advance(24 * time.Hour) // no open period outlives the scenario
	first := 0
	for i, rd := range s.rounds {
		if rd.advance > 0 {
			h.Advance(rd.advance)
		}
		now := h.Elapsed()
		// The new calls start first, then the held fns end: the callers
		// arrive while the probes (and older calls) record their results.
		for _, c := range rd.calls {
			p.start(c, now, i+1)
		}
		for _, e := range rd.ends {
			run := p.runs[e.call-1]
			run.ended = true
			run.end <- testLinRelease{e.out, now, i + 1}
		}
		if !p.settled(i+1, first) {
			return
		}
		first = len(p.runs)
	}
	p.linearizable(s)
}

// linearizable checks the history against the model. The rounds are
// apart (each settles before the next starts), so a failure shows the
// first round that no order explains, and only its calls.
func (p *testLinPlayer) linearizable(s testLinScenario) {
	model := testLinModel(s.set)
	ops := p.hi.Operations()
	if porcupine.CheckOperations(model, ops) {
		p.h.Linearizable(model, &p.hi, "Do and State")
		return
	}
	for k := 1; k <= len(s.rounds); k++ {
		var upTo []porcupine.Operation
		var lines []string
		clients := map[int]bool{}
		for _, op := range ops {
			if op.Metadata.(int) > k {
				continue
			}
			upTo = append(upTo, op)
			if op.Metadata.(int) == k {
				clients[op.ClientId] = true
				lines = append(lines, fmt.Sprintf("goroutine %d: %s (started at step %d, returned at step %d)",
					op.ClientId+1, model.DescribeOperation(op.Input, op.Output), op.Call, op.Return))
			}
		}
		if k < len(s.rounds) && porcupine.CheckOperations(model, upTo) {
			continue
		}
		before := "the rounds before it are explained"
		if k == 1 {
			before = "it is the first"
		}
		p.h.Errorf("No order of the calls explains what %d goroutines calling Do and State at once saw in round %d: "+
			"the README's breaker, taking the calls one at a time, each between its start and its return, cannot "+
			"give these results (a Do is two steps: the breaker lets the call through or rejects it, then it "+
			"records fn's result, which counts only in the generation that let the call through; half-open, at "+
			"most HalfOpenMaxRequests probes run at once); %s. The calls of round %d, in the order they started:\n%s",
			len(clients), k, before, k, strings.Join(lines, "\n"))
		return
	}
}

// start starts call (its number is len(p.runs)+1) on a goroutine of its own.
func (p *testLinPlayer) start(c testLinCall, now time.Duration, round int) {
	n := len(p.runs) + 1
	ctx, cancel := context.WithCancel(context.Background())
	run := &testLinRun{held: c.held, entered: make(chan struct{}), end: make(chan testLinRelease, 1), cancel: cancel}
	p.runs = append(p.runs, run)
	if c.state {
		run.c = katatest.Go(p.h, func() (struct{}, error) {
			defer cancel()
			done := p.hi.CallWith(n-1, testLinStateIn{now}, round)
			done(p.b.State())
			return struct{}{}, nil
		})
		return
	}
	run.c = katatest.Go(p.h, func() (struct{}, error) {
		defer cancel()
		admitted := p.hi.CallWith(n-1, testLinAdmitIn{n, now}, round)
		var recorded func(any)
		ran, threw := false, false
		defer func() {
			if recorded != nil {
				recorded(nil) // Do returned, or panicked on
			}
			if r := recover(); r != nil && !threw {
				panic(r)
			}
		}()
		err := p.b.Do(ctx, func(ctx context.Context) error {
			ran = true
			admitted(testLinThrough)
			out, at, in := c.out, now, round
			if c.held {
				close(run.entered)
				rel := <-run.end
				out, at, in = rel.out, rel.now, rel.round
			}
			recorded = p.hi.CallWith(n-1, testLinRecordIn{n, out.counts(p.isF), out.how, at}, in)
			if out.panic != nil {
				threw = true
				panic(out.panic())
			}
			return out.err(ctx)
		})
		if !ran {
			admitted(testLinRejection(err))
		}
		return struct{}{}, nil
	})
}

// settled lets round k play out, and checks that every call that can
// return did: the calls started in the round (from first) and the held
// calls it ended.
func (p *testLinPlayer) settled(k, first int) bool {
	h := p.h
	if stuck := h.Settle(); stuck != nil {
		running := 0
		for _, run := range p.runs {
			select {
			case <-run.entered:
				if !run.ended {
					running++
				}
			default:
			}
		}
		h.Errorf("%s", testStuckOnMutex(fmt.Sprintf("round %d", k), running, stuck))
		p.unwind()
		return false
	}
	for i, run := range p.runs {
		entered := false
		select {
		case <-run.entered:
			entered = true
		default:
		}
		switch {
		case run.c.Returned():
		case i >= first && !run.held:
			h.Errorf("round %d: call %d did not return, although its fn returns at once: Do never waits "+
				"(it lets a call through or rejects it at once)", k, i+1)
		case i >= first && !entered:
			h.Errorf("round %d: call %d neither ran fn nor returned: Do never waits (it lets a call through or "+
				"rejects it at once)", k, i+1)
		case run.ended:
			h.Errorf("round %d: the fn of call %d returned, but Do did not: after fn, Do only records the result "+
				"and returns", k, i+1)
		default:
			continue
		}
		if h.Failed() {
			p.unwind()
			return false
		}
	}
	return true
}

// unwind ends every held fn and lets the calls run out, after a failure.
func (p *testLinPlayer) unwind() {
	for _, run := range p.runs {
		run.cancel()
		if run.held && !run.ended {
			run.ended = true
			run.end <- testLinRelease{out: testOutcomesOf(nil, "", testSuccess)[0]}
		}
	}
	for i := 0; i < 100 && p.h.Settle() != nil; i++ {
		p.h.Clk.Add(time.Hour)
	}
}

// testDrawLin draws a scenario in cycles of rounds: calls at once (some
// held) on a breaker that is usually closed, enough failures at once to
// trip it, a whole open period and more callers at once than probes, then
// new callers arriving while probes and older calls end in any order and
// in every way. Each round may also ask State, and the last one ends
// every fn still held.
func testDrawLin(r *rapid.T) testLinScenario {
	s := testLinScenario{isF: rapid.Bool().Draw(r, "IsFailure")}
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	s.set.OpenTimeout = 10 * time.Second
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 3).Draw(r, "HalfOpenMaxRequests")
	d := &testLinDraw{r: r}
	for range rapid.IntRange(1, 2).Draw(r, "cycles") {
		if rapid.Bool().Draw(r, "a round before the trip") {
			d.round(rapid.SampledFrom([]time.Duration{0, 5 * time.Second, 10 * time.Second}).Draw(r, "clock moves"),
				rapid.IntRange(0, len(d.held)).Draw(r, "held fns that end"), rapid.IntRange(1, 3).Draw(r, "calls"), 2)
		}
		d.round(0, 0, 0, 0)
		for range s.set.MaxFailures + rapid.IntRange(0, 1).Draw(r, "more failures") {
			d.add(testLinCall{out: testDrawOutcome(r, "failure", testFailure)})
		}
		// A whole open period, then more callers than probes.
		d.round(s.set.OpenTimeout, 0, 0, 0)
		for range s.set.HalfOpenMaxRequests + rapid.IntRange(0, 1).Draw(r, "more callers") {
			d.add(testLinCall{held: true})
		}
		// New callers, and the probes end (with older calls).
		d.round(0, rapid.IntRange(1, len(d.held)).Draw(r, "held fns that end"), rapid.IntRange(2, 4).Draw(r, "calls"), 1)
	}
	d.round(rapid.SampledFrom([]time.Duration{0, 10 * time.Second}).Draw(r, "clock moves"), len(d.held), 0, 0)
	d.add(testLinCall{state: true})
	// Once all is settled, callers again: what the races before left
	// behind shows in how they are let through.
	d.round(0, 0, rapid.IntRange(1, 2).Draw(r, "calls after it all"), 0)
	d.add(testLinCall{state: true})
	s.rounds = d.rounds
	return s
}

// testLinDraw builds the rounds of a scenario.
type testLinDraw struct {
	r      *rapid.T
	rounds []testLinRound
	held   []int // calls held and not ended yet
	n      int   // calls so far
}

// round starts a round after the clock moved by advance: ending held fns
// end (in a drawn order, in every way) while calls new ones start, of
// which about 1 in hold are held (none if hold is 0).
func (d *testLinDraw) round(advance time.Duration, ending, calls, hold int) {
	r := d.r
	rd := testLinRound{advance: advance}
	d.held = rapid.Permutation(d.held).Draw(r, "order the held fns end in")
	for _, c := range d.held[:ending] {
		rd.ends = append(rd.ends, testLinEnd{c, testDrawOutcome(r, fmt.Sprintf("held call %d", c),
			testSuccess, testFailure, testFailure, testAnswer)})
	}
	d.held = d.held[ending:]
	d.rounds = append(d.rounds, rd)
	for range calls {
		c := testLinCall{}
		switch k := rapid.IntRange(0, 2*hold+1).Draw(r, "call"); {
		case k == 0:
			c.state = true
		case hold > 0 && k <= hold:
			c.held = true
		default:
			c.out = testDrawOutcome(r, "call", testSuccess, testFailure, testFailure, testAnswer)
		}
		d.add(c)
	}
}

// add adds a call to the last round.
func (d *testLinDraw) add(c testLinCall) {
	d.n++
	if c.held {
		d.held = append(d.held, d.n)
	}
	rd := &d.rounds[len(d.rounds)-1]
	rd.calls = append(rd.calls, c)
}

func TestR5_ExploreCallsAtOnceActOneAtATime(t *testing.T) {
	katatest.Explore(t, 8, testDrawLin, testLinPlay)
	// And always, shaken: the probe closes the breaker as new callers
	// arrive, the first of which fails and trips it again at once; then,
	// with all settled, the breaker is open and lets no one through.
	ok := testOutcome{how: "returns nil", kind: testSuccess, err: func(context.Context) error { return nil }}
	fail := testOutcome{how: `returns errors.New("503 service unavailable")`, kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	reclose := testLinScenario{
		set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1},
		rounds: []testLinRound{
			{calls: []testLinCall{{out: fail}}},
			{advance: 10 * time.Second, calls: []testLinCall{{held: true}}},
			{ends: []testLinEnd{{call: 2, out: ok}}, calls: []testLinCall{{out: fail}, {out: fail}}},
			{calls: []testLinCall{{out: ok}, {out: ok}, {state: true}}},
		},
	}
	katatest.Repeat(t, 12, func(h *katatest.H) { testLinPlay(h, reclose) })
}
