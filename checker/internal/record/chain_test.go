package record_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/record"
)

var chainStart = time.Date(2030, 5, 6, 14, 0, 0, 0, time.FixedZone("", 2*60*60))

// sealed is a record of seven events as Save writes it: start, answered,
// a grade at 1:00 (0 of 2), a hint, a grade at 3:00 (2 of 2), the end and
// the final grade.
func sealed(t *testing.T) []byte {
	t.Helper()
	grade := func(req int, code string) *record.Grade {
		g := &record.Grade{Required: req, RequiredTotal: 2, Runs: 1, Passed: req == 2, Code: map[string]string{"retry.go": code}}
		for i, id := range []string{"R1", "R2"} {
			g.Items = append(g.Items, record.Verdict{ID: id, Passed: i < req, Kind: "assertion", Runs: 1})
		}
		return g
	}
	at := func(d time.Duration) time.Time { return chainStart.Add(d) }
	final := grade(2, "package retry // <done>\n")
	final.Runs = 60
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Candidate: "Ada", Minutes: 30,
		Start: chainStart, End: at(4 * time.Minute), Ending: record.Done, Race: true, Hints: 3,
		Items: []record.Item{{ID: "R1", Text: "retries"}, {ID: "R2", Text: "stops"}}, Ask: []string{"How many?"},
		StartCode: record.StartStub, Rubric: record.NewRubric(), Final: final, Diff: "--- retry.go\n+++ retry.go\n",
		Events: []record.Event{
			{At: at(0), Kind: record.KindStart},
			{At: at(30 * time.Second), Kind: record.KindAnswered},
			{At: at(time.Minute), Kind: record.KindGrade, Via: "start", Grade: grade(0, "package retry\n")},
			{At: at(2 * time.Minute), Kind: record.KindHint, Hint: 1, Via: "interview"},
			{At: at(3 * time.Minute), Kind: record.KindGrade, Via: "save", Grade: grade(2, "package retry // done\n")},
			{At: at(4 * time.Minute), Kind: record.KindEnd, Via: record.Done},
			{At: at(5 * time.Minute), Kind: record.KindFinal, Grade: final},
		}}
	path := filepath.Join(t.TempDir(), "ada.json")
	require.NoError(t, record.Save(path, r))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// edit is data with f applied to its JSON.
func edit(t *testing.T, data []byte, f func(top map[string]any, events []any) []any) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	require.NoError(t, dec.Decode(&top))
	top["events"] = f(top, top["events"].([]any))
	out, err := json.MarshalIndent(top, "", "  ")
	require.NoError(t, err)
	return out
}

func event(events []any, n int) map[string]any { return events[n-1].(map[string]any) }

func chainOf(t *testing.T, data []byte) record.Chain {
	t.Helper()
	r, err := record.Parse(data)
	require.NoError(t, err)
	return r.Chain()
}

// A record as written is intact, also after its rubric is filled in and
// after a tool rewrote its JSON without changing what it says.
func TestChainIntact(t *testing.T) {
	data := sealed(t)
	assert.Equal(t, record.Chain{State: record.ChainIntact}, chainOf(t, data))
	assert.Contains(t, string(data), `"seq": 7,`)
	assert.Contains(t, string(data), `"seal": {`)

	rubric := edit(t, data, func(top map[string]any, events []any) []any {
		top["rubric"] = map[string]any{"recommendation": "yes", "notes": "asked well"}
		return events
	})
	assert.Equal(t, record.ChainIntact, chainOf(t, rubric).State, "the rubric is the interviewer's to fill in")

	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, data))
	assert.Equal(t, record.ChainIntact, chainOf(t, compact.Bytes()).State, "the same JSON, laid out otherwise")
}

// Every kind of change is found where it is, with the event's kind and
// time when there is an event to name.
func TestChainChanged(t *testing.T) {
	data := sealed(t)
	for name, tc := range map[string]struct {
		change func(top map[string]any, events []any) []any
		want   record.Chain
		text   string
	}{
		"a grade's score edited": {
			change: func(_ map[string]any, events []any) []any {
				event(events, 3)["grade"].(map[string]any)["required"] = json.Number("2")
				return events
			},
			want: record.Chain{State: record.ChainChanged, Event: 3, What: "grade at 1:00"},
			text: "record changed at event 3 (grade at 1:00)",
		},
		"an event deleted": {
			change: func(_ map[string]any, events []any) []any {
				return append(events[:3:3], events[4:]...) // the hint
			},
			want: record.Chain{State: record.ChainChanged, Event: 4, What: "grade at 3:00"},
		},
		"two events swapped": {
			change: func(_ map[string]any, events []any) []any {
				events[2], events[3] = events[3], events[2]
				return events
			},
			want: record.Chain{State: record.ChainChanged, Event: 3, What: "hint at 2:00"},
		},
		"an event added by hand": {
			change: func(_ map[string]any, events []any) []any {
				added := map[string]any{"at": chainStart.Add(90 * time.Second).Format(time.RFC3339), "kind": "hint", "hint": json.Number("2")}
				return append(events[:3:3], append([]any{added}, events[3:]...)...)
			},
			want: record.Chain{State: record.ChainChanged, Event: 4, What: "hint at 1:30"},
		},
		"an event added, its chain faked": {
			change: func(_ map[string]any, events []any) []any {
				added := map[string]any{"at": chainStart.Add(90 * time.Second).Format(time.RFC3339), "kind": "hint", "hint": json.Number("2"), "seq": json.Number("4"), "prev": event(events, 4)["prev"]}
				return append(events[:3:3], append([]any{added}, events[3:]...)...)
			},
			want: record.Chain{State: record.ChainChanged, Event: 4, What: "hint at 1:30"},
		},
		"the last event edited": {
			change: func(_ map[string]any, events []any) []any {
				event(events, 7)["at"] = chainStart.Add(6 * time.Minute).Format(time.RFC3339)
				return events
			},
			want: record.Chain{State: record.ChainChanged, Event: 7, What: "final at 6:00"},
		},
		"the last event deleted": {
			change: func(_ map[string]any, events []any) []any { return events[:6] },
			want:   record.Chain{State: record.ChainChanged, Event: 7, What: "no longer there: the chain was sealed with 7 events"},
			text:   "record changed at event 7 (no longer there: the chain was sealed with 7 events)",
		},
		"the final grade edited": {
			change: func(top map[string]any, events []any) []any {
				top["final"].(map[string]any)["required"] = json.Number("3")
				return events
			},
			want: record.Chain{State: record.ChainChanged, End: true},
			text: "record changed after the last event (end, final grade or diff)",
		},
		"the diff edited": {
			change: func(top map[string]any, events []any) []any { top["diff"] = ""; return events },
			want:   record.Chain{State: record.ChainChanged, End: true},
		},
		"the seal removed": {
			change: func(top map[string]any, events []any) []any { delete(top, "seal"); return events },
			want:   record.Chain{State: record.ChainChanged, End: true},
		},
		"the header edited": {
			change: func(top map[string]any, events []any) []any { top["candidate"] = "Grace"; return events },
			want:   record.Chain{State: record.ChainChanged},
			text:   "record changed: its header (kata, candidate, start, items, …)",
		},
		"a header part removed": {
			change: func(top map[string]any, events []any) []any { delete(top, "race"); return events },
			want:   record.Chain{State: record.ChainChanged},
		},
		"one event's chain removed": {
			change: func(_ map[string]any, events []any) []any {
				delete(event(events, 5), "prev")
				return events
			},
			want: record.Chain{State: record.ChainChanged, Event: 5, What: "grade at 3:00"},
		},
		"the whole chain removed": {
			change: func(top map[string]any, events []any) []any {
				delete(top, "seal")
				for _, e := range events {
					delete(e.(map[string]any), "seq")
					delete(e.(map[string]any), "prev")
				}
				return events
			},
			want: record.Chain{State: record.ChainMissing},
			text: "this record has no hash chain (written by an older checker): changes to it cannot be detected",
		},
		"no chain, events out of order": {
			change: func(top map[string]any, events []any) []any {
				delete(top, "seal")
				for _, e := range events {
					delete(e.(map[string]any), "seq")
					delete(e.(map[string]any), "prev")
				}
				events[2], events[3] = events[3], events[2]
				return events
			},
			want: record.Chain{State: record.ChainChanged, Event: 4, What: "grade at 1:00, before the event ahead of it"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := chainOf(t, edit(t, data, tc.change))
			assert.Equal(t, tc.want, got)
			if tc.text != "" {
				assert.Equal(t, tc.text, got.String())
			}
		})
	}
}

// The scorecard says first what the chain says and that no witness saw
// the interview; a changed record is the first thing to check.
func TestScorecardChain(t *testing.T) {
	data := sealed(t)
	r, err := record.Parse(data)
	require.NoError(t, err)
	card := record.Scorecard(r, nil)
	assert.True(t, strings.HasPrefix(card, "# Interview scorecard · 06 · Retry\n\n"+
		"**Record:** hash chain intact, as far as the record can tell; only a witness can vouch for it (the chain has no secret: it shows an edit by hand, not a forgery that computes every hash again).\n\n"+
		"**Witness:** none saw this interview.\n\n"+
		"**Check first:**"), card) // this record jumps from 0 to every requirement in one save

	forged := edit(t, data, func(_ map[string]any, events []any) []any {
		event(events, 3)["grade"].(map[string]any)["required"] = json.Number("2")
		return events
	})
	r, err = record.Parse(forged)
	require.NoError(t, err)
	card = record.Scorecard(r, nil)
	assert.True(t, strings.HasPrefix(card, "# Interview scorecard · 06 · Retry\n\n"+
		"**Record:** ✘ record changed at event 3 (grade at 1:00).\n\n"+
		"**Witness:** none saw this interview.\n\n"+
		"**Check first:**\n\n"+
		"- ⚠ The record is not as the interview wrote it: record changed at event 3 (grade at 1:00). This scorecard shows it as it is now; regrade the candidate's files to know their score.\n"), card)

	var b strings.Builder
	record.Replay(&b, r, nil)
	lines := strings.SplitN(b.String(), "\n", 3)
	assert.Equal(t, "✘ record changed at event 3 (grade at 1:00): what follows is the record as it is now, not as the interview wrote it.", lines[1],
		"before the first grade")
}

// A changed event's kind is shown, never obeyed.
func TestChainEscapes(t *testing.T) {
	forged := edit(t, sealed(t), func(_ map[string]any, events []any) []any {
		event(events, 4)["kind"] = "hint\x1b]0;pwned\a"
		return events
	})
	r, err := record.Parse(forged)
	require.NoError(t, err)
	assert.Equal(t, `record changed at event 4 (hint\x1b]0;pwned\a at 2:00)`, r.Chain().String())
	var b strings.Builder
	record.Replay(&b, r, nil)
	for _, out := range []string{record.Scorecard(r, nil), b.String()} {
		assert.NotContains(t, out, "\x1b")
		assert.NotContains(t, out, "\a")
	}
}

// The progress state found removed or rewritten during the interview is
// on the timeline and the first things to check.
func TestScorecardStateChanged(t *testing.T) {
	r := &record.Record{Schema: 1, Kata: "06-retry", Title: "Retry", Minutes: 30, Start: chainStart, End: chainStart.Add(20 * time.Minute),
		Ending: record.Done, Race: true, StartCode: record.StartStub, Rubric: record.NewRubric(),
		Events: []record.Event{
			{At: chainStart, Kind: record.KindStart},
			{At: chainStart.Add(12*time.Minute + 34*time.Second), Kind: record.KindStateChanged, Via: record.StateRemoved},
			{At: chainStart.Add(15 * time.Minute), Kind: record.KindStateChanged, Via: record.StateRewritten},
		}}
	card := record.Scorecard(r, nil)
	for _, want := range []string{
		"- ⚠ The progress state (`.kata/state.json`) was removed during the interview, found at 12:34: a give-up or a hint recorded there may be hidden.\n",
		"- ⚠ The progress state (`.kata/state.json`) was rewritten (edited by hand, put back from a copy, or reset) during the interview, found at 15:00: a give-up or a hint recorded there may be hidden.\n",
		"| 12:34 | progress state `.kata/state.json` found removed |\n",
		"| 15:00 | progress state `.kata/state.json` found rewritten |\n",
	} {
		assert.Contains(t, card, want)
	}
}
