package record_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/record"
	"gokata/checker/internal/tokensim"
)

var start = time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)

// graded is a grade event at d into the interview, made because of via,
// with required of total requirements passing, of code (retry.go).
func graded(d time.Duration, via string, required, total int, code string) record.Event {
	g := &record.Grade{Required: required, RequiredTotal: total, Passed: required == total, Runs: 1, Code: map[string]string{"retry.go": code}}
	return record.Event{At: start.Add(d), Kind: record.KindGrade, Via: via, Grade: g}
}

// session is a finished interview of kata 06 that started from stub, with
// the grades gs.
func session(stub string, gs ...record.Event) *record.Record {
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(30 * time.Minute),
		Ending: record.TimeUp, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(), Copy: record.CopyRepository,
		Items:  []record.Item{{ID: "R1", Text: "retries"}},
		Events: append([]record.Event{{At: start, Kind: record.KindStart}}, gs...)}
	if stub != "" {
		r.StartFiles = map[string]string{"retry.go": stub}
	}
	return r
}

// kata is a kata of the repository: its reference and its untouched stub.
func kata(t *testing.T, slug string) (catalog.Kata, record.Reference, string) {
	t.Helper()
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	k, ok := cat.Find(slug)
	require.True(t, ok, slug)
	srcs, err := mutant.Reference(k.Solution)
	require.NoError(t, err)
	ref := record.Reference{}
	for _, s := range srcs {
		ref[s.Name] = string(s.Data)
	}
	stub, err := pristine.Read(context.Background(), os.Environ(), k)
	require.NoError(t, err)
	var code []string
	for _, c := range stub.Files {
		code = append(code, string(c))
	}
	require.Len(t, code, 1, "one file in the stub")
	return k, ref, code[0]
}

// numbered is n lines of code, each its own.
func numbered(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}

// A pasted reference is flagged with its time and figures, by what the
// measures see: the code close to the reference, the lines it added and
// the jump in the score.
func TestPastedReferenceIsFlagged(t *testing.T) {
	_, ref, stub := kata(t, "06-retry")
	paste := ref["retry.go"]
	edited := stub + "\n// Pause is the wait.\nfunc pause() {}\n"
	r := session(stub,
		graded(30*time.Second, "start", 0, 7, stub),
		graded(10*time.Minute, "save", 1, 7, edited),
		graded(12*time.Minute+34*time.Second, "save", 7, 7, paste))
	added := record.Added(map[string]string{"retry.go": edited}, map[string]string{"retry.go": paste})
	assert.Greater(t, added, 90, "the reference adds some hundred lines to the stub")
	assert.Equal(t, []string{
		"The final code, first saved at 12:34, is 100% identical in tokens to the reference (solutions/06-retry/).",
		fmt.Sprintf("The save at 12:34 added %d lines at once (since the grade at 10:00).", added),
		"The save at 12:34 went from 1 of 7 to 7 of 7 requirements.",
	}, record.Flags(r, ref))

	// Comments taken out and the layout changed, it is still identical in
	// tokens; with a variable renamed, nearly so.
	var bare []string
	for _, l := range strings.Split(paste, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			bare = append(bare, l)
		}
	}
	reworded := strings.Join(bare, "\n")
	renamed := strings.ReplaceAll(reworded, "clk", "c")
	require.NotEqual(t, reworded, renamed)
	r = session(stub, graded(30*time.Second, "start", 0, 7, stub), graded(5*time.Minute, "save", 6, 7, renamed), graded(9*time.Minute, "save", 7, 7, reworded))
	flags := record.Flags(r, ref)
	require.NotEmpty(t, flags)
	assert.Regexp(t, `^The save at 5:00 is 9\d% similar in tokens to the reference \(solutions/06-retry/\), the first grade at 90% or more\.$`, flags[0])
	assert.Equal(t, "The final code is 100% identical in tokens to the reference (solutions/06-retry/).", flags[1])

	// Pasted, then rewritten: the paste still shows, with the final figure.
	r = session(stub, graded(30*time.Second, "start", 0, 7, stub), graded(5*time.Minute, "save", 7, 7, paste), graded(9*time.Minute, "end", 0, 7, stub))
	assert.Regexp(t, `^The save at 5:00 is 100% identical in tokens to the reference \(solutions/06-retry/\) \(the final code: [1-4]\d%\)\.$`, record.Flags(r, ref)[0])

	// Without the reference at hand, nothing is compared, and the
	// scorecard says so.
	assert.NotContains(t, strings.Join(record.Flags(r, nil), "\n"), "reference")
	card := record.Scorecard(r, nil)
	assert.Contains(t, card, "\n\nThe code was not compared with the reference: this copy has none (`checker scorecard RECORD` in a clone of the repository compares it).\n\n- **Date:**")
	assert.NotContains(t, record.Scorecard(r, ref), "not compared")
}

// The stubs, the correct alternatives and the versions on libraries stay
// under CloseToReference; the figures are logged (go test -v).
func TestAlternativesAreNotCloseToTheReference(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	require.Len(t, cat.Katas, 10)
	similarity := func(ref record.Reference, code string) float64 {
		return tokensim.Similarity(tokensim.Tokens(ref), tokensim.Tokens(map[string]string{"x.go": code}))
	}
	alternatives := 0
	for _, k := range cat.Katas {
		_, ref, stub := kata(t, k.Slug)
		s := similarity(ref, stub)
		assert.Less(t, s, 0.5, "%s: the stub is well under the threshold", k.Slug)
		line := fmt.Sprintf("%s: stub %d%%", k.Slug, tokensim.Percent(s))
		paths, err := filepath.Glob(filepath.Join(k.Solution, "testdata", "*", "*.go")) // alternatives/ and libraries/
		require.NoError(t, err)
		require.NotEmpty(t, paths)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			s := similarity(ref, string(data))
			assert.Less(t, s, record.CloseToReference, "%s: %s is a correct solution of its own", k.Slug, p)
			line += fmt.Sprintf(", %s %d%%", strings.TrimSuffix(filepath.Base(p), ".go"), tokensim.Percent(s))
			alternatives++
		}
		t.Log(line)
		r := session(stub, graded(time.Minute, "start", 0, 6, stub), graded(2*time.Minute, "save", 0, 6, ref[filepath.Base(ref1(ref))]))
		assert.Contains(t, strings.Join(record.Flags(r, ref), "\n"), "100% identical in tokens", "%s: the reference itself is flagged", k.Slug)
	}
	assert.GreaterOrEqual(t, alternatives, 40)
}

// ref1 is the name of a reference's one file.
func ref1(ref record.Reference) string {
	for n := range ref {
		return n
	}
	return ""
}

// A save that adds ManyLines lines at once is flagged, with the grade it
// is compared with; a small edit is not, nor lines moved or re-indented.
func TestManyLinesAtOnce(t *testing.T) {
	stub := "package retry\n\nfunc Do() {\n\tpanic(\"TODO\")\n}\n"
	forty := stub + numbered(40, "var v%d = %[1]d")
	ten := forty + numbered(10, "var w%d = %[1]d")
	moved := "package retry\n\n" + numbered(10, "\t\tvar w%d = %[1]d") + numbered(40, "  var v%d = %[1]d") + "\nfunc Do() {\n\tpanic(\"TODO\")\n}\n"
	r := session(stub,
		graded(time.Minute, "start", 0, 7, stub),
		graded(5*time.Minute, "save", 0, 7, forty),
		graded(12*time.Minute, "save", 0, 7, ten),
		graded(13*time.Minute, "save", 0, 7, moved),
		graded(14*time.Minute, "end", 0, 7, moved+numbered(45, "var x%d = %[1]d")))
	assert.Equal(t, []string{
		"The save at 5:00 added 40 lines at once (since the grade at 1:00).",
		"The unsaved edit graded at the end (14:00) added 45 lines at once (since the grade at 13:00).",
	}, record.Flags(r, nil))
	assert.Equal(t, 39, record.Added(map[string]string{"retry.go": stub}, map[string]string{"retry.go": stub + numbered(39, "x%d()")}))
	assert.Equal(t, 2, record.Added(map[string]string{"a.go": "a\n\n  b\n"}, map[string]string{"a.go": "b\na\na\n\n\n", "b.go": "\tb\n"}), "a second a and a second b")

	// The first grade is compared with the code the interview started
	// from, when the record has it.
	r = session(stub, graded(time.Minute, "start", 0, 7, forty))
	r.StartCode = record.StartChanged
	assert.Contains(t, record.Flags(r, nil), "The code graded at the start (1:00) has 40 lines more than the stub.")
	r.StartFiles = nil
	assert.Equal(t, []string{"Code was already written when the interview began (not the untouched stub, graded at once: 0 of 7)."}, record.Flags(r, nil))

	// A bug hunt planted during the session is no save of the candidate's:
	// the next save is compared with it.
	r = session(stub, graded(time.Minute, "start", 0, 7, stub), graded(2*time.Minute, "plant", 6, 7, forty), graded(3*time.Minute, "save", 6, 7, ten))
	assert.Equal(t, []string{"A bug hunt was planted with `bughunt 06` during the interview, at 2:00: the grade then is of the planted code, not of a save of the candidate's."}, record.Flags(r, nil))
}

// A save that goes from at most a third of the requirements to all of
// them is flagged; a smaller step is not, and a save that did not compile
// measures nothing.
func TestScoreJumps(t *testing.T) {
	code := func(n int) string { return fmt.Sprintf("package retry\n\nvar step = %d\n", n) }
	r := session("",
		graded(time.Minute, "start", 1, 7, code(1)),
		graded(5*time.Minute, "save", 7, 7, code(2)),
		graded(6*time.Minute, "save", 5, 7, code(3)),
		graded(7*time.Minute, "save", 7, 7, code(4)),
		graded(8*time.Minute, "save", 2, 7, code(5)),
		graded(9*time.Minute, "save", 0, 7, code(6)),
		graded(10*time.Minute, "save", 7, 7, code(7)),
		graded(11*time.Minute, "save", 3, 7, code(8)),
		graded(12*time.Minute, "save", 7, 7, code(9)))
	r.Events[6].Grade.Build = []string{"retry.go:3:1: syntax error"}
	assert.Equal(t, []string{
		"The save at 5:00 went from 1 of 7 to 7 of 7 requirements.",
		"The save at 10:00 went from 2 of 7 (at 8:00; the grades between did not compile) to 7 of 7 requirements.",
	}, record.Flags(r, nil))

	assert.True(t, record.Jumped(&record.Grade{Required: 0, RequiredTotal: 6}, &record.Grade{Required: 6, RequiredTotal: 6}))
	assert.True(t, record.Jumped(&record.Grade{Required: 2, RequiredTotal: 6}, &record.Grade{Required: 6, RequiredTotal: 6}), "kata 07's stub passes 2 of 6")
	assert.False(t, record.Jumped(&record.Grade{Required: 3, RequiredTotal: 6}, &record.Grade{Required: 6, RequiredTotal: 6}))
	assert.False(t, record.Jumped(&record.Grade{Required: 0, RequiredTotal: 7}, &record.Grade{Required: 6, RequiredTotal: 7}), "not all")
	assert.False(t, record.Jumped(&record.Grade{}, &record.Grade{}), "nothing to pass")

	// A bug hunt planted during the session did not jump: it is not the
	// candidate's.
	r = session("", graded(time.Minute, "start", 0, 7, code(1)), graded(2*time.Minute, "plant", 7, 7, code(2)))
	assert.Len(t, record.Flags(r, nil), 1, "the plant, and no jump")
}

// A bug hunt run in a clone of the repository had the reference on disk;
// one in a kit did not, nor is it known for a record that does not say.
// The hunt's code is the reference with a mistake, so closeness to the
// reference is not measured in a hunt.
func TestBugHuntWithSolutionsOnDisk(t *testing.T) {
	_, ref, _ := kata(t, "06-retry")
	code := ref["retry.go"]
	r := session(code, graded(time.Minute, "start", 6, 7, code))
	r.Hunt = &record.Hunt{Mutant: "clksleep", Mistake: "sleeps on the real clock", Symptom: "slow"}
	want := "The bug hunt ran in a clone of the repository: solutions/ was on disk and readable, so the planted mistake's fix could be read there (solutions/06-retry/)."
	assert.Equal(t, []string{want}, record.Flags(r, ref))
	card := record.Scorecard(r, ref)
	assert.Contains(t, card, "**Check first:**\n\n- ⚠ "+want+"\n\n- **Date:**")

	for _, copy := range []string{record.CopyKit, ""} {
		r.Copy = copy
		assert.Empty(t, record.Flags(r, ref), copy)
		assert.Contains(t, record.Scorecard(r, ref), "**Check first:** nothing to flag (no give-up, no reference shown, no hint before the start, started from the planted code, race check on, no save of 40 lines or more, no jump from a third of the requirements to all).\n\n- **Date:**")
	}
	r.Hunt, r.Copy = nil, record.CopyRepository
	assert.Equal(t, []string{"The final code, first graded at the start (1:00), is 100% identical in tokens to the reference (solutions/06-retry/)."}, record.Flags(r, ref))

	// What the record names reaches the scorecard escaped.
	r.Hunt, r.Kata = &record.Hunt{Symptom: "slow"}, "06-retry\x1b]0;owned\a"
	assert.Contains(t, record.Scorecard(r, ref), "0;owned")
	assert.NotContains(t, record.Scorecard(r, ref), "\x1b")
}

// With nothing to flag, the scorecard says what was checked: the
// comparison with the reference when there was one.
func TestNothingToFlag(t *testing.T) {
	_, ref, stub := kata(t, "06-retry")
	r := session(stub, graded(time.Minute, "start", 0, 7, stub), graded(9*time.Minute, "save", 3, 7, stub+"\nfunc pause() {}\n"))
	assert.Empty(t, record.Flags(r, ref))
	assert.Contains(t, record.Scorecard(r, ref), "**Check first:** nothing to flag (no give-up, no reference shown, no hint before the start, started from the stub, race check on, no save of 40 lines or more, no jump from a third of the requirements to all, no grade 90% or more similar in tokens to the reference).\n\n- **Date:**")
}
