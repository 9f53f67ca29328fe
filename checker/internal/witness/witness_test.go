package witness_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/record"
	"gokata/checker/internal/witness"
)

const (
	serverToken = "interviews-2030"
	adminToken  = "interviewer-only"
)

var start = time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)

// clock is the witness's clock, which a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// serve runs a witness keeping its rooms in dir, on clock c.
func serve(t *testing.T, dir string, c *clock, admin string) (*witness.Server, string) {
	s, err := witness.NewServer(dir, serverToken, admin, c.Now, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// interview is a small interview's record: its events, as the session
// logs them, at minutes into it.
func interview() *record.Record {
	at := func(m int) time.Time { return start.Add(time.Duration(m) * time.Minute) }
	grade := func(passed bool) *record.Grade {
		g := &record.Grade{Passed: passed, RequiredTotal: 1, Items: []record.Verdict{{ID: "R1", Passed: passed, Kind: "pass", Runs: 1, Passes: 1}},
			Code: map[string]string{"retry.go": "package retry\n"}}
		if passed {
			g.Required = 1
		}
		return g
	}
	return &record.Record{Schema: record.Schema, Kata: "06-retry", Title: "Retry", Candidate: "Ada", Minutes: 30,
		Start: start, End: at(20), Ending: record.Done, Items: []record.Item{{ID: "R1", Text: "retries"}}, Ask: []string{},
		Rubric: record.NewRubric(), StartCode: record.StartStub,
		Events: []record.Event{
			{At: at(0), Kind: record.KindStart},
			{At: at(1), Kind: record.KindAnswered},
			{At: at(5), Kind: record.KindGrade, Via: "save", Grade: grade(false)},
			{At: at(12), Kind: record.KindNote, Note: "asked about jitter"},
			{At: at(15), Kind: record.KindGrade, Via: "save", Grade: grade(true)},
			{At: at(20), Kind: record.KindEnd, Via: record.Done},
		}}
}

// witnessed runs interview rec with a witness at base, each event sent
// at its own time on the witness's clock c, and returns the record as
// written, with its witness.
func witnessed(t *testing.T, base string, c *clock, rec *record.Record) []byte {
	ctx := context.Background()
	c.Set(start.Add(-time.Second))
	w, err := witness.Dial(ctx, base, serverToken, witness.Open{Kata: rec.Kata, Candidate: rec.Candidate})
	require.NoError(t, err)
	defer w.Close()
	for _, e := range rec.Events {
		c.Set(e.At.Add(2 * time.Second))
		w.Event(e)
		unsent, err := w.Flush(time.Minute) // each stamped at its own time
		require.NoError(t, err)
		require.Zero(t, unsent)
	}
	where := w.Where()
	rec.Witness = &where
	data := save(t, rec)
	c.Set(rec.End.Add(time.Minute))
	require.NoError(t, w.End(data))
	return data
}

// save writes rec as the interview does, chain sealed, and reads it back.
func save(t *testing.T, rec *record.Record) []byte {
	path := filepath.Join(t.TempDir(), "record.json")
	require.NoError(t, record.Save(path, rec))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

func fetch(t *testing.T, base, room, token string) *witness.Copy {
	cp, err := witness.Fetch(context.Background(), base, room, token)
	require.NoError(t, err)
	return cp
}

// The record an interview wrote agrees with its witness's copy, read
// from the server or from its file.
func TestARecordAgreesWithItsWitness(t *testing.T) {
	dir, c := t.TempDir(), &clock{}
	s, base := serve(t, dir, c, "")
	rec := interview()
	data := witnessed(t, base, c, rec)
	cp := fetch(t, base, rec.Witness.Room, serverToken)
	assert.Len(t, cp.Events, len(rec.Events))
	diffs, err := witness.Compare(data, cp)
	require.NoError(t, err)
	assert.Empty(t, diffs)

	f, err := os.Open(s.Path(rec.Witness.Room))
	require.NoError(t, err)
	defer f.Close()
	fromFile, err := witness.ReadCopy(rec.Witness.Room, f)
	require.NoError(t, err)
	diffs, err = witness.Compare(data, fromFile)
	require.NoError(t, err)
	assert.Empty(t, diffs)
}

// Every way of changing a record after the interview, even one that
// computes its hash chain again (record.Save), is a difference with the
// witness's copy, named first.
func TestATamperedRecordDiffersFromItsWitness(t *testing.T) {
	dir, c := t.TempDir(), &clock{}
	_, base := serve(t, dir, c, "")
	rec := interview()
	witnessed(t, base, c, rec)
	cp := fetch(t, base, rec.Witness.Room, serverToken)
	for _, tc := range []struct {
		name   string
		change func(r *record.Record)
		first  string
	}{
		{"a failing grade deleted", func(r *record.Record) { r.Events = append(r.Events[:2], r.Events[3:]...) },
			"The witness got a grade at 5:00 (at 2030-05-06 14:05 +00:00 by its clock) that the record no longer holds"},
		{"a verdict edited", func(r *record.Record) { r.Events[2].Grade.Items[0].Passed = true },
			"Event 3 (grade at 5:00) was changed after the witness got it."},
		{"an event added", func(r *record.Record) {
			r.Events = append(r.Events[:5:5], record.Event{At: start.Add(18 * time.Minute), Kind: record.KindNote, Note: "great questions"}, r.Events[5])
		}, "Event 6 (note at 18:00) never reached the witness"},
		{"a note's time moved", func(r *record.Record) { r.Events[3].At = start.Add(2 * time.Minute) },
			"The witness got a note at 12:00"},
		{"the final score raised", func(r *record.Record) { r.Final = r.Events[4].Grade },
			`The record's "final" differs from the record the witness got at the end.`},
		{"another candidate's name", func(r *record.Record) { r.Candidate = "Grace" },
			`The record is of "06-retry", "Grace"; the room was opened for "06-retry", "Ada".`},
		{"the start moved", func(r *record.Record) { r.Start = start.Add(-5 * time.Minute) },
			"The record says the interview started at 2030-05-06 13:55 +00:00; the witness saw it start at 2030-05-06 14:00 +00:00."},
		{"another room named", func(r *record.Record) { r.Witness.Room = "abcdefabcdef" },
			`The record names room "abcdefabcdef", not ` + rec.Witness.Room + "."},
		{"the witness taken out", func(r *record.Record) { r.Witness = nil }, "The record names no witness"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := interview()
			w := *rec.Witness
			r.Witness = &w
			tc.change(r)
			diffs, err := witness.Compare(save(t, r), cp)
			require.NoError(t, err)
			require.NotEmpty(t, diffs)
			assert.Contains(t, diffs[0], tc.first)
		})
	}
}

// An event whose own time is far from when the witness got it was
// back-dated by whoever sent it; a record the witness never got is
// named.
func TestABackDatedEventAndAMissingEnd(t *testing.T) {
	dir, c := t.TempDir(), &clock{}
	_, base := serve(t, dir, c, "")
	rec := interview()
	c.Set(start)
	w, err := witness.Dial(context.Background(), base, serverToken, witness.Open{Kata: rec.Kata, Candidate: rec.Candidate})
	require.NoError(t, err)
	defer w.Close()
	for i, e := range rec.Events {
		c.Set(e.At)
		if i == 4 {
			c.Set(e.At.Add(25 * time.Minute)) // the pass came 25 minutes after it says
		}
		w.Event(e)
		_, err := w.Flush(time.Minute)
		require.NoError(t, err)
	}
	where := w.Where()
	rec.Witness = &where
	diffs, err := witness.Compare(save(t, rec), fetch(t, base, where.Room, serverToken))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"Event 5 (grade at 15:00) reached the witness 25m0s from when it says it happened: its time was changed.",
		"The witness got no record at the end: the interview was stopped before it wrote one, or could not reach the witness then.",
	}, diffs)
}

// The server takes only what it should: the right token for each path,
// bodies of the right shape and size, one record per room; and a
// restarted server knows its rooms.
func TestTheWitnessRefuses(t *testing.T) {
	dir, c := t.TempDir(), &clock{now: start}
	_, base := serve(t, dir, c, adminToken)
	post := func(path, token, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := post("/witness/open", "wrong-token", `{"kata":"06-retry","candidate":"Ada"}`)
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = post("/witness/open", serverToken, `{"kata":""}`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, body := post("/witness/open", serverToken, `{"kata":"06-retry","candidate":"Ada"}`)
	require.Equal(t, http.StatusOK, code)
	var room struct{ Room, Token string }
	require.NoError(t, json.Unmarshal([]byte(body), &room))

	event := `{"at":"2030-05-06T14:00:00Z","kind":"start"}`
	code, _ = post("/witness/"+room.Room+"/event", serverToken, event)
	assert.Equal(t, http.StatusUnauthorized, code, "the server's token does not write into a room")
	code, _ = post("/witness/nosuchroom0/event", room.Token, event)
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = post("/witness/"+room.Room+"/event", room.Token, `{"kind":"start"}`)
	assert.Equal(t, http.StatusBadRequest, code, "an event without its time")
	code, _ = post("/witness/"+room.Room+"/event", room.Token, `{"at":"2030-05-06T14:00:00Z","kind":"note","note":"`+strings.Repeat("x", witness.MaxEvent)+`"}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	code, _ = post("/witness/"+room.Room+"/end", room.Token, `{"schema":1}`)
	assert.Equal(t, http.StatusBadRequest, code, "not a record")
	code, _ = post("/witness/"+room.Room+"/event", room.Token, event)
	assert.Equal(t, http.StatusNoContent, code)

	_, err := witness.Fetch(context.Background(), base, room.Room, serverToken)
	assert.ErrorContains(t, err, "401", "with an admin token, only it reads a room")
	cp := fetch(t, base, room.Room, adminToken)
	assert.Len(t, cp.Events, 1)

	rec := interview()
	rec.Witness = &record.Witness{URL: base, Room: room.Room}
	data := string(save(t, rec))
	code, _ = post("/witness/"+room.Room+"/end", room.Token, data)
	assert.Equal(t, http.StatusNoContent, code)
	code, _ = post("/witness/"+room.Room+"/end", room.Token, data)
	assert.Equal(t, http.StatusConflict, code, "one record per room")
	code, _ = post("/witness/"+room.Room+"/event", room.Token, event)
	assert.Equal(t, http.StatusConflict, code, "nothing after the record")

	s2, base2 := serve(t, dir, c, adminToken) // the server restarted
	assert.Equal(t, 1, s2.Rooms())
	assert.NotNil(t, fetch(t, base2, room.Room, adminToken).Record)
	req, _ := http.NewRequest(http.MethodPost, base2+"/witness/"+room.Room+"/event", strings.NewReader(event))
	req.Header.Set("Authorization", "Bearer "+room.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusConflict, resp.StatusCode, "the restarted server knows the room has its record")
}

// A damaged copy is named by its line, never half read.
func TestReadCopyRefusesADamagedCopy(t *testing.T) {
	open := `{"received":"2030-05-06T14:00:00Z","open":{"kata":"06-retry","candidate":"Ada","tokenSum":"00"}}`
	event := `{"received":"2030-05-06T14:00:01Z","event":{"at":"2030-05-06T14:00:00Z","kind":"start"}}`
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "is empty"},
		{"no opening", event + "\n", "does not begin with the room's opening"},
		{"cut short", open + "\n" + event[:30] + "\n", "line 2 of the witness's copy cannot be read"},
		{"opened twice", open + "\n" + open + "\n", "line 2 of the witness's copy opens the room again"},
		{"a line of nothing known", open + "\n{\"received\":\"2030-05-06T14:00:00Z\"}\n", "line 2 of the witness's copy holds nothing it knows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := witness.ReadCopy("abcdefabcdef", strings.NewReader(tc.data))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// Dial names what is wrong in one line, never the token.
func TestDialSaysWhatIsWrong(t *testing.T) {
	c := &clock{now: start}
	_, base := serve(t, t.TempDir(), c, "")
	ctx := context.Background()
	_, err := witness.Dial(ctx, "ftp://host", serverToken, witness.Open{Kata: "06-retry"})
	assert.ErrorContains(t, err, "is not a witness's address")
	_, err = witness.Dial(ctx, base, "not-the-token", witness.Open{Kata: "06-retry"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the witness answered 401")
	assert.NotContains(t, err.Error(), "not-the-token")
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err = witness.Dial(ctx, srv.URL, serverToken, witness.Open{Kata: "06-retry"})
	assert.ErrorContains(t, err, "connection refused")
}
