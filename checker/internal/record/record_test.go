package record_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/record"
)

func TestPath(t *testing.T) {
	assert.Equal(t, "ada-06.json", record.Path("ada-06.md"))
	assert.Equal(t, "notes.json", record.Path("notes.md"))
	assert.Equal(t, "card.txt.json", record.Path("card.txt"))
}

// Anything that is not a record is refused with one line that says what
// is wrong.
func TestParseRefuses(t *testing.T) {
	for data, want := range map[string]string{
		`{"schema": 1, "kata": "06-retry"`: "not an interview record: the JSON ends early (cut off?)",
		`{"schema": 1,, }`:                 "bad JSON at byte",
		`[1, 2]`:                           "not an interview record",
		`{"schema": 2}`:                    "schema 2",
		`{"schema": 1}`:                    "no kata or start time",
		`{"schema": 1, "kata": "06-retry", "start": "2030-05-06T14:00:00Z", "ending": "bored"}`:                                                                         `ending "bored"`,
		`{"schema": 1, "kata": "06-retry", "start": "2030-05-06T14:00:00Z", "ending": "done", "events": [{"kind": "grade"}]}`:                                           "event 1 is a grade without its verdicts",
		`{"schema": 1, "kata": "06-retry", "start": "2030-05-06T14:00:00Z", "ending": "done", "rubric": {"recommendation": "maybe"}}`:                                   `recommendation "maybe"`,
		`{"schema": 1, "kata": "06-retry", "start": "2030-05-06T14:00:00Z", "ending": "done", "rubric": {"competencies": [{"competency": "correctness", "level": 5}]}}`: "level 5",
	} {
		_, err := record.Parse([]byte(data))
		if assert.Error(t, err, data) {
			assert.Contains(t, err.Error(), want, data)
			assert.NotContains(t, err.Error(), "\n", "one line")
		}
	}
}

// A filled rubric shows on the scorecard; a session stopped with Ctrl-C
// and a checkout without git history are flagged.
func TestScorecardRubricAndFlags(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(7 * time.Minute),
		Ending: record.Stopped, Race: true, StartCode: record.StartUnknown, Rubric: record.NewRubric(),
		Items: []record.Item{{ID: "R1", Text: "retries"}},
		Events: []record.Event{{At: start, Kind: record.KindStart}, {At: start.Add(3 * time.Minute), Kind: record.KindGrade, Via: "start",
			Grade: &record.Grade{Required: 1, RequiredTotal: 1, Passed: true, Runs: 1, Items: []record.Verdict{{ID: "R1", Passed: true, Kind: "pass", Runs: 1, Passes: 1}}}}}}
	r.Rubric.Competencies[1] = record.Assessment{Competency: "correctness", Level: 3, Notes: "missed | the cap"}
	r.Rubric.Recommendation = "yes"
	data := record.Scorecard(r, nil)
	for _, want := range []string{
		"- ⚠ Whether the code at the start was the untouched stub is not known",
		"- ⚠ Stopped with Ctrl-C: no final repeated grade",
		"(the last grade, one run)",
		"| Correctness | 3 solid | missed \\| the cap |\n",
		"| Clarifying questions | _ |  |\n",
		"**Recommendation:** yes\n",
		"Its diff from the stub is not known",
		"\nStill to fill in `rubric` in the record's JSON: Clarifying questions, Concurrency safety, Testing instinct, Communication; then render this again with `checker scorecard RECORD`.\n",
	} {
		assert.Contains(t, data, want)
	}
	require.Len(t, record.Flags(r, nil), 2)

	// Filled in, the rubric asks for nothing more.
	for i := range r.Rubric.Competencies {
		r.Rubric.Competencies[i].Level = 2
	}
	data = record.Scorecard(r, nil)
	assert.Contains(t, data, "## Rubric\n\n| competency | level | notes |\n")
	assert.NotContains(t, data, "fill in")
	assert.NotContains(t, data, "Fill in")

	empty := record.Scorecard(&record.Record{Schema: 1, Kata: "06-retry", Start: r.Start, Rubric: record.NewRubric()}, nil)
	assert.Contains(t, empty, "Fill in `rubric` in the record's JSON (level 1 to 4, notes, recommendation), then render this again")
}

// The final grade's table says, for every item, how many of its runs
// passed of those that finished, and how many of the runs asked for never
// ran when a hang or a crash ended them; an item that never ran has no
// runs to count.
func TestScorecardRunsOfEveryItem(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	final := &record.Grade{RequiredTotal: 4, Runs: 60, CPU: "1,2,4", Items: []record.Verdict{
		{ID: "R1", Passed: true, Kind: "pass", Runs: 60, Passes: 60},
		{ID: "R2", Kind: "assertion", Runs: 60, Passes: 57},
		{ID: "R3", Kind: "deadlock", Runs: 1, Passes: 0},
		{ID: "R4", Kind: "exit"},
	}}
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(7 * time.Minute),
		Ending: record.Done, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(), Final: final,
		Items:  []record.Item{{ID: "R1", Text: "one"}, {ID: "R2", Text: "two"}, {ID: "R3", Text: "three"}, {ID: "R4", Text: "four"}},
		Events: []record.Event{{At: start, Kind: record.KindStart}, {At: start.Add(7 * time.Minute), Kind: record.KindFinal, Grade: final}}}
	data := record.Scorecard(r, nil)
	for _, want := range []string{
		"| ✔ | **R1** one |  | 60 of 60 | pass |\n",
		"| ✘ | **R2** two |  | 57 of 60 | assertion |\n",
		"| ✘ | **R3** three |  | 0 of 1 (59 more asked for never ran: a hang or a crash ends the runs) | deadlock |\n",
		"| ✘ | **R4** four |  | none of 60 finished: a hang or a crash ends the runs | exit |\n",
	} {
		assert.Contains(t, data, want)
	}
}

// What a comparison with the witness found heads the scorecard, and is
// flagged first thing to check; a difference that quotes escape
// sequences from a hostile record reaches the terminal escaped.
func TestScorecardWitness(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(7 * time.Minute),
		Ending: record.Done, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(),
		Events: []record.Event{{At: start, Kind: record.KindStart}}}
	assert.Contains(t, record.Scorecard(r, nil), "**Witness:** none saw this interview.\n")
	r.Witness = &record.Witness{URL: "http://10.0.0.2:8080", Room: "abcdefabcdef"}
	assert.Contains(t, record.Scorecard(r, nil), "**Witness:** room abcdefabcdef at http://10.0.0.2:8080 kept a copy as it happened; compare with it: `checker scorecard RECORD --witness http://10.0.0.2:8080`.\n")
	r.Witnessed = &record.Witnessed{Events: 1}
	assert.Contains(t, record.Scorecard(r, nil), "**Witness:** ✔ the record matches the copy the witness kept as it happened: its 1 event, and the record it got at the end.\n")
	r.Witnessed.Differences = []string{"Event 1 (st\x1b[31mart at 0:00) was changed after the witness got it."}
	card := record.Scorecard(r, nil)
	assert.Contains(t, card, "**Witness:** ✘ the record differs from the copy the witness kept as it happened:\n\n- Event 1 (st")
	assert.Contains(t, card, "- ⚠ The record differs from its witness's copy (1 difference): trust the witness's copy, not this scorecard.")
	assert.NotContains(t, card, "\x1b")
	assert.Equal(t, "Event 1 (st\x1b[31mart at 0:00) was changed after the witness got it.", r.Witnessed.Differences[0], "escaping works on a copy")
}

// The times the rubric's notes cite are listed with the record's event
// nearest to each, so that a committee can check a note against the
// record.
func TestScorecardRubricCitesEventsByTime(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	grade := &record.Grade{Required: 1, RequiredTotal: 1, Passed: true, Runs: 1, Items: []record.Verdict{{ID: "R1", Passed: true, Kind: "pass", Runs: 1, Passes: 1}}}
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(20 * time.Minute),
		Ending: record.Done, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(), Ask: []string{"How many attempts?"},
		Items: []record.Item{{ID: "R1", Text: "retries"}},
		Events: []record.Event{{At: start, Kind: record.KindStart},
			{At: start.Add(70 * time.Second), Kind: record.KindAsked, Question: 1},
			{At: start.Add(12*time.Minute + 28*time.Second), Kind: record.KindGrade, Via: "save", Grade: grade}}}
	r.Rubric.Competencies[0].Notes = "asked about attempts at 1:05"
	r.Rubric.Notes = "the fix at 12:30 was clean; nothing at 18:00"
	card := record.Scorecard(r, nil)
	assert.Contains(t, card, "**Times the notes cite, with the record's event nearest to each:**\n\n"+
		"- 1:05: the candidate asked Ask-first question 1: How many attempts? (at 1:10)\n"+
		"- 12:30: saved: 1 of 1 (at 12:28)\n"+
		"- 18:00: no event of the record within a minute of it\n")
}

// A bug-hunt interview started from the planted code, not the stub; a
// hunt planted or given up by hand is named for what it was, never as
// solution --give-up, and a hunt's code planted mid-session is no save.
func TestScorecardBugHunts(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	grade := &record.Grade{Required: 0, RequiredTotal: 1, Runs: 1, Items: []record.Verdict{{ID: "R1", Kind: "assertion", Runs: 1}}}
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: start, End: start.Add(7 * time.Minute),
		Ending: record.Done, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(), Diff: "--- retry.go\n+++ retry.go\n",
		Items: []record.Item{{ID: "R1", Text: "retries"}}, Hunt: &record.Hunt{Symptom: "it ran long"},
		Events: []record.Event{{At: start, Kind: record.KindStart}, {At: start.Add(time.Minute), Kind: record.KindGrade, Via: "start", Grade: grade}}}
	data := record.Scorecard(r, nil)
	assert.Contains(t, data, "nothing to flag (no give-up, no reference shown, no hint before the start, started from the planted code, race check on, no save of 40 lines or more, no jump from a third of the requirements to all).\n\n- **Date:**")
	assert.Contains(t, data, "Its diff from the planted code:")
	assert.Contains(t, data, "planted when the kit was packed (the mistake and its fix: the answers file written beside the kit)")
	assert.NotContains(t, data, "stub")

	r.Hunt, r.StartCode = nil, record.StartChanged
	r.Events = append(r.Events,
		record.Event{At: start.Add(-time.Hour), Kind: record.KindGaveUp, Via: "bughunt"},
		record.Event{At: start.Add(2 * time.Minute), Kind: record.KindGrade, Via: "plant", Grade: grade},
		record.Event{At: start.Add(3 * time.Minute), Kind: record.KindHuntGaveUp},
		record.Event{At: start.Add(4 * time.Minute), Kind: record.KindHuntGaveUp, Via: "packed"})
	data = record.Scorecard(r, nil)
	for _, want := range []string{
		"- ⚠ A bug hunt was planted with `bughunt 06` before the interview, at 2030-05-06 13:00 +00:00, before the kata was passed: apart from its mistake, that code is the reference solution.\n",
		"- ⚠ A bug hunt was planted with `bughunt 06` during the interview, at 2:00: the grade then is of the planted code, not of a save of the candidate's.\n",
		"- ⚠ Gave up the bug hunt with `bughunt 06 --give-up` during the interview, at 3:00: the planted change and its fix were shown.\n",
		"- ⚠ Gave up the bug hunt with `bughunt 06 --give-up` during the interview, at 4:00 (planted when the kit was packed: nothing was shown).\n",
		"- ⚠ Code was already written when the interview began (not the untouched stub, graded at once: 0 of 1).\n",
		"| 2:00 | a bug hunt planted with `bughunt 06`, not a save: 0 of 1 |\n",
		"| 3:00 | gave up the bug hunt: `bughunt 06 --give-up` |\n",
		"- **Grades:** 2 (1 at the start, 1 of a bug hunt's planted code)",
	} {
		assert.Contains(t, data, want)
	}
	assert.NotContains(t, data, "solution 06 --give-up")
}

// A record that cannot be read is refused in one line that says why and
// names the event at fault: cut off, nested too deep, a field of the
// wrong type. Its bytes are shown escaped.
func TestParseBadInput(t *testing.T) {
	head := `{"schema": 1, "kata": "06-retry", "start": "2030-05-06T14:00:00Z", "ending": "done", "events": [{"at": "2030-05-06T14:00:00Z", "kind": "start"}, `
	for data, want := range map[string]string{
		head + `{"at": "2030-05-06T14:01:00Z", "kind": "gra`:                        "not an interview record: event 2: the JSON ends early (cut off?)",
		head + `{"at": 5, "kind": "grade"}]}`:                                       "not an interview record: event 2: a time that is not an RFC 3339 string",
		head + `{"at": "2030-05-06T14:01:00Z", "kind": "x"}, {"at": "yesterday"}]}`: "not an interview record: event 3: a time that is not an RFC 3339 string",
		head + `{"at": "2030-05-06T14:01:00Z", "kind": "x"}, {"kind": 7}]}`:         "not an interview record: event 3: events.kind holds a JSON number, not a string",
		head + `{"at": "2030-05-06T14:01:00Z", "kind": "x` + "\x1b[2J" + `"}]}`:     `not an interview record: event 2: bad JSON at byte 187: invalid character '\x1b' in string literal`,
		head + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "]}":       "not an interview record: event 2: the JSON is nested too deep (more than 10000 levels) at byte",
		`{"schema": 1, "ask": ` + strings.Repeat(`{"a": `, 20000):                   "not an interview record: the JSON is nested too deep (more than 10000 levels) at byte",
	} {
		_, err := record.Parse([]byte(data))
		if assert.Error(t, err, data[:min(len(data), 200)]) {
			assert.Contains(t, err.Error(), want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NotContains(t, err.Error(), "\x1b")
		}
	}
}

// Load refuses a file larger than any record, and one that is not a
// regular file, without reading it.
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(record.MaxSize+1)) // sparse: nothing is written
	require.NoError(t, f.Close())
	_, err = record.Load(huge)
	require.Error(t, err)
	assert.Equal(t, "65 MiB, more than an interview record can be (64 MiB): not read", err.Error())

	_, err = record.Load(dir)
	require.Error(t, err)
	assert.Equal(t, "not a regular file", err.Error())
}
