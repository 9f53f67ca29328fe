package breaker

// B2 over a breaker's whole life: it opens again and again (a trip, a
// failed probe, a trip after it closed), and each opening takes its period
// from the failure that made it, and from nothing earlier: a Retry-After
// that opened the breaker once is not remembered for the next opening.
// OpenTimeout 0 or below means 60s here too: a shorter Retry-After does not
// shorten the open period below that.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testOpeningsScenario: a trip with Retry-After 1m (OpenTimeout 10s), then
// a probe that fails with none, then, once closed again, a trip with none:
// both later openings last OpenTimeout.
func testOpeningsScenario() testScenario {
	s := testScenario{req: "B2", set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second}}
	marked := testOutcome{how: "returns RetryAfter(1m0s, errors.New(\"503 service unavailable\"))", kind: testFailure,
		marked: true, ra: time.Minute,
		err: func(context.Context) error { return RetryAfter(time.Minute, errors.New("503 service unavailable")) }}
	plain := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	ok := testOutcomesOf(nil, "", testSuccess)[0]
	edge := func(d time.Duration) []testStep {
		return []testStep{{kind: testStepAdvance, d: d - 1}, {kind: testStepState},
			{kind: testStepAdvance, d: 1}, {kind: testStepState}}
	}
	s.steps = append(s.steps, testStep{kind: testStepCall, out: marked}, testStep{kind: testStepState})
	s.steps = append(s.steps, edge(time.Minute)...)
	s.steps = append(s.steps, testStep{kind: testStepCall, out: plain}, testStep{kind: testStepState})
	s.steps = append(s.steps, edge(10*time.Second)...)
	s.steps = append(s.steps, testStep{kind: testStepCall, out: ok}, testStep{kind: testStepState},
		testStep{kind: testStepCall, out: plain}, testStep{kind: testStepState})
	s.steps = append(s.steps, edge(10*time.Second)...)
	return s
}

// testDefaultOpeningsScenario: OpenTimeout 0 means 60s, and a Retry-After
// below that changes nothing: opened by a failure with Retry-After 10s, or
// reopened by one with 30s, the breaker stays open 60s each time.
func testDefaultOpeningsScenario(timeout time.Duration) testScenario {
	s := testScenario{req: "B2", set: Settings{MaxFailures: 1, OpenTimeout: timeout}}
	marked := func(d time.Duration) testOutcome {
		return testOutcome{how: fmt.Sprintf("returns RetryAfter(%v, errors.New(\"503 service unavailable\"))", d),
			kind: testFailure, marked: true, ra: d,
			err: func(context.Context) error { return RetryAfter(d, errors.New("503 service unavailable")) }}
	}
	edge := []testStep{{kind: testStepAdvance, d: time.Minute - 1}, {kind: testStepState},
		{kind: testStepAdvance, d: 1}, {kind: testStepState}}
	s.steps = append(s.steps, testStep{kind: testStepCall, out: marked(10 * time.Second)}, testStep{kind: testStepState})
	s.steps = append(s.steps, edge...)
	s.steps = append(s.steps, testStep{kind: testStepCall, out: marked(30 * time.Second)}, testStep{kind: testStepState})
	s.steps = append(s.steps, edge...)
	return s
}

// testDrawOpenings draws a breaker that opens two to four times, by trips
// and by failed probes, each opening failure carrying a Retry-After or not,
// and runs every open period to its exact edge.
func testDrawOpenings(r *rapid.T) testScenario {
	s := testScenario{req: "B2", isF: rapid.Bool().Draw(r, "IsFailure")}
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	s.set.OpenTimeout = testDrawTimeout(r, true)
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 2).Draw(r, "HalfOpenMaxRequests")
	maxF, timeout := testEffective(s.set.MaxFailures, s.set.OpenTimeout)
	call := func(o testOutcome) { s.steps = append(s.steps, testStep{kind: testStepCall, out: o}) }
	kinds := []int{testSuccess} // what counts as a success: an answer too, with IsFailure
	if s.isF {
		kinds = append(kinds, testAnswer)
	}
	successes := func(n int, label string) {
		for i := range n {
			l := fmt.Sprintf("%s success %d", label, i+1)
			call(testMark(r, testDrawOutcome(r, l, kinds...), timeout, l, 2))
		}
	}
	closed := true
	for i := range rapid.IntRange(2, 4).Draw(r, "openings") {
		label := fmt.Sprintf("opening %d", i+1)
		if !closed && rapid.Bool().Draw(r, label+" closes first") {
			successes(s.set.HalfOpenMaxRequests, label+" probe")
			closed = true
		}
		var opener testOutcome
		if closed {
			for j := range maxF {
				l := fmt.Sprintf("%s failure %d", label, j+1)
				opener = testMark(r, testDrawOutcome(r, l, testReturned), timeout, l, 2)
				call(opener)
			}
		} else {
			successes(rapid.IntRange(0, s.set.HalfOpenMaxRequests-1).Draw(r, label+" probes that succeed"), label+" probe")
			opener = testMark(r, testDrawOutcome(r, label+" failed probe", testReturned), timeout, label+" failed probe", 2)
			call(opener)
		}
		closed = false
		s.steps = append(s.steps, testStep{kind: testStepState})
		for _, st := range testDrawUntil(r, testPeriod(opener, timeout)-time.Nanosecond, label) {
			s.steps = append(s.steps, st, testStep{kind: testStepState})
		}
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Nanosecond}, testStep{kind: testStepState})
	}
	return s
}

func TestB2_ExploreEachOpeningTakesItsPeriodFromItsOwnFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testOpeningsScenario()) })
	katatest.Replay(t, []testScenario{testDefaultOpeningsScenario(0), testDefaultOpeningsScenario(-time.Second)}, testPlay)
	katatest.Explore(t, 8, testDrawOpenings, testPlay)
}
