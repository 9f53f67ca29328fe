package fanout

// Requirements at the edges of a batch: the last calls to return fail, or
// the caller cancels while they wait, at the moment Map (or MapAll) stops
// waiting; and MapAll while the caller cancels as it is still starting
// calls. Several goroutines call at once, each with an input of its own.
//
// Each test plays fixed scenarios as the scheduler runs them, then drawn
// ones with the schedule shaken. Both, because a mistake here hangs on
// which goroutine runs first, and each kind shows a different one: left
// alone, the goroutine that the last call's wg.Done() wakes is the next to
// run, before any other goroutine that call woke, while the shaken
// schedule lets a call go on after its wg.Done() before Map reads.

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// drawFinale draws a batch whose last calls to return are the point.
// Every other call returns a result first, one group at a time. Then, at
// one instant, either the last calls return and one or several of them
// fail (with d.fail), or the caller cancels (or its deadline passes, with
// d.deadline) while they wait on their ctx, other calls that ignore it
// returning at that same instant (with d.cancel). With d.late, calls that
// ignore the cancel return after it, one at least failing.
func (d testFanDraw) drawFinale(r *rapid.T, s testFanScenario) testFanScenario {
	s.callers = rapid.IntRange(max(d.minCall, 1), d.maxCall).Draw(r, "callers")
	s.n = rapid.IntRange(max(d.minN, 1), d.maxN).Draw(r, "n")
	for i := range s.n {
		s.elems = append(s.elems, testFanElem{panic: -1,
			react: rapid.SampledFrom(d.reacts).Draw(r, fmt.Sprintf("in[%d] reaction", i)),
			text:  rapid.SampledFrom(testValues).Draw(r, fmt.Sprintf("in[%d] value", i))})
	}
	cancel := d.cancel && (!d.fail || rapid.Bool().Draw(r, "the caller cancels (else the last calls fail)"))
	late := 0
	if cancel && d.late && s.n >= 2 {
		late = rapid.IntRange(1, min(2, s.n-1)).Draw(r, "calls that ignore the cancel and return after it")
	}
	order := rapid.Permutation(seq(s.n)).Draw(r, "return order")
	k := rapid.IntRange(1, min(3, s.n-late)).Draw(r, "calls that return last, at the same instant")
	before, last, after := order[:s.n-late-k], order[s.n-late-k:s.n-late], order[s.n-late:]
	for len(before) > 0 {
		g := rapid.IntRange(1, len(before)).Draw(r, "returned together, before")
		s.steps, before = append(s.steps, before[:g]), before[g:]
	}
	fail := func(i int) {
		e := &s.elems[i]
		e.fails = true
		e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, fmt.Sprintf("in[%d] error kind", i))
		e.text = rapid.SampledFrom(testFailTexts).Draw(r, fmt.Sprintf("in[%d] error text", i))
		if e.kind == testStatusValue || e.kind == testWrappedValue {
			e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, fmt.Sprintf("in[%d] status", i))
		}
	}
	if !cancel {
		// The first of the last calls fails; the others fail too, or not.
		for j, i := range last {
			if j == 0 || rapid.Bool().Draw(r, fmt.Sprintf("in[%d] fails too", i)) {
				fail(i)
			}
		}
		s.steps = append(s.steps, last)
		return s
	}
	if d.deadline && rapid.Bool().Draw(r, "the caller's deadline passes (else it cancels)") {
		s.deadline = time.Duration(rapid.IntRange(1, 3000).Draw(r, "the caller's deadline, ms")) * time.Millisecond
	}
	// The first of the last calls waits on its ctx and returns an error
	// when it ends; the others wait on it too, or ignore it and are
	// released at the instant of the cancel, with a result or a failure.
	var honours []int
	for _, react := range d.reacts {
		if testHonours(react) {
			honours = append(honours, react)
		}
	}
	var released []int
	for j, i := range last {
		e := &s.elems[i]
		switch {
		case j == 0:
			e.react = rapid.SampledFrom([]int{testWrapsCtx, testReturnsCtx, testOwnError}).Draw(r, fmt.Sprintf("in[%d] reaction (it waits at the cancel)", i))
		case rapid.Bool().Draw(r, fmt.Sprintf("in[%d] waits on its ctx at the cancel", i)):
			e.react = rapid.SampledFrom(honours).Draw(r, fmt.Sprintf("in[%d] reaction (it waits at the cancel)", i))
		default:
			e.react = testIgnores
			released = append(released, i)
			if rapid.Bool().Draw(r, fmt.Sprintf("in[%d] fails", i)) {
				fail(i)
			}
		}
	}
	s.steps = append(s.steps, released)
	s.cancelAt = len(s.steps)
	// After the cancel: calls that ignored it return one group at a time,
	// the first of them with a failure (or ctx.Err() it looked at late).
	for j, i := range after {
		e := &s.elems[i]
		e.react = rapid.SampledFrom([]int{testIgnores, testChecksLate}).Draw(r, fmt.Sprintf("in[%d] reaction (it ignores the cancel)", i))
		if e.react == testIgnores && (j == 0 || rapid.Bool().Draw(r, fmt.Sprintf("in[%d] fails", i))) {
			fail(i)
		}
	}
	for len(after) > 0 {
		g := rapid.IntRange(1, len(after)).Draw(r, "returned together, after the cancel")
		s.steps, after = append(s.steps, after[:g]), after[g:]
	}
	return s
}

// testLastCalls are fixed scenarios of the kind drawFinale draws, played
// every run without shaking the schedule, beside the drawn ones: a
// one-element input whose call fails, a failure as the last call to
// return after every other one succeeded, two failures at the same
// instant as the last calls, and the caller's cancel (or deadline) that
// ends the last call still waiting. Four callers at once each time: on
// several CPUs, which goroutine runs first varies from one to the next.
func testLastCalls(focus string, all bool) []testFanScenario {
	ok := func(text string) testFanElem { return testFanElem{text: text, react: testIgnores, panic: -1} }
	bad := func(kind int, text string) testFanElem {
		return testFanElem{fails: true, kind: kind, text: text, react: testIgnores, panic: -1}
	}
	waits := func(react int) testFanElem { return testFanElem{text: "9.99", react: react, panic: -1} }
	fails := []testFanScenario{
		{n: 1, elems: []testFanElem{bad(testPlainError, "503")}, steps: [][]int{{0}}},
		{n: 1, elems: []testFanElem{bad(testWrappedValue, "503")}, steps: [][]int{{0}}},
		{n: 2, elems: []testFanElem{ok("9.99"), bad(testStatusValue, "429")}, steps: [][]int{{0}, {1}}},
		{n: 4, elems: []testFanElem{ok("9.99"), ok(""), ok("12.50"), bad(testStatusValue, "503")},
			steps: [][]int{{2}, {0}, {1}, {3}}},
		{n: 3, elems: []testFanElem{bad(testWrappedValue, "429"), ok("0.00"), bad(testPlainError, "timeout")},
			steps: [][]int{{1}, {0, 2}}},
		{n: 5, elems: []testFanElem{ok("9.99"), ok("0.00"), ok(""), bad(testJoinedError, "503"), ok("12.50")},
			steps: [][]int{{0, 1}, {4}, {2, 3}}},
	}
	cancels := []testFanScenario{
		{n: 1, elems: []testFanElem{waits(testWrapsCtx)}, steps: [][]int{{}}, cancelAt: 1},
		{n: 1, elems: []testFanElem{waits(testReturnsCtx)}, steps: [][]int{{}}, cancelAt: 1, deadline: time.Second},
		{n: 2, elems: []testFanElem{waits(testOwnError), ok("0.00")}, steps: [][]int{{1}, {}}, cancelAt: 2},
		{n: 3, elems: []testFanElem{ok("9.99"), waits(testReturnsCtx), ok("12.50")}, steps: [][]int{{0}, {2}, {}},
			cancelAt: 3},
		{n: 2, elems: []testFanElem{waits(testWrapsCtx), ok("0.00")}, steps: [][]int{{1}, {}}, cancelAt: 2,
			deadline: 2 * time.Second},
		{n: 4, elems: []testFanElem{ok(""), ok("9.99"), waits(testWrapsCtx), ok("12.50")},
			steps: [][]int{{3}, {0}, {1}, {}}, cancelAt: 4},
	}
	var out []testFanScenario
	switch focus {
	case "R3":
		out = fails
	case "R5":
		out = cancels
	default: // MapAll: both, and a call that ignores the cancel and fails after it
		out = append(fails, cancels...)
		out = append(out, testFanScenario{n: 3, elems: []testFanElem{ok("9.99"), waits(testWrapsCtx), bad(testPlainError, "503")},
			steps: [][]int{{0}, {}, {2}}, cancelAt: 2})
	}
	for k := range out {
		out[k].focus, out[k].all, out[k].callers, out[k].cancelOn = focus, all, 4, -1
	}
	return out
}

func TestR3_ExploreAFailureAmongTheLastCallsToReturn(t *testing.T) {
	// Every other call has returned its result; then the last calls return
	// at one instant and one or several of them fail (a one-element input
	// whose call fails, too): Map returns one of those failures.
	play := func(h *katatest.H, s testFanScenario) { s.play(h) }
	katatest.Replay(t, testLastCalls("R3", false), play)
	d := testFanDraw{focus: "R3", finale: true, fail: true, minN: 1, maxN: 5, minCall: 2, maxCall: 4,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	katatest.Explore(t, 12, d.draw, play)
}

func TestR5_ExploreTheCallersCancelReachesTheLastCalls(t *testing.T) {
	// Every other call has returned its result; then the caller cancels
	// (or its deadline passes) while the last calls wait on their ctx,
	// others returning at that same instant: Map's error matches ctx.Err()
	// (or is a failure of that same instant).
	play := func(h *katatest.H, s testFanScenario) { s.play(h) }
	katatest.Replay(t, testLastCalls("R5", false), play)
	d := testFanDraw{focus: "R5", finale: true, cancel: true, deadline: true, minN: 1, maxN: 5, minCall: 2, maxCall: 4,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial}}
	katatest.Explore(t, 12, d.draw, play)
}

func TestB1_ExploreMapAllJoinsTheFailuresOfTheLastCalls(t *testing.T) {
	// MapAll: the last calls fail at one instant, after every other call
	// returned its result; or the caller cancels (or its deadline passes)
	// while the last calls wait on their ctx, and calls that ignore the
	// cancel fail with it or after it: the error joins every one of them.
	play := func(h *katatest.H, s testFanScenario) { s.play(h) }
	katatest.Replay(t, testLastCalls("B1", true), play)
	d := testFanDraw{focus: "B1", all: true, finale: true, fail: true, cancel: true, deadline: true, late: true,
		minN: 1, maxN: 5, minCall: 2, maxCall: 4,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	katatest.Explore(t, 12, d.draw, play)
}

// testExamples draws scenarios from draw with the seeds from, from+1, …:
// the same ones every run, for a Replay or a Repeat. An exploration would
// shrink a failing scenario, and a MapAll that never returns leaves a
// bubble behind at every try; a Repeat stops at the first that fails.
func testExamples(draw func(*rapid.T) testFanScenario, from, n int) []testFanScenario {
	gen := rapid.Custom(draw)
	out := make([]testFanScenario, n)
	for k := range out {
		out[k] = gen.Example(from + k)
	}
	return out
}

func TestB1_MapAllCallsFnForEveryElementWhenTheCallerCancelsEarly(t *testing.T) {
	// The caller cancels the moment one of the first calls starts, while
	// MapAll may still be starting the others, and some calls return at
	// once (some failing): MapAll still calls fn for every element, waits
	// for all of them and joins every failure. Scenarios drawn like an
	// exploration's, with three to eight elements and one or two callers.
	d := testFanDraw{focus: "B1", all: true, rush: true, minN: 3, maxN: 8, maxCall: 2,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	play := func(h *katatest.H, s testFanScenario) { s.play(h) }
	// As the scheduler runs them: the goroutines MapAll starts mostly
	// run once it waits, so the cancel comes after its loop is over.
	katatest.Replay(t, testExamples(d.draw, 1, 4), play)
	if t.Failed() {
		return
	}
	// Shaken: the goroutines run while MapAll is still starting others.
	scenarios, next := testExamples(d.draw, 101, 10), 0
	katatest.Repeat(t, len(scenarios), func(h *katatest.H) {
		s := scenarios[next]
		next++
		play(h, s)
		if h.Failed() {
			h.Logf("the scenario: %s", s)
		}
	})
}
