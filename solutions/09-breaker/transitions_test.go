package breaker

// Every transition reaches OnStateChange, whoever makes it and however the
// call that makes it ends: a trip or a failed probe by a returned error or
// by a panic of any kind, the lazy move to half-open by State, by one Do or
// by callers at once, a close by probes one at a time or held at once; and
// a hook that calls Do, whose call may make a transition of its own.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDrawTransitions draws a breaker's life, one to three rounds of trip,
// open period, probes, with the hook checked after every step. A model
// follows the draw, so that each round starts where the last one left the
// breaker and the held calls are numbered as the player numbers them.
func testDrawTransitions(r *rapid.T) testScenario {
	s := testScenario{req: "R6"}
	s.isF, s.allow = testDrawIsFailure(r, 2)
	s.set.MaxFailures = rapid.IntRange(1, 3).Draw(r, "MaxFailures")
	s.set.OpenTimeout = testDrawTimeout(r, false)
	s.set.HalfOpenMaxRequests = rapid.IntRange(1, 2).Draw(r, "HalfOpenMaxRequests")
	m := testNewModel(s.set, s.isF)
	if rapid.IntRange(0, 2).Draw(r, "OnStateChange calls Do") > 0 {
		on := rapid.SampledFrom([]testChange{{Open, HalfOpen}, {Open, HalfOpen}, {HalfOpen, Closed}, {HalfOpen, Closed},
			{HalfOpen, Open}, {Closed, Open}}).Draw(r, "on the transition")
		out := testDrawOutcome(r, "the hook's Do", testSuccess, testAnswer, testFailure, testFailure, testCancelled)
		s.nest = &testNest{on, out}
		m.nest = s.nest
	}
	var through []int // the model's generation of each held call let through
	call := func(out testOutcome) {
		s.steps = append(s.steps, testStep{kind: testStepCall, out: out})
		if gen, rej := m.admit(); rej == nil {
			before := len(m.changes)
			m.record(gen, out)
			m.nested(before)
		}
	}
	// failure draws a failure: a returned error or a panic, each kind as likely.
	failure := func(label string) testOutcome {
		return rapid.SampledFrom(testOutcomesOf(r, label, testFailure)).Draw(r, label)
	}
	for range rapid.IntRange(1, 3).Draw(r, "rounds") {
		for i := 0; m.state == Closed; i++ {
			call(failure(fmt.Sprintf("failure %d", i+1)))
		}
		s.steps = append(s.steps, testStep{kind: testStepAdvance, d: m.openUntil - m.now})
		m.now = m.openUntil
		switch rapid.IntRange(0, 2).Draw(r, "what finds the open period over") {
		case 0:
			s.steps = append(s.steps, testStep{kind: testStepState})
			before := len(m.changes)
			m.expire()
			m.nested(before)
		case 1:
			call(testDrawOutcome(r, "first probe", testSuccess, testAnswer, testFailure))
		}
		if m.state == Closed {
			continue
		}
		if m.state == Open && m.now < m.openUntil {
			continue // the first probe failed: the next round runs the fresh period
		}
		// Probes held at once (the first of them finds the period over, if
		// nothing did yet), ending in a drawn order and way; once one fails
		// or enough succeed, the rest end in a later generation.
		m.expire()
		first := len(through)
		n := m.maxHalf - m.probes
		s.steps = append(s.steps, testStep{kind: testStepHold, n: n})
		for range n {
			gen, _ := m.admit()
			through = append(through, gen)
		}
		for _, k := range rapid.Permutation(seq(n)).Draw(r, "order the probes end in") {
			out := testDrawOutcome(r, fmt.Sprintf("probe %d", k), testSuccess, testAnswer, testFailure)
			if rapid.Bool().Draw(r, fmt.Sprintf("probe %d fails", k)) {
				out = failure(fmt.Sprintf("probe %d", k))
			}
			s.steps = append(s.steps, testStep{kind: testStepEnd, n: first + k, out: out})
			before := len(m.changes)
			m.record(through[first+k-1], out)
			m.nested(before)
		}
		s.steps = append(s.steps, testStep{kind: testStepState})
	}
	return s
}

// testPanicTransitions: a panic trips the breaker, a panicking probe
// reopens it, a successful probe closes it; IsFailure accepts only the
// failures fn returns, and is not asked about a panic.
func testPanicTransitions() testScenario {
	s := testScenario{req: "R6", isF: true, allow: true,
		set: Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	str := testOutcome{how: "panics with a string", kind: testFailure, panic: func() any { return "inventory: nil row" }}
	rt := testOutcome{how: "panics with a runtime error (index out of range)", kind: testFailure, panic: func() any { return testRuntimePanic() }}
	ok := testOutcomesOf(nil, "", testSuccess)[0]
	s.steps = []testStep{{kind: testStepCall, out: fail}, {kind: testStepCall, out: str}, {kind: testStepState},
		{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: rt}, {kind: testStepState},
		{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepHold, n: 1}, {kind: testStepEnd, n: 1, out: str},
		{kind: testStepState}, {kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: ok}, {kind: testStepState}}
	return s
}

// testHookCallsDo: OnStateChange calls Do on the transition on, and that
// Do makes a transition of its own: a probe that fails after State found
// the open period over, or a failure that trips the breaker just closed.
func testHookCallsDo(on testChange) testScenario {
	s := testScenario{req: "R6", set: Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	ok := testOutcomesOf(nil, "", testSuccess)[0]
	s.nest = &testNest{on, fail}
	s.steps = []testStep{{kind: testStepCall, out: fail}, {kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepState},
		{kind: testStepState}, {kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: ok}, {kind: testStepState},
		{kind: testStepAdvance, d: 10 * time.Second}, {kind: testStepCall, out: ok}, {kind: testStepState}}
	return s
}

func TestR6_ExploreEveryTransitionReachesTheHook(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testPanicTransitions()) })
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testHookCallsDo(testChange{Open, HalfOpen})) })
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testHookCallsDo(testChange{HalfOpen, Closed})) })
	katatest.Explore(t, 8, testDrawTransitions, testPlay)
}
