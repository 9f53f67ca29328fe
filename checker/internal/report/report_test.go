package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/golden"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/teststream"
	"gokata/internal/failure"
)

func kata() catalog.Kata {
	return catalog.Kata{Num: 6, Slug: "06-retry", Package: "retry", Meta: catalog.Meta{
		Title: "Retry", Requirements: []catalog.Item{{ID: "R1", Text: "grows"}, {ID: "R2", Text: "stops"}, {ID: "R3", Text: "cancels"}},
		Bonus: []catalog.Item{{ID: "B1", Text: "budget"}},
	}, Reveal: catalog.Reveal{
		Hints: []catalog.Hint{{Covers: []string{"R2"}, Text: "…"}, {Covers: []string{"R3", "R2"}, Text: "…"}},
	}}
}

func item(id string, bonus bool, v grade.Verdict) grade.ItemResult {
	for _, it := range kata().Items() {
		if it.ID == id {
			return grade.ItemResult{Item: it, Bonus: bonus, Verdict: v,
				Tests: []grade.TestResult{{Name: "Test" + id + "_X", Verdict: v}}}
		}
	}
	panic(id)
}

var pass = grade.Verdict{Kind: failure.Pass}

// printing gives an item's first test what the code printed.
func printing(it grade.ItemResult, p teststream.Printed) grade.ItemResult {
	it.Tests[0].Output = p
	return it
}

// repeated makes an item's verdict come from runs repetitions, passes of
// them passed.
func repeated(it grade.ItemResult, runs, passes int) grade.ItemResult {
	it.Runs, it.Passes = runs, passes
	return it
}

func scheduling(it grade.ItemResult) grade.ItemResult {
	it.Scheduling, it.Tests[0].Scheduling = true, true
	return it
}

func results() map[string]*grade.Result {
	return map[string]*grade.Result{
		"stub": {Kata: kata(), Race: true, Items: []grade.ItemResult{
			item("R1", false, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do (exercises/06-retry/retry.go:9 Do)"}),
			item("R2", false, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
			item("R3", false, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
			item("B1", true, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
		}},
		"mixed": {Kata: kata(), Race: true,
			Gate: []gate.Finding{{File: "exercises/06-retry/retry.go", Line: 40, Rule: gate.RuleRealClock, Message: "time.Sleep uses the real clock"}},
			Items: []grade.ItemResult{
				item("R1", false, pass),
				item("R2", false, grade.Verdict{Kind: failure.Race, Message: "data race: two goroutines touch the same memory without synchronisation",
					Detail: []string{"read at exercises/06-retry/retry.go:12 Do.func1", "previous write at exercises/06-retry/retry.go:13 Do"}}),
				printing(item("R3", false, grade.Verdict{Kind: failure.Assertion, Message: "cancel must return at once", Detail: []string{"Should be true"}}),
					teststream.Printed{Head: []string{"attempt 1", "2000/01/01 00:00:00 pausing 100ms"}}),
				item("B1", true, pass),
			}},
		"printed": {Kata: kata(), Race: true, Items: []grade.ItemResult{
			printing(item("R1", false, pass), teststream.Printed{Head: []string{"a pass prints too, but is not shown"}}),
			printing(item("R2", false, grade.Verdict{Kind: failure.Assertion, Message: "want 3 attempts, got 4"}),
				teststream.Printed{Head: []string{"attempt 1", "attempt 2"}, Cut: 37, Tail: []string{"attempt 40", "attempt 41"}}),
			printing(item("R3", false, grade.Verdict{Kind: failure.Assertion, Message: "cancel must return at once"}),
				teststream.Printed{Head: []string{"2000/01/01 00:00:00 cancelled"}}),
			item("B1", true, pass),
		}},
		"luck": {Kata: kata(), Race: true, Runs: 15, Items: []grade.ItemResult{
			repeated(item("R1", false, pass), 15, 15),
			repeated(item("R2", false, grade.Verdict{Kind: failure.Assertion, Message: "want the latest result, got a stale one"}), 15, 11),
			scheduling(repeated(item("R3", false, grade.Verdict{Kind: failure.Race, Message: "data race: two goroutines touch the same memory without synchronisation"}), 15, 0)),
			scheduling(repeated(item("B1", true, pass), 15, 15)),
		}},
		"compile": {Kata: kata(), NoRace: "cgo is disabled (CGO_ENABLED=0)",
			Build: &grade.BuildFailure{Kind: failure.Compile, Lines: []string{"exercises/06-retry/retry.go:3:1: syntax error"}},
			Items: []grade.ItemResult{
				item("R1", false, grade.Verdict{Kind: failure.Compile, Message: "does not compile"}),
				item("R2", false, grade.Verdict{Kind: failure.Compile, Message: "does not compile"}),
				item("R3", false, grade.Verdict{Kind: failure.Compile, Message: "does not compile"}),
				item("B1", true, grade.Verdict{Kind: failure.Compile, Message: "does not compile"}),
			}},
		"vet": {Kata: kata(), Race: true,
			Gate: []gate.Finding{{File: "exercises/06-retry/retry.go", Line: 31, Rule: gate.RuleVet,
				Message: "go vet: WaitGroup.Add called from inside new goroutine. wg.Add runs inside the goroutine it counts, so Wait can return before that goroutine was counted: call wg.Add before the go statement (or use wg.Go)"}},
			Items: []grade.ItemResult{item("R1", false, pass), item("R2", false, pass), item("R3", false, pass), item("B1", true, pass)}},
		"refused": {Kata: kata(), Race: true, // the gate refuses before anything is built
			Gate: []gate.Finding{{File: "exercises/06-retry/retry.go", Line: 5, Rule: gate.RuleForbidden,
				Message: `import "golang.org/x/sync/errgroup" is not allowed in this kata`, Allowed: "the code may import only context, errors, sync"}},
			Items: []grade.ItemResult{
				item("R1", false, grade.Verdict{Kind: failure.Forbidden, Message: "not run: the code uses something the grader does not allow"}),
				item("R2", false, grade.Verdict{Kind: failure.Forbidden, Message: "not run: the code uses something the grader does not allow"}),
				item("R3", false, grade.Verdict{Kind: failure.Forbidden, Message: "not run: the code uses something the grader does not allow"}),
				item("B1", true, grade.Verdict{Kind: failure.Forbidden, Message: "not run: the code uses something the grader does not allow"}),
			}},
		"passed": {Kata: kata(), Race: true, Items: []grade.ItemResult{
			item("R1", false, pass), item("R2", false, pass), item("R3", false, pass),
			item("B1", true, grade.Verdict{Kind: failure.Assertion, Message: "gave up too late"}),
		}},
	}
}

func TestText(t *testing.T) {
	for name, r := range results() {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			report.Text(&b, r, report.Style{})
			goldenFile(t, name+".txt", b.Bytes())
			var c bytes.Buffer
			report.Text(&c, r, report.Style{Color: true})
			assert.Contains(t, c.String(), "\x1b[", "colour when asked")
			assert.NotContains(t, b.String(), "\x1b[", "no colour when not asked")
		})
	}
}

// What the code printed is shown under the failed items with Verbose;
// without it, one line says how to see it.
func TestTextPrinted(t *testing.T) {
	r := results()["printed"]
	for name, s := range map[string]report.Style{
		"printed-hint.txt": {Verb: "check"},
		"printed-v.txt":    {Verb: "check", Verbose: true},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			report.Text(&b, r, s)
			goldenFile(t, name, b.Bytes())
			assert.NotContains(t, b.String(), "a pass prints too", "a passed item's prints are not news")
		})
	}
	var b bytes.Buffer
	report.Text(&b, results()["passed"], report.Style{Verb: "check"})
	assert.NotContains(t, b.String(), "V=1", "nothing printed, nothing to see")
}

func TestJSON(t *testing.T) {
	r := results()["mixed"]
	var b bytes.Buffer
	require.NoError(t, report.JSON(&b, r, report.Meta{}))
	goldenFile(t, "mixed.json", b.Bytes())
	var decoded map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &decoded))
	assert.Equal(t, float64(1), decoded["schema"])
	assert.Equal(t, false, decoded["passed"], "a gate finding fails the kata even when the score would not")
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestJSONParticipant(t *testing.T) {
	var b bytes.Buffer
	at := time.Date(2030, 5, 6, 14, 2, 11, 0, time.FixedZone("CEST", 2*60*60))
	require.NoError(t, report.JSON(&b, results()["passed"], report.Meta{Participant: "Ada Lovelace", Time: at,
		Fingerprint: fingerprint.Pair{Code: "c0de", Tests: "7e57"}}))
	var g struct {
		Participant, Time string
		Fingerprint       struct{ Code, Tests string }
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &g))
	assert.Equal(t, "Ada Lovelace", g.Participant)
	assert.Equal(t, "2030-05-06T14:02:11+02:00", g.Time, "with its zone")
	assert.Equal(t, "c0de", g.Fingerprint.Code)
	assert.Equal(t, "7e57", g.Fingerprint.Tests)
}

// On the untouched stub, a declared stub pass says why it passes; once
// the code is the learner's, a pass is a plain ✔.
func TestStubPassReason(t *testing.T) {
	k := kata()
	k.StubPasses = []catalog.StubPass{{ID: "R1", Why: "the stub already grows"}}
	r := &grade.Result{Kata: k, Race: true, Untouched: true, Items: []grade.ItemResult{
		item("R1", false, pass),
		item("R2", false, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
		item("R3", false, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
		item("B1", true, grade.Verdict{Kind: failure.NotImplemented, Message: "TODO: implement Do"}),
	}}
	var b bytes.Buffer
	report.Text(&b, r, report.Style{})
	assert.Contains(t, b.String(), "  ✔ R1  grows\n        passes on the untouched stub: the stub already grows\n  ✘ R2")
	r.Untouched = false
	b.Reset()
	report.Text(&b, r, report.Style{})
	assert.NotContains(t, b.String(), "untouched stub")
}
