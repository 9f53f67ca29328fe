package record_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/record"
)

// Replay shows each grade with its time, its verdicts and what changed in
// the code since the grade before, the other events as a line each, and
// calls next between grades.
func TestReplay(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.FixedZone("", 2*60*60))
	grade := func(code string, passed bool, build ...string) *record.Grade {
		v, req := record.Verdict{ID: "R1", Passed: passed, Kind: "pass", Runs: 1, Passes: 1}, 1
		if !passed {
			v, req = record.Verdict{ID: "R1", Kind: "assertion", Message: "want 3 attempts", Runs: 1}, 0
		}
		return &record.Grade{Build: build, Required: req, RequiredTotal: 1, Items: []record.Verdict{v}, Code: map[string]string{"retry.go": code}}
	}
	r := &record.Record{Schema: 1, Kata: "06-retry", Candidate: "Ada", Start: start, Ending: record.Done, Hints: 3,
		Events: []record.Event{
			{At: start.Add(-time.Hour), Kind: record.KindHint, Hint: 1, Via: "hint"},
			{At: start, Kind: record.KindStart},
			{At: start.Add(time.Minute), Kind: record.KindGrade, Via: "start", Grade: grade("package retry\n", false)},
			{At: start.Add(2 * time.Minute), Kind: record.KindGrade, Via: "save", Grade: grade("package retry\nx\n", false, "retry.go:2:1: syntax error")},
			{At: start.Add(3 * time.Minute), Kind: record.KindGrade, Via: "save", Grade: grade("package retry\nfunc Do() {}\n", true)},
			{At: start.Add(3*time.Minute + 30*time.Second), Kind: record.KindEnd, Via: record.Done},
		}}
	var b strings.Builder
	steps := 0
	record.Replay(&b, r, func() { steps++; b.WriteString("[next]\n") })
	assert.Equal(t, 2, steps, "between the three grades")
	assert.Equal(t, `Interview · 06-retry · 2030-05-06 14:00 +02:00 · Ada · 3 grades
Note: this record has no hash chain (written by an older checker): changes to it cannot be detected.

2030-05-06 13:00 +02:00  hint 1 of 3, read with the hint verb, outside the interview's screen

0:00  started: the story shown, the clock running

── 1:00 · graded at the start: 0 of 1 ──
  ✘ R1 assertion: want 3 attempts

The code:

    --- retry.go
    +++ retry.go
    @@ -0,0 +1 @@
    +package retry
[next]

── 2:00 · saved: does not compile: retry.go:2:1: syntax error ──
  retry.go:2:1: syntax error

What changed:

    --- retry.go
    +++ retry.go
    @@ -1 +1,2 @@
     package retry
    +x
[next]

── 3:00 · saved: 1 of 1 ──
  ✔ R1

What changed:

    --- retry.go
    +++ retry.go
    @@ -1,2 +1,2 @@
     package retry
    -x
    +func Do() {}

3:30  ended: done typed
`, b.String())
}

// The first grade shows the code's diff from the code the interview
// started from, when the record holds it; a replay moves through the
// grades as the lines typed say.
func TestReplayPagesAndNavigate(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	grade := func(code string) *record.Grade {
		return &record.Grade{Required: 0, RequiredTotal: 1, Code: map[string]string{"retry.go": code}, Items: []record.Verdict{{ID: "R1", Kind: "leak",
			Message: "goroutines still running after Do returned:", Detail: []string{"chan send (durable) at exercises/06-retry/retry.go:74 Do.func1"}, Runs: 1}}}
	}
	r := &record.Record{Schema: 1, Kata: "06-retry", Start: start, Ending: record.Done,
		StartFiles: map[string]string{"retry.go": "package retry\n"},
		Events: []record.Event{
			{At: start, Kind: record.KindStart},
			{At: start.Add(time.Minute), Kind: record.KindGrade, Via: "start", Grade: grade("package retry\n")},
			{At: start.Add(2 * time.Minute), Kind: record.KindGrade, Via: "save", Grade: grade("package retry\nfunc Do() {}\n")},
			{At: start.Add(3 * time.Minute), Kind: record.KindNote, Note: "asked about jitter"},
			{At: start.Add(5 * time.Minute), Kind: record.KindGrade, Via: "save", Grade: grade("package retry\nfunc Do() { }\n")},
			{At: start.Add(6 * time.Minute), Kind: record.KindEnd, Via: record.Done},
		}}
	_, pages := record.ReplayPages(r)
	require.Len(t, pages, 3)
	assert.Contains(t, pages[0].Text, "The code is the stub, unchanged.")
	assert.Contains(t, pages[0].Text, "  ✘ R1 leak: goroutines still running after Do returned:\n      chan send (durable) at exercises/06-retry/retry.go:74 Do.func1\n", "what the candidate saw below the message")
	assert.Contains(t, pages[2].Text, "3:00  the interviewer noted: asked about jitter", "a note comes with the grade after it")
	assert.Contains(t, pages[2].Text, "6:00  ended: done typed", "the events after the last grade are on the last page")
	r.Events[1].Grade = grade("package retry\n// Do.\n")
	_, pages = record.ReplayPages(r)
	assert.Contains(t, pages[0].Text, "What changed from the stub:\n\n    --- retry.go\n    +++ retry.go\n    @@ -1 +1,2 @@\n     package retry\n    +// Do.\n")

	for _, c := range []struct {
		cur        int
		line       string
		next       int
		quit, fail bool
	}{
		{0, "\n", 1, false, false},
		{2, "\n", 2, true, false}, // past the last grade, Enter ends
		{2, "b\n", 1, false, false},
		{0, "b", 0, false, false},
		{0, "3", 2, false, false},
		{1, "4", 1, false, true},
		{1, "0", 1, false, true},
		{0, "2:00", 1, false, false},
		{0, "4:59", 1, false, false}, // the last grade at or before it
		{0, "0:10", 0, false, false}, // before the first grade: the first
		{0, "99:00", 2, false, false},
		{0, "2:5", 0, false, true},
		{0, "2:75", 0, false, true},
		{1, "q", 1, true, false},
		{1, "\x1b[2J", 1, false, true},
	} {
		next, quit, err := record.Navigate(pages, c.cur, c.line)
		assert.Equal(t, c.next, next, "%q from %d", c.line, c.cur)
		assert.Equal(t, c.quit, quit, "%q from %d", c.line, c.cur)
		assert.Equal(t, c.fail, err != nil, "%q from %d: %v", c.line, c.cur, err)
	}
	_, _, err := record.Navigate(pages, 0, "\x1b[2J")
	assert.NotContains(t, err.Error(), "\x1b", "what was typed is quoted, not obeyed")
}
