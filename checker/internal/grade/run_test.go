package grade

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/failure"
	"gokata/internal/receipt"
)

// fakeEnv makes this test binary stand in for a kata's test binary (see
// fakeTestBinary).
const fakeEnv = "GRADE_FAKE_TEST_BINARY"

func TestMain(m *testing.M) {
	if scenario := os.Getenv(fakeEnv); scenario != "" {
		os.Exit(fakeTestBinary(scenario))
	}
	os.Exit(m.Run())
}

// fakeTestBinary prints what a kata's test binary prints when TestR1_A and
// TestR2_B pass, frames and exit status, with the receipts the scenario
// names: those of an honest run, or what code running in package
// initialization could add.
func fakeTestBinary(scenario string) int {
	key := []byte("a key from another run, for copied receipts")
	if scenario != "copied" {
		f := os.NewFile(3, "key")
		key, _ = io.ReadAll(f)
		f.Close()
	}
	switch scenario {
	case "diesin":
		return diesInFirstTest(key)
	case "slowafterleak", "hangs":
		return hangsAfterAFailure(key, scenario == "hangs")
	}
	seq := 0
	sign := func(kind, name, result string) {
		seq++
		fmt.Printf("\x16%s\n", receipt.Receipt{Seq: seq, Kind: kind, Name: name, Result: result}.Sign(key).Frame())
	}
	tests := 0
	for _, name := range []string{"TestR1_A", "TestR2_B"} {
		fmt.Printf("\x16=== RUN   %s\n", name)
		switch {
		case scenario == "honest" || scenario == "copied":
			sign(receipt.Test, name, "pass")
			tests++
		case scenario == "rewritten" && name == "TestR1_A":
			sign(receipt.Test, name, "fail")
			tests++
		}
		fmt.Printf("\x16--- PASS: %s (0.00s)\n", name)
	}
	if scenario != "exits" {
		sign(receipt.End, "-", receipt.EndResult(0, tests))
	}
	fmt.Print("\x16PASS\n")
	return 0
}

// diesInFirstTest is a run of a learner's tests (catch) in which
// TestDeadlocks, when asked for, fails and takes the process down with it,
// as testing does with a panic on a test's own goroutine (a synctest
// bubble's deadlock); the tests asked for without it pass.
func diesInFirstTest(key []byte) int {
	var run string
	for _, a := range os.Args[1:] {
		if r, ok := strings.CutPrefix(a, "-test.run="); ok {
			run = r
		}
	}
	if strings.Contains(run, "TestDeadlocks") {
		dir, _ := os.Getwd()
		fmt.Printf("\x16=== RUN   TestDeadlocks\n\x16--- FAIL: TestDeadlocks (0.00s)\n"+
			"panic: deadlock: all goroutines in bubble are blocked [recovered, repanicked]\n\n"+
			"goroutine 22 [chan receive (durable), synctest bubble 1]:\nkata.TestDeadlocks.func1(0x1)\n\t%s/dead_test.go:13 +0x25\n", dir)
		return 2
	}
	for _, name := range []string{"TestFine", "TestAlsoFine"} {
		fmt.Printf("\x16=== RUN   %s\n\x16--- PASS: %s (0.00s)\n", name, name)
	}
	fmt.Printf("\x16%s\n", receipt.Receipt{Seq: 1, Kind: receipt.End, Name: "-", Result: receipt.EndResult(0, 0)}.Sign(key).Frame())
	fmt.Print("\x16PASS\n")
	return 0
}

// hangsAfterAFailure is a run of hidden tests in which TestR1_A fails and
// TestR2_B then runs out of time, as it does when TestR1_A left goroutines
// blocked for ever that slow every dump after it. Run by itself, TestR2_B
// passes, unless it hangs of its own.
func hangsAfterAFailure(key []byte, hangs bool) int {
	var run string
	for _, a := range os.Args[1:] {
		if r, ok := strings.CutPrefix(a, "-test.run="); ok {
			run = r
		}
	}
	seq := 0
	sign := func(kind, name, result string) {
		seq++
		fmt.Printf("\x16%s\n", receipt.Receipt{Seq: seq, Kind: kind, Name: name, Result: result}.Sign(key).Frame())
	}
	if strings.Contains(run, "TestR1_A") {
		fmt.Print("\x16=== RUN   TestR1_A\n    a_test.go:9: 3 goroutines still running\n\x16--- FAIL: TestR1_A (0.00s)\n")
		sign(receipt.Test, "TestR1_A", "fail")
	}
	fmt.Print("\x16=== RUN   TestR2_B\n")
	if hangs || strings.Contains(run, "TestR1_A") {
		fmt.Print("panic: test timed out after 5s\n\trunning tests:\n\t\tTestR2_B (5s)\n\n" +
			"goroutine 7 [running]:\ntesting.(*M).startAlarm.func1()\n\t/go/src/testing/testing.go:2373 +0x1\n")
		return 2
	}
	sign(receipt.Test, "TestR2_B", "pass")
	fmt.Print("\x16--- PASS: TestR2_B (0.00s)\n")
	sign(receipt.End, "-", receipt.EndResult(0, 1))
	fmt.Print("\x16PASS\n")
	return 0
}

// A test that runs out of time after another test failed runs again by
// itself before it is blamed: what the failed test left behind slows the
// process. A hang of its own, alone, is still its own.
func TestAHangAfterAFailureRunsAgainAlone(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	hid := hidden{names: []string{"TestR1_A", "TestR2_B"}, itemOf: map[string]string{"TestR1_A": "R1", "TestR2_B": "R2"}}
	for _, hangs := range []bool{false, true} {
		scenario := map[bool]string{false: "slowafterleak", true: "hangs"}[hangs]
		g := &grader{tc: &Toolchain{Env: append(os.Environ(), fakeEnv+"="+scenario)}, opt: DefaultOptions(), pol: policyFor(Target{})}
		verdicts, err := g.runAll(context.Background(), self, t.TempDir(), hid)
		require.NoError(t, err)
		assert.Equal(t, failure.Assertion, verdicts["TestR1_A"].Kind, "%s: %s", scenario, verdicts["TestR1_A"].Message)
		b := verdicts["TestR2_B"]
		if hangs {
			assert.Equal(t, failure.Timeout, b.Kind, "%s: %s", scenario, b.Message)
			assert.True(t, g.hung, "%s: the hang halves the time of later runs", scenario)
		} else {
			assert.Equal(t, failure.Pass, b.Kind, "%s: %s", scenario, b.Message)
			assert.False(t, g.hung, scenario)
		}
	}
}

// A learner's test that fails and ends the process gets the blame; the
// tests that did not get to run, run again without it and pass.
func TestDiedInAFailedTest(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	g := &grader{tc: &Toolchain{Env: append(os.Environ(), fakeEnv+"=diesin")}, opt: DefaultOptions(),
		pol: policyFor(Target{Suite: &Suite{Own: true}})}
	tests := []string{"TestDeadlocks", "TestFine", "TestAlsoFine"}
	hid := hidden{names: tests, itemOf: map[string]string{"TestDeadlocks": "TestDeadlocks", "TestFine": "TestFine", "TestAlsoFine": "TestAlsoFine"}}
	dir := t.TempDir()
	verdicts, err := g.runAll(context.Background(), self, dir, hid)
	require.NoError(t, err)
	dead := verdicts["TestDeadlocks"]
	assert.Equal(t, failure.Deadlock, dead.Kind, dead.Message)
	assert.Contains(t, dead.Message, "synctest bubble is blocked")
	assert.Equal(t, []string{"chan receive (durable) at " + dir + "/dead_test.go:13 TestDeadlocks.func1"}, dead.Detail, "where it waits")
	assert.Equal(t, []string{"fail"}, dead.Results)
	for _, name := range []string{"TestFine", "TestAlsoFine"} {
		assert.Equal(t, failure.Pass, verdicts[name].Kind, "%s: %s", name, verdicts[name].Message)
	}
}

// The checker believes a pass only with a valid receipt for it from the
// run that printed it.
func TestPassesNeedReceipts(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cases := []struct {
		scenario string
		want     map[string]failure.Kind
		message  string
	}{
		{"honest", map[string]failure.Kind{"TestR1_A": failure.Pass, "TestR2_B": failure.Pass}, ""},
		// Frames and an exit status 0, printed before any test ran.
		{"exits", map[string]failure.Kind{"TestR1_A": failure.Exit, "TestR2_B": failure.Exit},
			"ended the test process before the hidden tests ran"},
		// Receipts from another process do not verify under this one's key.
		{"copied", map[string]failure.Kind{"TestR1_A": failure.Exit, "TestR2_B": failure.Exit},
			"ended the test process before the hidden tests ran"},
		// The run really ended, but no hidden test ran in it (a changed
		// command line): the passes printed for them are not theirs.
		{"none", map[string]failure.Kind{"TestR1_A": failure.Unproven, "TestR2_B": failure.Unproven},
			"did not produce it"},
		// A failure the output turned into a pass stays a failure.
		{"rewritten", map[string]failure.Kind{"TestR1_A": failure.Unproven, "TestR2_B": failure.Unproven},
			"a pass was reported for this test, but the hidden test"},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			g := &grader{tc: &Toolchain{Env: append(os.Environ(), fakeEnv+"="+c.scenario)}, opt: DefaultOptions(), pol: policyFor(Target{})}
			tests := []string{"TestR1_A", "TestR2_B"}
			hid := hidden{names: tests, itemOf: map[string]string{"TestR1_A": "R1", "TestR2_B": "R2"}}
			verdicts, err := g.runAll(context.Background(), self, t.TempDir(), hid)
			require.NoError(t, err)
			for _, name := range tests {
				v := verdicts[name]
				assert.Equal(t, c.want[name], v.Kind, "%s: %s %s", name, v.Message, strings.Join(v.Detail, " | "))
				assert.Contains(t, v.Message, c.message)
			}
		})
	}
}

func TestIdleDump(t *testing.T) {
	for name, want := range map[string]bool{
		"crash_mutex.txt":           true,  // every goroutine blocked: believed at once
		"crash_rlock_recursive.txt": true,  // the same, on a sync.RWMutex
		"crash_busy_loop.txt":       false, // a goroutine still running: it may only have been slow
		"crash_livelock.txt":        false,
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "classify", name))
		require.NoError(t, err)
		assert.Equal(t, want, idleDump(string(data)), name)
	}
	assert.False(t, idleDump(""), "no dump at all")
}
