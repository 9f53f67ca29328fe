package grade

import (
	"context"
	"fmt"
	"io"
	"os"
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
