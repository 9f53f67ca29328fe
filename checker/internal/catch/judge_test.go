package catch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/catch"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
	"gokata/internal/failure"
)

// test is a test's result over its runs: "pass", "fail", "skip" each.
func test(name string, runs ...string) grade.TestResult {
	t := grade.TestResult{Name: name, Results: runs, Verdict: grade.Verdict{Kind: failure.Pass}}
	for _, r := range runs {
		switch r {
		case "fail":
			t.Verdict = grade.Verdict{Kind: failure.Assertion, Message: "want 3, got 4"}
		case "skip":
			if t.Kind == failure.Pass {
				t.Verdict = grade.Verdict{Kind: failure.Assertion, Message: "the test was skipped"}
			}
		}
	}
	return t
}

// crashed is a test that took its process down: no finished run.
func crashed(name string, kind failure.Kind) grade.TestResult {
	return grade.TestResult{Name: name, Verdict: grade.Verdict{Kind: kind, Message: "boom"}}
}

func result(ts ...grade.TestResult) *grade.Result { return &grade.Result{Tests: ts} }

func patch(t *testing.T, header string) *mutant.Mutant {
	m, err := mutant.Parse("m", []byte(header+"\n--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\n"))
	require.NoError(t, err)
	return m
}

func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		t    grade.TestResult
		want catch.Outcome
	}{
		{test("T", "pass", "pass"), catch.Pass},
		{test("T", "fail", "fail"), catch.Fail},
		{test("T", "pass", "fail", "pass"), catch.Flaky},
		{test("T", "skip", "skip"), catch.Skip},
		{test("T", "skip", "fail"), catch.Fail},
		{crashed("T", failure.Timeout), catch.Fail},
		{crashed("T", failure.Panic), catch.Fail},
	} {
		assert.Equal(t, c.want, catch.OutcomeOf(c.t), "%v", c.t.Results)
	}
}

func TestAlarmsOnTheReference(t *testing.T) {
	ref := result(test("TestGood", "pass", "pass"), test("TestWrong", "fail", "fail"),
		test("TestFlaky", "pass", "fail"), test("TestLater", "skip", "skip"), crashed("TestHangs", failure.Timeout))
	alarms, skipped, trusted := catch.Alarms(ref)
	require.Len(t, alarms, 3)
	assert.Equal(t, "TestWrong", alarms[0].Test)
	assert.False(t, alarms[0].Flaky)
	assert.Equal(t, "want 3, got 4", alarms[0].Message)
	assert.Equal(t, "TestFlaky", alarms[1].Test)
	assert.True(t, alarms[1].Flaky, "passed one run and failed the other on correct code")
	assert.Equal(t, "TestHangs", alarms[2].Test)
	assert.Equal(t, failure.Timeout, alarms[2].Kind)
	assert.Equal(t, []string{"TestLater"}, skipped)
	assert.Equal(t, map[string]bool{"TestGood": true}, trusted)
}

func TestJudgeMutants(t *testing.T) {
	m := patch(t, "// Mistake: sleeps with clk.Sleep.\n// Symptom: a cancel waits for the pause.\n// Fails: R4 R2\n// Expect: x\n")
	trusted := map[string]bool{"TestA": true, "TestB": true}

	v := catch.Judge(m, trusted, result(test("TestA", "pass"), test("TestB", "fail", "fail")))
	assert.True(t, v.Caught)
	assert.Equal(t, []string{"TestB"}, v.By)
	assert.Equal(t, "want 3, got 4", v.How.Message)
	assert.Equal(t, "sleeps with clk.Sleep.", v.Mistake)
	assert.Equal(t, "a cancel waits for the pause.", v.Symptom)
	assert.Equal(t, []string{"R4", "R2"}, v.Fails)

	v = catch.Judge(m, trusted, result(test("TestA", "pass"), test("TestB", "pass")))
	assert.False(t, v.Caught, "no test failed: missed")
	assert.Empty(t, v.Sometimes)

	v = catch.Judge(m, trusted, result(test("TestA", "pass", "fail"), test("TestB", "pass", "pass")))
	assert.False(t, v.Caught, "failed in only some runs: luck, not a catch")
	assert.Equal(t, []string{"TestA"}, v.Sometimes)

	v = catch.Judge(m, trusted, result(test("TestA", "pass"), crashed("TestB", failure.Deadlock)))
	assert.True(t, v.Caught, "a test that hangs or crashes on the mutant fails there")

	v = catch.Judge(m, trusted, result(test("TestA", "pass"), test("TestB", "pass"), test("TestAlarm", "fail")))
	assert.False(t, v.Caught, "a test that fails on the reference too catches nothing")

	v = catch.Judge(m, trusted, &grade.Result{Build: &grade.BuildFailure{Kind: failure.Compile}})
	assert.False(t, v.Caught)
	assert.True(t, v.NoBuild)
}

func TestReportPassed(t *testing.T) {
	caught := catch.Verdict{Caught: true}
	r := &catch.Report{Mutants: []catch.Verdict{caught, caught}}
	assert.True(t, r.Passed())
	assert.Equal(t, 2, r.Caught())
	r.Alarms = []catch.Alarm{{Test: "TestX"}}
	assert.False(t, r.Passed(), "a false alarm")
	r = &catch.Report{Mutants: []catch.Verdict{caught, {}}}
	assert.False(t, r.Passed(), "a mutant missed")
	assert.False(t, (&catch.Report{}).Passed(), "no mutant, nothing proven")
}

// Whatever the gate finds in the learner's tests, even the real clock,
// which only fails code, keeps them from running: no score to show.
func TestReportRanOnlyWithoutFindings(t *testing.T) {
	clock := gate.Finding{File: "exercises/03-bounded/a_test.go", Line: 3, Rule: gate.RuleRealClock, Message: "time.Sleep uses the real clock"}
	assert.False(t, (&catch.Report{Gate: []gate.Finding{clock}}).Ran())
	assert.False(t, (&catch.Report{Build: &grade.BuildFailure{}}).Ran())
	assert.True(t, (&catch.Report{}).Ran())
}

// CheckTests applies the gate's rules to the learner's tests, with the
// test packages allowed, and catch's own: the kata's package, no TestMain.
func TestCheckTests(t *testing.T) {
	root := t.TempDir()
	ex := filepath.Join(root, "exercises", "06-retry")
	require.NoError(t, os.MkdirAll(ex, 0o755))
	write := func(name, src string) string {
		p := filepath.Join(ex, name)
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		return p
	}
	good := write("good_test.go", `package retry

import (
	"testing"
	"testing/synctest"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"gokata/internal/katatest"
)

func TestGood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { require.NotNil(t, clock.NewMock()) })
	_ = goleak.IgnoreCurrent
	_ = katatest.Run
}
`)
	bad := write("bad_test.go", `package retry_test

import (
	"os"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(m.Run()) }

func TestSleeps(t *testing.T) { time.Sleep(time.Second) }
`)
	write("fast.s", "TEXT ·f(SB),0,$0\n")
	k := catalog.Kata{Slug: "06-retry", Package: "retry", Exercise: ex}

	fs, err := catch.CheckTests(root, &catch.Suite{Kata: k, Files: []string{good}, Own: true})
	require.NoError(t, err)
	require.Len(t, fs, 1, "only the assembly file: %v", fs)
	assert.Contains(t, fs[0].Message, "non-Go source files are not allowed")

	fs, err = catch.CheckTests(root, &catch.Suite{Kata: k, Files: []string{bad}, Own: true})
	require.NoError(t, err)
	var got []string
	for _, f := range fs {
		got = append(got, f.String())
		if strings.Contains(f.Message, "real clock") {
			assert.False(t, f.Blocking(), "in code the real clock fails the grade but lets it run")
			assert.Contains(t, f.Message, "synctest.Wait()", "in a test, advice for tests")
		}
	}
	text := strings.Join(got, "\n")
	assert.Contains(t, text, `bad_test.go:4: import "os" is not allowed`)
	assert.Contains(t, text, "bad_test.go:11: time.Sleep uses the real clock")
	assert.Contains(t, text, "bad_test.go:9: TestMain is not allowed")
	assert.Contains(t, text, "bad_test.go:1: package retry_test: write your tests in package retry")
	assert.True(t, slicesContainsBlocking(fs))
}

func slicesContainsBlocking(fs []gate.Finding) bool {
	for _, f := range fs {
		if f.Blocking() {
			return true
		}
	}
	return false
}
