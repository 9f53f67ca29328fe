package breaker

// B1 with a Window below zero: like 0, it means 60s. A breaker that
// defaults only a Window of exactly 0 keeps a window that every outcome
// has left as soon as it is recorded, so the rate never opens it.

import (
	"context"
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testNegativeWindowScenario: FailureRate 0.5, MinRequests 2, Window -1s:
// two failures in a row open the breaker.
func testNegativeWindowScenario() testScenario {
	s := testScenario{req: "B1", set: Settings{FailureRate: 0.5, MinRequests: 2, Window: -time.Second,
		OpenTimeout: 10 * time.Second}}
	fail := testOutcome{how: "returns errors.New(\"503 service unavailable\")", kind: testFailure,
		err: func(context.Context) error { return errors.New("503 service unavailable") }}
	s.steps = []testStep{{kind: testStepCall, out: fail}, {kind: testStepState},
		{kind: testStepAdvance, d: time.Second}, {kind: testStepCall, out: fail}, {kind: testStepState}}
	return s
}

// testDrawB1NegativeWindow is a scenario of B1 with Window 0, played with
// a Window below zero instead: the same 60s window.
func testDrawB1NegativeWindow(r *rapid.T) testScenario {
	s := rapid.Custom(testDrawB1).Filter(func(s testScenario) bool { return s.set.Window == 0 }).Draw(r, "Window 0")
	s.set.Window = rapid.SampledFrom([]time.Duration{-time.Nanosecond, -time.Second, -time.Hour}).Draw(r, "Window")
	return s
}

func TestB1_ExploreAWindowBelowZeroMeansSixtySeconds(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) { testPlay(h, testNegativeWindowScenario()) })
	katatest.Explore(t, 6, testDrawB1NegativeWindow, testPlay)
}
