package record_test

import (
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
		`{"schema": 1, "kata": "06-retry"`: "not an interview record: unexpected EOF",
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
	data := record.Scorecard(r)
	for _, want := range []string{
		"- ⚠ Whether the code at the start was the untouched stub is not known",
		"- ⚠ Stopped with Ctrl-C: no final repeated grade",
		"(the last grade, one run)",
		"| Correctness | 3 solid | missed \\| the cap |\n",
		"| Clarifying questions | _ |  |\n",
		"**Recommendation:** yes\n",
		"Its diff from the stub is not known",
	} {
		assert.Contains(t, data, want)
	}
	require.Len(t, record.Flags(r), 2)
}
