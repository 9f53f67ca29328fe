package breaker

// Breakers side by side: a process keeps one breaker per dependency, and
// each is a state machine of its own. Two or three breakers with different
// settings are driven interleaved, with calls in flight on each while
// another trips, turns half-open, closes or reopens, and each must do
// exactly what it does alone, with the same calls at the same moments: the
// same answers, the same states, the same probes' places, the same hook
// calls. Anything the breakers share (a package-level generation counter,
// map, sync.Once, hook or clock reading) shows as a difference.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testSideKind is what one step of a side-by-side scenario does.
type testSideKind int

const (
	testSideStart   testSideKind = iota // a held call starts on breaker b
	testSideEnd                         // held call k of breaker b ends with out
	testSideCall                        // a call on breaker b returns out at once
	testSideState                       // State() of breaker b
	testSideAdvance                     // the clock moves d
)

// testSideStep is one step; b is the breaker it acts on.
type testSideStep struct {
	kind testSideKind
	b    int
	k    int   // testSideEnd: which of b's held calls (numbered from 1 in start order)
	out  error // testSideEnd, testSideCall: what fn returns (nil, testErrDown, context.Canceled)
	d    time.Duration
}

// testSide is a scenario: the breakers' settings and the steps.
type testSide struct {
	sets  []Settings
	steps []testSideStep
}

func testSideName(b int) string { return string(rune('A' + b)) }

func testSideOut(err error) string {
	switch {
	case err == nil:
		return "nil (a success)"
	case errors.Is(err, context.Canceled):
		return "context.Canceled (counts for nothing)"
	}
	return fmt.Sprintf("%q (a failure)", err)
}

func (st testSideStep) String() string {
	name := testSideName(st.b)
	switch st.kind {
	case testSideStart:
		return fmt.Sprintf("a call starts on %s and is held", name)
	case testSideEnd:
		return fmt.Sprintf("%s's held call %d ends: fn returns %s", name, st.k, testSideOut(st.out))
	case testSideCall:
		return fmt.Sprintf("a call on %s, fn returns %s at once", name, testSideOut(st.out))
	case testSideState:
		return fmt.Sprintf("State() of %s", name)
	}
	return fmt.Sprintf("the clock moves %v", st.d)
}

func testSideSettings(s Settings) string {
	return fmt.Sprintf("MaxFailures %d, OpenTimeout %v, HalfOpenMaxRequests %d", s.MaxFailures, s.OpenTimeout, s.HalfOpenMaxRequests)
}

func (s testSide) String() string {
	var b strings.Builder
	for i, set := range s.sets {
		fmt.Fprintf(&b, "breaker %s: %s\n", testSideName(i), testSideSettings(set))
	}
	for i, st := range s.steps {
		fmt.Fprintf(&b, "%d. %v\n", i+1, st)
	}
	return b.String()
}

// testDrawSide draws two or three breakers with different settings and a
// run of steps that hop between them: failures that trip one while calls
// of another are in flight, the clock moving across open periods, probes
// held while another breaker changes state, ends of every kind.
func testDrawSide(r *rapid.T) testSide {
	var s testSide
	n := rapid.IntRange(2, 3).Draw(r, "breakers")
	for range n {
		var set Settings
		for range 4 { // different settings, as a rule; the same would have to work too
			set = Settings{
				MaxFailures:         rapid.IntRange(1, 3).Draw(r, "MaxFailures"),
				OpenTimeout:         time.Duration(rapid.IntRange(1, 3).Draw(r, "OpenTimeout s")) * time.Second,
				HalfOpenMaxRequests: rapid.IntRange(1, 2).Draw(r, "HalfOpenMaxRequests"),
			}
			if !slices.ContainsFunc(s.sets, func(o Settings) bool { return testSideSettings(o) == testSideSettings(set) }) {
				break
			}
		}
		s.sets = append(s.sets, set)
	}
	held := make([][]bool, n) // held[b][k-1]: call k of b not yet ended
	fail := func(b int) testSideStep { return testSideStep{kind: testSideCall, b: b, out: testErrDown} }
	for round := range rapid.IntRange(2, 4).Draw(r, "rounds") {
		// The first round starts from closed breakers: y trips while x's
		// calls are in flight, and those calls' failures count towards x's
		// own trip.
		first := round == 0
		// Calls in flight on x while y changes state, then they end.
		x := rapid.IntRange(0, n-1).Draw(r, "breaker with calls in flight")
		y := (x + rapid.IntRange(1, n-1).Draw(r, "breaker that changes state")) % n
		if rapid.Bool().Draw(r, "the clock moves first") {
			s.steps = append(s.steps, testSideStep{kind: testSideAdvance, d: time.Duration(rapid.IntRange(1, 3).Draw(r, "advance s")) * time.Second})
		}
		for range rapid.IntRange(1, 2).Draw(r, "held calls") {
			s.steps = append(s.steps, testSideStep{kind: testSideStart, b: x})
			held[x] = append(held[x], true)
		}
		how := 0
		if !first {
			how = rapid.IntRange(0, 2).Draw(r, "how y changes")
		}
		switch how {
		case 0: // trips if closed, reopens if half-open
			for range s.sets[y].MaxFailures {
				s.steps = append(s.steps, fail(y))
			}
		case 1: // half-opens if open
			s.steps = append(s.steps, testSideStep{kind: testSideAdvance, d: s.sets[y].OpenTimeout}, testSideStep{kind: testSideState, b: y})
		case 2: // closes if half-open
			for range s.sets[y].HalfOpenMaxRequests {
				s.steps = append(s.steps, testSideStep{kind: testSideCall, b: y})
			}
		}
		var open []int
		for k, h := range held[x] {
			if h {
				open = append(open, k+1)
			}
		}
		for _, k := range rapid.Permutation(open).Draw(r, "ends") {
			if len(open) > 2 && rapid.Bool().Draw(r, "still held") {
				continue
			}
			held[x][k-1] = false
			out := testErrDown
			if !first {
				out = rapid.SampledFrom([]error{nil, testErrDown, testErrDown, context.Canceled}).Draw(r, "end")
			}
			s.steps = append(s.steps, testSideStep{kind: testSideEnd, b: x, k: k, out: out})
		}
		if first {
			for range s.sets[x].MaxFailures - 1 {
				s.steps = append(s.steps, fail(x))
			}
		} else if rapid.Bool().Draw(r, "a failure on x after") {
			s.steps = append(s.steps, fail(x))
		}
		s.steps = append(s.steps, testSideStep{kind: testSideState, b: x}, testSideStep{kind: testSideStart, b: x})
		held[x] = append(held[x], true)
	}
	return s
}

// testSideSeen is what one breaker did at one step, and the transitions its
// OnStateChange saw then.
type testSideSeen struct {
	step int
	did  string
}

// play drives the breakers in only (indices into s.sets; the others'
// steps are skipped, the clock still moves), from a fresh start, and
// returns what each breaker did, step by step. ok is false if a call got
// stuck or panicked (reported).
func (s testSide) play(h *katatest.H, only []int) (seen map[int][]testSideSeen, ok bool) {
	rigs := map[int]*testRig{}
	heldOf := map[int][]*testHeld{}
	seen = map[int][]testSideSeen{}
	hooked := map[int]int{}
	for _, b := range only {
		rigs[b] = testNew(h, s.sets[b])
	}
	defer func() {
		for _, r := range rigs {
			for _, p := range r.held {
				p.c.Cancel()
			}
		}
		h.Settle()
	}()
	for i, st := range s.steps {
		if st.kind == testSideAdvance {
			h.Advance(st.d)
			continue
		}
		r := rigs[st.b]
		if r == nil {
			continue
		}
		step := fmt.Sprintf("step %d (%v)", i+1, st)
		var did string
		switch st.kind {
		case testSideStart:
			p := r.start(nil)
			heldOf[st.b] = append(heldOf[st.b], p)
			if !r.settle(step) {
				return nil, false
			}
			if p.running() {
				did = "let the call through (fn runs)"
			} else if err, ok := p.rejectedWith(); ok {
				did = "rejected the call with " + testSideErr(err)
			} else {
				did = "neither ran fn nor returned"
			}
		case testSideEnd:
			p := heldOf[st.b][st.k-1]
			if !p.running() {
				did = "(the call was not running)"
				break
			}
			var got error
			var ok bool
			if errors.Is(st.out, context.Canceled) {
				got, ok = p.stop(h, step)
			} else {
				got, ok = p.end(h, st.out, step)
			}
			if !ok {
				return nil, false
			}
			did = "Do returned " + testSideErr(got)
		case testSideCall:
			got, ran, ok := r.call(st.out, step)
			if !ok {
				return nil, false
			}
			if ran {
				did = "let the call through, Do returned " + testSideErr(got)
			} else {
				did = "rejected the call with " + testSideErr(got)
			}
		case testSideState:
			state, ok := r.state(step)
			if !ok {
				return nil, false
			}
			did = "State() was " + state.String()
		}
		if ch := r.changes.All(); len(ch) > hooked[st.b] {
			did += fmt.Sprintf("; OnStateChange saw %v", ch[hooked[st.b]:])
			hooked[st.b] = len(ch)
		} else {
			did += "; no state change"
		}
		seen[st.b] = append(seen[st.b], testSideSeen{i + 1, did})
	}
	return seen, true
}

func testSideErr(err error) string {
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, ErrOpen):
		return "ErrOpen"
	case errors.Is(err, ErrTooManyRequests):
		return "ErrTooManyRequests"
	}
	return fmt.Sprintf("%q", err)
}

// testPlaySide plays each breaker alone, then all of them together, and
// checks that every breaker did the same together as alone.
func testPlaySide(h *katatest.H, s testSide) {
	alone := map[int][]testSideSeen{}
	all := make([]int, len(s.sets))
	for b := range s.sets {
		all[b] = b
		seen, ok := s.play(h, []int{b})
		if !ok {
			return
		}
		alone[b] = seen[b]
	}
	together, ok := s.play(h, all)
	if !ok {
		return
	}
	for b := range s.sets {
		a, t := alone[b], together[b]
		for i := range min(len(a), len(t)) {
			if a[i] == t[i] {
				continue
			}
			var others []string
			for o := range s.sets {
				if o == b {
					continue
				}
				for _, x := range together[o] {
					if x.step < a[i].step && strings.Contains(x.did, "OnStateChange") {
						others = append(others, fmt.Sprintf("step %d: %s", x.step, x.did[strings.Index(x.did, "OnStateChange"):]))
					}
				}
			}
			h.Errorf("two breakers share state: breaker %s (%s), used alongside the others, did something else at step %d "+
				"(%v) than it does alone with the same calls at the same moments: alone it %s; alongside the others it %s. "+
				"Before that, the other breakers changed state (%s). Each breaker is a state machine of its own: "+
				"its generations, counts, probes' places, open period and hook belong to it (R5: a call's result counts "+
				"only in the generation of its own breaker that let it through). Keep all of it in the Breaker value; "+
				"nothing package-level (a generation counter, a map, a sync.Once, a hook, a clock reading) may be "+
				"shared by every breaker",
				testSideName(b), testSideSettings(s.sets[b]), a[i].step, s.steps[a[i].step-1], a[i].did, t[i].did,
				strings.Join(others, "; "))
			return
		}
	}
}

func TestR5_ExploreBreakersSideBySideShareNothing(t *testing.T) {
	katatest.Explore(t, 2, testDrawSide, testPlaySide)
}
