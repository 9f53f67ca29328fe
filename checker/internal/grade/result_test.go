package grade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/grade"
	"gokata/internal/failure"
)

func TestFailedByChance(t *testing.T) {
	pass := grade.Verdict{Kind: failure.Pass}
	fail := grade.Verdict{Kind: failure.Assertion, Message: "stale result"}
	notRun := grade.Verdict{Kind: failure.NotRun, Message: "not run: R1 already failed"}
	cases := []struct {
		name   string
		it     grade.ItemResult
		chance bool
	}{
		{"passed", grade.ItemResult{Verdict: pass, Tests: []grade.TestResult{{Verdict: pass, Scheduling: true}}}, false},
		{"a deterministic test failed", grade.ItemResult{Verdict: fail, Scheduling: true, Tests: []grade.TestResult{
			{Verdict: fail}, {Verdict: pass, Scheduling: true}}}, false},
		{"a scheduling test failed", grade.ItemResult{Verdict: fail, Scheduling: true, Tests: []grade.TestResult{
			{Verdict: pass}, {Verdict: fail, Scheduling: true}}}, true},
		{"a scheduling test did not run", grade.ItemResult{Verdict: fail, Scheduling: true, Tests: []grade.TestResult{
			{Verdict: fail}, {Verdict: notRun, Scheduling: true}}}, false},
		{"failed only some runs", grade.ItemResult{Verdict: fail, Runs: 15, Passes: 11, Tests: []grade.TestResult{{Verdict: fail}}}, true},
		{"failed every run", grade.ItemResult{Verdict: fail, Runs: 15, Tests: []grade.TestResult{{Verdict: fail}}}, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.chance, c.it.FailedByChance(), c.name)
	}
}
