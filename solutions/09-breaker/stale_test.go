package breaker

// Late verdicts: a call's fn has returned, and IsFailure takes its time
// deciding what the error counts as (it runs without the breaker's lock),
// while other calls, the clock and State move the breaker on. When
// IsFailure answers, the call belongs to a generation that is over: its
// result must count for nothing, wherever the breaker stands by then.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testAfterLate adds the steps that show, from where the breaker stands
// (the model at the end of steps so far), that a late result changed
// nothing: the rest of an open period to its edge, a half-open breaker's
// probe places, a closed breaker's count of failures in a row.
func testAfterLate(r *rapid.T, s *testScenario, where string, timeout time.Duration, maxF, maxHalf, failuresSoFar int) {
	switch where {
	case "open":
		for _, st := range testDrawUntil(r, timeout-time.Nanosecond, "rest of the open period") {
			s.steps = append(s.steps, st, testStep{kind: testStepState})
		}
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: time.Nanosecond}, testStep{kind: testStepHold, n: maxHalf + 1})
	case "half-open":
		s.steps = append(s.steps, testStep{kind: testStepHold, n: maxHalf + 1})
	case "half-open, full":
		s.steps = append(s.steps, testStep{kind: testStepHold, n: 1})
	case "closed":
		for i := range maxF - 1 - failuresSoFar {
			s.steps = append(s.steps, testStep{kind: testStepCall, out: testDrawOutcome(r, fmt.Sprintf("failure %d after", i+1), testReturned)})
		}
		s.steps = append(s.steps, testStep{kind: testStepState},
			testStep{kind: testStepCall, out: testDrawOutcome(r, "the failure that trips it", testReturned)}, testStep{kind: testStepState})
	}
}

// testDrawLateVerdict draws a breaker that moves on while IsFailure decides
// about a call of an earlier generation: a slow closed call whose breaker
// trips, turns half-open, fills with probes, closes again or reopens; or a
// probe whose half-open period another probe ends, by reopening it or by
// closing it.
func testDrawLateVerdict(r *rapid.T) testScenario {
	s := testScenario{req: "R5", isF: true, quiet: true}
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	s.set.OpenTimeout = testDrawTimeout(r, false)
	probe := rapid.Bool().Draw(r, "the slow call is a probe")
	if probe {
		s.set.HalfOpenMaxRequests = rapid.IntRange(2, 3).Draw(r, "HalfOpenMaxRequests")
	} else {
		s.set.HalfOpenMaxRequests = rapid.IntRange(1, 3).Draw(r, "HalfOpenMaxRequests")
	}
	maxF, timeout, maxHalf := s.set.MaxFailures, s.set.OpenTimeout, s.set.HalfOpenMaxRequests
	slowOut := testDrawOutcome(r, "slow call", testReturned, testAnswer)
	add := func(st ...testStep) { s.steps = append(s.steps, st...) }
	failures := 0
	closeWith := func(label string, n int) {
		for i := range n {
			add(testStep{kind: testStepCall, out: testDrawOutcome(r, fmt.Sprintf("%s %d", label, i+1), testSuccess, testAnswer)})
		}
		failures = rapid.IntRange(0, maxF-1).Draw(r, "failures in a row before the verdict")
		for i := range failures {
			add(testStep{kind: testStepCall, out: testDrawOutcome(r, fmt.Sprintf("failure %d", i+1), testReturned)})
		}
	}
	var where string
	slow := 1
	if !probe {
		add(testStep{kind: testStepHold, n: 1})
		if rapid.Bool().Draw(r, "time before the slow call ends") {
			add(testStep{kind: testStepAdvance, d: time.Duration(rapid.IntRange(1, 3000).Draw(r, "ms")) * time.Millisecond})
		}
		add(testStep{kind: testStepEnd, n: 1, out: slowOut, slow: true})
		add(testTrip(r, maxF, "trip")...)
		add(testStep{kind: testStepState})
		where = rapid.SampledFrom([]string{"open", "half-open", "half-open, full", "closed", "reopened"}).Draw(r, "where the breaker is when IsFailure answers")
		if where != "open" {
			add(testStep{kind: testStepAdvance, d: timeout})
			if rapid.Bool().Draw(r, "State makes the move to half-open") {
				add(testStep{kind: testStepState})
			}
		}
		switch where {
		case "half-open, full":
			add(testStep{kind: testStepHold, n: maxHalf})
		case "closed":
			closeWith("probe", maxHalf)
		case "reopened":
			add(testStep{kind: testStepCall, out: testDrawOutcome(r, "probe", testReturned)})
			where = "open"
		}
	} else {
		add(testTrip(r, maxF, "trip")...)
		add(testStep{kind: testStepAdvance, d: timeout}, testStep{kind: testStepHold, n: maxHalf})
		order := rapid.Permutation(seq(maxHalf)).Draw(r, "order the probes end in")
		slow = order[0]
		add(testStep{kind: testStepEnd, n: slow, out: slowOut, slow: true})
		where = rapid.SampledFrom([]string{"open", "half-open", "half-open, full", "closed"}).Draw(r, "where the breaker is when IsFailure answers")
		if where == "closed" {
			for _, k := range order[1:] {
				add(testStep{kind: testStepEnd, n: k, out: testDrawOutcome(r, fmt.Sprintf("probe %d", k), testSuccess, testAnswer)})
			}
			closeWith("new probe", 1)
		} else {
			add(testStep{kind: testStepEnd, n: order[1], out: testDrawOutcome(r, fmt.Sprintf("probe %d", order[1]), testReturned)})
			if where != "open" {
				add(testStep{kind: testStepAdvance, d: timeout}, testStep{kind: testStepState})
			}
			if where == "half-open, full" {
				add(testStep{kind: testStepHold, n: maxHalf})
			}
		}
	}
	add(testStep{kind: testStepVerdict, n: slow}, testStep{kind: testStepState})
	testAfterLate(r, &s, where, timeout, maxF, maxHalf, failures)
	return s
}

// testLateVerdictScenario: a slow closed call's failure, judged by IsFailure
// after the breaker tripped and turned half-open.
func testLateVerdictScenario() testScenario {
	s := testScenario{req: "R5", isF: true, quiet: true, set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 2}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	s.steps = []testStep{{kind: testStepHold, n: 1}, {kind: testStepEnd, n: 1, out: fail, slow: true},
		{kind: testStepCall, out: fail}, {kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepState},
		{kind: testStepVerdict, n: 1}, {kind: testStepState}, {kind: testStepHold, n: 3}}
	return s
}

func TestR5_ExploreLateVerdictsChangeNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testLateVerdictScenario()) })
	katatest.Explore(t, 8, testDrawLateVerdict, testPlay)
}
