package grade

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/golden"
	"gokata/internal/failure"
)

// TestClassifyGolden feeds the classifier real test outputs and compares its
// verdicts with the JSON next to them, in the style of cmd/test2json's
// testdata: testdata/classify/NAME.txt is what a test printed, NAME.json
// the verdict. After a deliberate change to the classifier,
//
//	go test ./checker/internal/grade -run TestClassifyGolden -update
//
// rewrites the JSON; read the diff before committing it.
//
// A .txt file starts with a header line that says how the checker saw the
// run, then comment lines, then the raw output:
//
//	# failure dir=/path/of/the/package
//	# crash dir=/path/of/the/package exit=2 limit=3s [watched]
//
// "failure" is a test that ran to its end and failed (classifyFailure);
// "crash" is a test that was running when its binary died or hung
// (classifyCrash), with the binary's exit status, the time limit it ran
// under, and whether the checker's own watchdog killed it.
func TestClassifyGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "classify", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var kinds []failure.Kind
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			require.NoError(t, err)
			v, err := classifyGolden(string(raw))
			require.NoError(t, err, "%s", f)
			kinds = append(kinds, v.Kind)
			got, err := json.MarshalIndent(v, "", "\t")
			require.NoError(t, err)
			got = append(got, '\n')
			golden.Check(t, strings.TrimSuffix(f, ".txt")+".json", got)
		})
	}
	// The corpus stays worth its name: every kind the classifier gives a
	// failed or crashed test has a real output here.
	for _, k := range []failure.Kind{failure.Assertion, failure.NotImplemented, failure.Panic, failure.Race,
		failure.Leak, failure.Deadlock, failure.MutexHang, failure.Timeout, failure.RealClock, failure.Exit} {
		assert.Contains(t, kinds, k, "no output in testdata/classify is classified %q", k)
	}
}

// classifyGolden reads a golden input's header and classifies the output
// after it as the checker would.
func classifyGolden(raw string) (Verdict, error) {
	header, out, ok := strings.Cut(raw, "\n")
	if !ok {
		return Verdict{}, fmt.Errorf("no header line")
	}
	for strings.HasPrefix(out, "# ") {
		_, out, _ = strings.Cut(out, "\n")
	}
	fields := strings.Fields(strings.TrimPrefix(header, "# "))
	if len(fields) == 0 {
		return Verdict{}, fmt.Errorf("empty header line")
	}
	opt := map[string]string{}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		opt[k] = v
	}
	dir := opt["dir"]
	if dir == "" {
		return Verdict{}, fmt.Errorf("header %q names no dir=", header)
	}
	switch fields[0] {
	case "failure":
		return classifyFailure(out, dir), nil
	case "crash":
		var e exit
		if _, err := fmt.Sscan(opt["exit"], &e.code); err != nil {
			return Verdict{}, fmt.Errorf("header %q: exit=: %v", header, err)
		}
		limit, err := time.ParseDuration(opt["limit"])
		if err != nil {
			return Verdict{}, fmt.Errorf("header %q: limit=: %v", header, err)
		}
		_, e.watched = opt["watched"]
		return classifyCrash(out, dir, e, limit), nil
	}
	return Verdict{}, fmt.Errorf("header %q: want failure or crash first", header)
}

// TestClassifyGoldenHeader keeps the golden inputs' header strict: a typo
// must fail loudly, not classify the output some default way.
func TestClassifyGoldenHeader(t *testing.T) {
	for _, raw := range []string{
		"no newline",
		"# \nout",
		"# failure\nout",
		"# failed dir=/k\nout",
		"# crash dir=/k limit=3s\nout",
		"# crash dir=/k exit=2 limit=soon\nout",
	} {
		_, err := classifyGolden(raw)
		assert.Error(t, err, "%q", raw)
	}
	v, err := classifyGolden("# crash dir=/k exit=2 limit=3s watched\n# a comment\nanything")
	require.NoError(t, err)
	assert.Equal(t, failure.Timeout, v.Kind, "a run the watchdog killed is a timeout whatever it printed")
	assert.Contains(t, v.Message, "3s", "the message names the limit")
}

// TestLastHangHint: the hint that explains a hang is the last one the test
// wrote, the step it hung in; a test that wrote none has none.
func TestLastHangHint(t *testing.T) {
	out := "=== RUN   TestR1_X\n" +
		"    x_test.go:10: " + failure.HangHint + "step one hung\n" +
		"    x_test.go:11: an ordinary log line\n" +
		"    x_test.go:10: " + failure.HangHint + "step two hung\n" +
		"        its second line\n"
	hint, ok := lastHangHint(out)
	assert.True(t, ok)
	assert.Equal(t, "step two hung", hint)
	assert.Len(t, logBlocks(out), 1, "a hang hint is not a message of the test")
	_, ok = lastHangHint("=== RUN   TestR1_X\n    x_test.go:11: an ordinary log line\n")
	assert.False(t, ok)
}
