package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/golden"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/record"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
	"gokata/checker/internal/witness"
	"gokata/internal/failure"
)

// The candidate's code at each step of the scripted interview, and the
// grade the fake grader gives it.
const (
	stubCode    = "package retry\n\nfunc Do() { panic(\"TODO\") }\n"
	startCode   = "package retry\n\nfunc Do() { /* written the day before */ }\n"
	brokenCode  = "package retry\n\nfunc Do() { x }\n"
	overflowBug = "package retry\n\nfunc Do() { /* 1 << n */ }\n"
	breaksR2    = "package retry\n\nfunc Do() { /* no select */ }\n"
	fixedCode   = "package retry\n\nfunc Do() { /* capped */ }\n"
	lastEdit    = "package retry\n\n// Do retries.\nfunc Do() { /* capped */ }\n"
)

// A scripted 30-minute interview of a candidate who read a hint and gave
// up before it began, with code already written, on a machine without
// cgo: a save that does not compile, a hint typed, a hint read with the
// hint verb in another terminal, a pass that breaks and is fixed, an edit
// not yet graded when done is typed, and the final grade with repeats.
// The record and the scorecard rendered from it are compared whole with
// golden files (go test -run TestInterviewRecord -update rewrites them),
// and the facts the issue names are asserted one by one below.
func TestInterviewRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		zone := time.FixedZone("CEST", 2*60*60)
		start := time.Date(2030, 5, 6, 14, 0, 0, 0, zone)
		root, k := checkout(t)
		write := func(code string) {
			require.NoError(t, os.WriteFile(filepath.Join(k.Exercise, "retry.go"), []byte(code), 0o644))
		}
		write(startCode)
		require.NoError(t, os.MkdirAll(k.Solution, 0o755))
		hidden := []byte("package retry\n\nfunc TestR1_Retries(t *testing.T) {}\n")
		require.NoError(t, os.WriteFile(filepath.Join(k.Solution, "retry_test.go"), hidden, 0o644))
		at := func(d time.Duration) *time.Time { t := start.Add(d); return &t }
		p := state.Progress{Root: root}
		require.NoError(t, p.ReadDecisions(k.Slug, *at(-20 * time.Hour)))
		require.NoError(t, p.RevealHint(k.Slug, 1, *at(-time.Hour), "hint"))
		require.NoError(t, p.ShowSolution(k.Slug, *at(-30 * time.Minute), true))
		require.NoError(t, p.AddNote(k.Slug, "about the candidate before: not this interview's", *at(-10 * time.Minute)))

		mock := clock.NewMock()
		mock.Set(start)
		g := &session.Grader{Root: root}
		var finalOpt grade.Options
		session.FakeGradesWith(g, func(_ context.Context, k catalog.Kata, opt grade.Options) *grade.Result {
			code, err := os.ReadFile(filepath.Join(k.Exercise, "retry.go"))
			require.NoError(t, err)
			var r *grade.Result
			switch string(code) {
			case startCode:
				r = result(k)
			case brokenCode:
				r = result(k)
				r.Build = &grade.BuildFailure{Kind: failure.Compile, Lines: []string{"exercises/06-retry/retry.go:3:13: undefined: x"}}
				for i := range r.Items {
					r.Items[i].Verdict = grade.Verdict{Kind: failure.Compile, Message: "does not compile"}
				}
			case overflowBug:
				r = result(k, "R2")
			case breaksR2:
				r = result(k, "R1", "B1")
			default:
				r = result(k, "R1", "R2", "B1")
			}
			r.NoRace = "cgo is off (CGO_ENABLED=0)"
			if opt.Repeat > 1 {
				finalOpt = opt
				r.Runs = 60
				for i := range r.Items {
					r.Items[i].Runs, r.Items[i].Passes = 60, 60
				}
				r.Items[2].Verdict = grade.Verdict{Kind: failure.Assertion, Message: "jitter out of range"}
				r.Items[2].Passes = 57
			}
			return r
		})
		lines := make(chan string)
		var ev events
		type outcome struct {
			iv  *session.Interview
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			iv, err := session.RunInterview(context.Background(), session.InterviewRun{
				Grader: g, Kata: k, Candidate: "Ada Lovelace", Minutes: 30, KeptBack: true,
				Stub:  map[string][]byte{"retry.go": []byte(stubCode)},
				Clock: mock, Lines: lines, Emit: ev.emit,
			})
			done <- outcome{iv, err}
		}()
		// save writes code at d into the interview and waits for its grade.
		save := func(d time.Duration, code string) {
			synctest.Wait()
			mock.Set(start.Add(d))
			write(code)
			time.Sleep(time.Second) // bubble time: the watcher sees the save settle
			synctest.Wait()
		}
		synctest.Wait()
		mock.Add(2 * time.Minute) // the candidate asks
		lines <- ""
		save(5*time.Minute, brokenCode)
		mock.Set(start.Add(6 * time.Minute))
		lines <- "hint"
		synctest.Wait()
		mock.Set(start.Add(8 * time.Minute)) // hint 2 again, with the hint verb
		require.NoError(t, state.Progress{Root: root}.RevealHint(k.Slug, 2, mock.Now(), "hint"))
		save(9*time.Minute, overflowBug)
		// The interviewer notes something, in another terminal.
		require.NoError(t, state.Progress{Root: root}.AddNote(k.Slug, "asked *why* the cap | comes first", start.Add(10*time.Minute)))
		save(12*time.Minute, breaksR2)
		save(14*time.Minute, fixedCode)
		mock.Set(start.Add(15 * time.Minute))
		write(lastEdit)
		lines <- "done"
		out := <-done
		require.NoError(t, out.err)

		assert.Equal(t, 20, finalOpt.Repeat, "the final grade: 20 runs")
		assert.Equal(t, "1,2,4", finalOpt.CPU, "at GOMAXPROCS 1, 2 and 4")
		var fin session.Finished
		for _, e := range ev.since(0) {
			if f, ok := e.(session.Finished); ok {
				fin = f
			}
			if g, ok := e.(session.Graded); ok {
				assert.Equal(t, 1, max(g.Result.Runs, 1), "the final grade is recorded, not drawn")
			}
		}
		assert.Equal(t, session.Finished{Ending: "Done.", Passed: true, Required: 2, Total: 2, Bonus: 0, BonusOf: 1, Runs: 60,
			Scorecard: fin.Scorecard, Saved: ".kata/interviews/20300506-140000-06-retry-ada-lovelace.md",
			Record: ".kata/interviews/20300506-140000-06-retry-ada-lovelace.json"}, fin)

		rec, err := record.Load(filepath.Join(root, fin.Record))
		require.NoError(t, err)
		card, err := os.ReadFile(filepath.Join(root, fin.Saved))
		require.NoError(t, err)
		assert.Equal(t, record.Scorecard(rec, nil), string(card), "the scorecard is rendered from the record")
		assert.Equal(t, fin.Scorecard, string(card))
		data, err := os.ReadFile(filepath.Join(root, fin.Record))
		require.NoError(t, err)
		golden.Check(t, filepath.Join("testdata", "record.golden.json"), data)
		golden.Check(t, filepath.Join("testdata", "scorecard.golden.md"), card)

		// The facts, one by one.
		assert.Equal(t, "2030-05-06T14:00:00+02:00", rec.Start.Format(time.RFC3339), "times keep their zone")
		assert.True(t, start.Add(15*time.Minute).Equal(rec.End), "ended at 15:00")
		assert.Equal(t, record.Done, rec.Ending)
		assert.Equal(t, record.StartChanged, rec.StartCode, "code was there at the start")
		assert.False(t, rec.Race)
		assert.Equal(t, "cgo is off (CGO_ENABLED=0)", rec.NoRace)
		assert.True(t, rec.KeptBack)
		assert.Equal(t, record.CopyRepository, rec.Copy, "not a kit")
		assert.Equal(t, map[string]string{"retry.go": stubCode}, rec.StartFiles, "the code it started from")
		kinds := []string{}
		for _, e := range rec.Events {
			kinds = append(kinds, e.Kind+"/"+e.Via)
		}
		assert.Equal(t, []string{
			"decisions/", "hint/hint", "give-up/solution", // before the start, from the state file
			"start/", "answered/", "grade/start", "grade/save", "hint/interview", "hint/hint",
			"grade/save", "note/", "grade/save", "grade/save", "end/done", "grade/end", "final/",
		}, kinds)
		assert.Equal(t, "asked *why* the cap | comes first", rec.Events[10].Note, "the note made during the interview, and only that one")
		assert.Equal(t, 2, rec.Events[7].Hint, "typed hint shows hint 2: hint 1 was read before")
		gs := rec.Grades()
		require.Len(t, gs, 6, "1 at the start, 4 saves, 1 unsaved edit at the end")
		assert.Equal(t, []string{"exercises/06-retry/retry.go:3:13: undefined: x"}, gs[1].Grade.Build)
		assert.Equal(t, brokenCode, gs[1].Grade.Code["retry.go"], "a snapshot of the code at every grade")
		for _, g := range gs {
			assert.Equal(t, fingerprint.Files(g.Grade.Files()), g.Grade.Fingerprint.Code, "the fingerprint is the snapshot's")
			assert.Equal(t, fingerprint.Files(map[string][]byte{"retry_test.go": hidden}), g.Grade.Fingerprint.Tests)
		}
		require.NotNil(t, rec.Final)
		assert.Equal(t, 60, rec.Final.Runs)
		assert.Equal(t, "1,2,4", rec.Final.CPU)
		assert.Equal(t, lastEdit, rec.Final.Code["retry.go"], "the final code")
		assert.Equal(t, record.Verdict{ID: "B1", Kind: "assertion", Message: "jitter out of range", Runs: 60, Passes: 57}, rec.Final.Items[2])
		assert.Contains(t, rec.Diff, "-func Do() { panic(\"TODO\") }\n+// Do retries.\n+func Do() { /* capped */ }\n", "the diff from the stub")
		assert.Equal(t, record.NewRubric(), rec.Rubric, "a rubric to fill")
		assert.Len(t, rec.Rubric.Competencies, 5)
		assert.Equal(t, []string{
			"**R1** ✘ 2:00–12:00, ✔ from 12:00",
			"**R2** ✘ 2:00–9:00, ✔ 9:00–12:00, ✘ 12:00–14:00, ✔ from 14:00 (passed, then broke)",
			"**B1** ✘ 2:00–12:00, ✔ from 12:00",
		}, record.Spans(rec))
		assert.Len(t, record.Flags(rec, nil), 5, "give-up, hint before, decisions read, code at the start, no race check")

		// The state file learnt the interview's own hint.
		s, err := state.Load(root)
		require.NoError(t, err)
		h := s.Kata(k.Slug).HintLog[1]
		assert.Equal(t, "2 2030-05-06T14:06:00+02:00 interview", fmt.Sprint(h.N, " ", h.At.Format(time.RFC3339), " ", h.Via))
	})
}

// The scorecard verb compares the record's code with the reference of the
// checkout it runs in, found by the kata's name: a name that is no kata
// there, or a checkout without solutions/ (a kit), compares nothing.
func TestOpenRecordFindsTheReference(t *testing.T) {
	root, k := checkout(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module gokata\n"), 0o644))
	ref := "package retry\n\n// Do retries.\nfunc Do(n int) int { return n + 1 }\n"
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	write := func(kata string) string {
		r := &record.Record{Schema: 1, Kata: kata, Start: start, End: start.Add(time.Minute), Ending: record.Done, Race: true,
			StartCode: record.StartStub, Rubric: record.NewRubric(), Events: []record.Event{{At: start.Add(time.Second), Kind: record.KindGrade, Via: "start",
				Grade: &record.Grade{Code: map[string]string{"retry.go": "package retry\nfunc Do(n int) int { return n + 1 }"}}}}}
		path := filepath.Join(root, kata+".json")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, record.Save(path, r))
		return path
	}
	scorecard := func(kata string) string {
		r, err := session.OpenRecord(filepath.Join(root, "exercises"), write(kata))
		require.NoError(t, err)
		return r.Scorecard()
	}
	const notCompared = "The code was not compared with the reference"
	assert.Contains(t, scorecard(k.Slug), notCompared, "no solutions/ yet: a kit")

	require.NoError(t, os.MkdirAll(k.Solution, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k.Solution, "retry.go"), []byte(ref), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(k.Solution, "retry_test.go"), []byte("package retry\n"), 0o644))
	card := scorecard(k.Slug)
	assert.Contains(t, card, "- ⚠ The final code, first graded at the start (0:01), is 100% identical in tokens to the reference (solutions/06-retry/).\n")
	assert.NotContains(t, card, notCompared)

	for _, other := range []string{"06-retry/../06-retry", "07-blocking-loop"} {
		assert.Contains(t, scorecard(other), notCompared, other)
	}
}

// The progress state file changed during an interview other than by the
// checker is an event, found at the next grade: deleted (after a
// give-up, which the record keeps), edited by hand, and reset (which
// forgets a hint). The checker's own writes in another terminal (the
// give-up itself) are none.
func TestInterviewStateChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
		root, k := checkout(t)
		g := &session.Grader{Root: root}
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { return result(k, "R1") })
		iv := startInterview(g, k, start)
		statePath := state.Path(root)
		save := func(d time.Duration) { iv.save(t, d, fmt.Sprintf("package retry\n\n// at %v\n", d)) }
		synctest.Wait()
		iv.lines <- ""
		iv.mock.Set(start.Add(3 * time.Minute)) // another terminal: the checker writes
		require.NoError(t, state.Progress{Root: root}.ShowSolution(k.Slug, iv.mock.Now(), true))
		save(4 * time.Minute)
		require.NoError(t, os.Remove(statePath))
		save(6 * time.Minute)
		data, err := os.ReadFile(statePath)
		require.NoError(t, err)
		edited := strings.Replace(string(data), `"required": 1`, `"required": 2`, 1)
		require.NotEqual(t, string(data), edited)
		require.NoError(t, os.WriteFile(statePath, []byte(edited), 0o644))
		save(8 * time.Minute)
		iv.mock.Set(start.Add(9 * time.Minute))
		iv.lines <- "hint"
		synctest.Wait()
		require.NoError(t, state.Progress{Root: root}.Reset(k.Slug, iv.mock.Now()))
		save(10 * time.Minute)
		rec := iv.finish(t)

		var got []string
		for _, e := range rec.Events {
			if e.Kind == record.KindStateChanged || e.Kind == record.KindGaveUp || e.Kind == record.KindHint {
				got = append(got, fmt.Sprintf("%v %s/%s", e.At.Sub(start), e.Kind, e.Via))
			}
		}
		assert.Equal(t, []string{
			"3m0s give-up/solution", // kept, though the file that held it was deleted
			"6m0s state-changed/removed",
			"8m0s state-changed/rewritten",
			"9m0s hint/interview",
			"10m0s state-changed/rewritten", // the reset forgot the hint
		}, got)
		flags := record.Flags(rec, nil)
		assert.Contains(t, flags, "The progress state (`.kata/state.json`) was removed during the interview, found at 6:00: a give-up or a hint recorded there may be hidden.")
		assert.Contains(t, flags, "The progress state (`.kata/state.json`) was rewritten (edited by hand, put back from a copy, or reset) during the interview, found at 10:00: a give-up or a hint recorded there may be hidden.")
		assert.Equal(t, record.ChainIntact, rec.Chain().State)
	})
}

// Saves that come while a grade runs are graded together, as the latest:
// the record still keeps the code of each one the grade skipped, at its
// time, and the replay and the measures see it.
func TestInterviewRecordsOvertakenSaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
		root, k := checkout(t)
		g := &session.Grader{Root: root}
		hold := make(chan struct{}) // closed: grades run through
		close(hold)
		holding := make(chan struct{}, 1)
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result {
			select {
			case <-hold:
			default:
				holding <- struct{}{}
				<-hold
			}
			return result(k, "R1")
		})
		iv := startInterview(g, k, start)
		code := func(n int) string { return fmt.Sprintf("package retry\n\n// version %d\n", n) }
		synctest.Wait()
		iv.lines <- ""
		iv.save(t, 2*time.Minute, code(1))
		hold = make(chan struct{}) // the next grade waits
		iv.save(t, 3*time.Minute, code(2))
		<-holding
		iv.save(t, 4*time.Minute, code(3)) // both come while version 2 is graded
		iv.save(t, 5*time.Minute, code(4))
		close(hold)
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		rec := iv.finish(t)

		var got []string
		for _, e := range rec.Saves() {
			got = append(got, fmt.Sprintf("%v %s/%s %q", e.At.Sub(start), e.Kind, e.Via, e.SavedCode()["retry.go"]))
		}
		assert.Equal(t, []string{
			fmt.Sprintf("0s grade/start %q", "package retry\n"),
			fmt.Sprintf("2m0s grade/save %q", code(1)),
			fmt.Sprintf("3m0s grade/save %q", code(2)), // recorded when it read the code
			fmt.Sprintf("4m0s save/ %q", code(3)),      // never graded: version 4 came first
			fmt.Sprintf("5m0s grade/save %q", code(4)),
		}, got)
		var replay strings.Builder
		record.Replay(&replay, rec, nil)
		assert.Contains(t, replay.String(), "4:00  saved, not graded: a later save came before its grade\n\nWhat changed:\n\n    --- retry.go\n    +++ retry.go\n    @@ -1,3 +1,3 @@\n     package retry\n     \n    -// version 2\n    +// version 3\n")
	})
}

// An interview with a witness sends it every event its record holds, the
// facts of the progress state included (a hint read with the hint verb
// the day before and during the interview, a note, the decisions), each
// when it is logged or found, and the record as written: the witness's
// copy then agrees with the record, and an edit of the record does not.
func TestInterviewSendsItsWitnessEveryEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
		root, k := checkout(t)
		p := state.Progress{Root: root}
		require.NoError(t, p.RevealHint(k.Slug, 1, start.Add(-time.Hour), "hint"))
		require.NoError(t, p.AddNote(k.Slug, "about the candidate before", start.Add(-10*time.Minute)))
		g := &session.Grader{Root: root}
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { return result(k, "R1") })
		w := &fakeWitness{}
		iv := startWitnessed(g, k, start, func(m *clock.Mock) session.Witness { w.now = m.Now; return w })
		synctest.Wait()
		iv.lines <- ""
		iv.save(t, 2*time.Minute, "package retry\n\n// one\n")
		require.NoError(t, p.RevealHint(k.Slug, 2, start.Add(3*time.Minute), "hint"))
		require.NoError(t, p.AddNote(k.Slug, "asked about jitter", start.Add(4*time.Minute)))
		iv.save(t, 5*time.Minute, "package retry\n\n// two\n")
		iv.lines <- "hint"
		rec := iv.finish(t)

		require.NotNil(t, rec.Witness)
		assert.Equal(t, record.Witness{URL: "http://witness.test", Room: "room000001"}, *rec.Witness)
		kinds := func(es []record.Event) (out []string) {
			for _, e := range es {
				out = append(out, e.Kind+"/"+e.Via+e.Note)
			}
			slices.Sort(out)
			return out
		}
		var got []record.Event
		for _, r := range w.copy.Events {
			var e record.Event
			require.NoError(t, json.Unmarshal(r.Raw, &e))
			got = append(got, e)
		}
		assert.Equal(t, kinds(rec.Events), kinds(got), "the witness got every event of the record")
		assert.Contains(t, kinds(got), "note/asked about jitter")
		assert.NotContains(t, kinds(got), "note/about the candidate before", "a note from before the interview is not in its record")

		path := record.Path(filepath.Join(iv.root, iv.lastFinished().Saved))
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		diffs, err := witness.Compare(data, &w.copy)
		require.NoError(t, err)
		assert.Empty(t, diffs)

		edited := strings.Replace(string(data), "asked about jitter", "asked about jitter and backoff", 1)
		diffs, err = witness.Compare([]byte(edited), &w.copy)
		require.NoError(t, err)
		assert.NotEmpty(t, diffs)
	})
}

// The questions the interviewer ticked in another terminal during the
// interview (asked) are in its record at their times, and the scorecard
// ticks them off the Ask-first questions, saying whether each came before
// the decisions were shown; ticks made before the interview are not its.
func TestInterviewTicksTheQuestionsAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
		root, k := checkout(t)
		k.Ask = []string{"How many attempts?", "What may a cancel interrupt?", "Is the pause capped?"}
		p := state.Progress{Root: root}
		require.NoError(t, p.AddAsked(k.Slug, []state.Asked{{At: start.Add(-time.Hour), Question: 3}}))
		g := &session.Grader{Root: root}
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { return result(k, "R1") })
		iv := startInterview(g, k, start)
		synctest.Wait()
		require.NoError(t, p.AddAsked(k.Slug, []state.Asked{{At: start.Add(time.Minute), Question: 2}}))
		iv.mock.Set(start.Add(2 * time.Minute))
		iv.lines <- ""
		require.NoError(t, p.AddAsked(k.Slug, []state.Asked{{At: start.Add(3 * time.Minute), Text: "what if op panics?"}}))
		iv.save(t, 4*time.Minute, "package retry\n\n// one\n")
		rec := iv.finish(t)

		card := record.Scorecard(rec, nil)
		assert.Contains(t, card, "As ticked during the interview with `asked 06`:\n\n"+
			"- [ ] How many attempts?\n"+
			"- [x] What may a cancel interrupt? (at 1:00, before the decisions were shown)\n"+
			"- [ ] Is the pause capped?\n"+
			"- [x] Also asked: what if op panics? (at 3:00, after the decisions were shown)\n")
		assert.Contains(t, card, "the candidate asked Ask-first question 2: What may a cancel interrupt?")
	})
}

// fakeWitness keeps what an interview sends it, each event stamped with
// the interview's clock, as a witness's copy.
type fakeWitness struct {
	now  func() time.Time
	copy witness.Copy
}

func (w *fakeWitness) Event(e record.Event) {
	raw, _ := json.Marshal(e)
	if w.copy.Room == "" {
		w.copy = witness.Copy{Room: "room000001", Open: witness.Open{Kata: "06-retry", Candidate: "Ada"}, Opened: w.now()}
	}
	w.copy.Events = append(w.copy.Events, witness.Received{At: w.now(), Raw: raw})
}

func (w *fakeWitness) Flush(time.Duration) (int, error) { return 0, nil }

func (w *fakeWitness) End(data []byte) error {
	w.copy.Record, w.copy.RecordedAt = data, w.now()
	return nil
}

func (w *fakeWitness) Where() record.Witness {
	return record.Witness{URL: "http://witness.test", Room: "room000001"}
}

// lastFinished is the Finished the interview ended with.
func (iv *testInterview) lastFinished() session.Finished {
	all := iv.ev.since(0)
	return all[len(all)-1].(session.Finished)
}

// testInterview is a 30-minute interview of Ada on kata k, run in the
// test's bubble on a mock clock set at start.
type testInterview struct {
	lines chan string
	ev    events
	done  chan error
	mock  *clock.Mock
	start time.Time
	k     catalog.Kata
	root  string
}

func startInterview(g *session.Grader, k catalog.Kata, start time.Time) *testInterview {
	return startWitnessed(g, k, start, nil)
}

// startWitnessed is startInterview with the witness that witness makes on
// the interview's clock (nil: none).
func startWitnessed(g *session.Grader, k catalog.Kata, start time.Time, witness func(*clock.Mock) session.Witness) *testInterview {
	iv := &testInterview{lines: make(chan string), done: make(chan error, 1), mock: clock.NewMock(), start: start, k: k, root: g.Root}
	iv.mock.Set(start)
	var w session.Witness
	if witness != nil {
		w = witness(iv.mock)
	}
	go func() {
		_, err := session.RunInterview(context.Background(), session.InterviewRun{
			Grader: g, Kata: k, Candidate: "Ada", Minutes: 30, Clock: iv.mock, Lines: iv.lines, Emit: iv.ev.emit,
			Witness: w,
		})
		iv.done <- err
	}()
	return iv
}

// save writes code at d into the interview and lets the watcher see it
// settle.
func (iv *testInterview) save(t *testing.T, d time.Duration, code string) {
	synctest.Wait()
	iv.mock.Set(iv.start.Add(d))
	require.NoError(t, os.WriteFile(filepath.Join(iv.k.Exercise, "retry.go"), []byte(code), 0o644))
	time.Sleep(time.Second) // bubble time: the watcher sees the save settle
	synctest.Wait()
}

// finish types done and returns the record the interview wrote.
func (iv *testInterview) finish(t *testing.T) *record.Record {
	iv.lines <- "done"
	require.NoError(t, <-iv.done)
	rec, err := record.Load(filepath.Join(iv.root, iv.lastFinished().Record))
	require.NoError(t, err)
	return rec
}
