package session_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/record"
	"gokata/checker/internal/session"
)

// events collects what a session emits.
type events struct {
	mu  sync.Mutex
	all []session.Event
}

func (e *events) emit(ev session.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

// since returns the events from the n-th on.
func (e *events) since(n int) []session.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]session.Event(nil), e.all[n:]...)
}

// checkout makes a checkout with kata k's exercise: a README with a story
// and one source file.
func checkout(t *testing.T) (root string, k catalog.Kata) {
	root = t.TempDir()
	k = kata()
	k.Exercise = filepath.Join(root, "exercises", k.Slug)
	k.Solution = filepath.Join(root, "solutions", k.Slug)
	require.NoError(t, os.MkdirAll(k.Exercise, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k.Exercise, "README.md"), []byte("# Retry\n\nA flaky service.\n\n## Task\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(k.Exercise, "retry.go"), []byte("package retry\n"), 0o644))
	return root, k
}

// An interview driven end to end on a fake clock, with fake grades: the
// pause, the briefing, a grade at once, a hint, a notice, an unsaved edit
// graded when done is typed, and the scorecard written.
func TestRunInterview(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root, k := checkout(t)
		mock := clock.NewMock()
		mock.Set(t0)
		g := &session.Grader{Root: root}
		grades := 0
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result {
			grades++
			if grades == 1 {
				return result(k)
			}
			return result(k, "R1", "R2")
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
				Grader: g, Kata: k, Candidate: "Ada", Minutes: 30, Clock: mock, Lines: lines, Emit: ev.emit,
			})
			done <- outcome{iv, err}
		}()
		synctest.Wait()
		assert.Equal(t, []session.Event{session.InterviewStarted{ID: "06", Slug: k.Slug, Title: "Retry", Minutes: 30, Story: "A flaky service."}}, ev.since(0))

		mock.Add(2 * time.Minute) // the candidate asks
		lines <- ""
		synctest.Wait()
		got := ev.since(1)
		require.Len(t, got, 2)
		assert.Equal(t, "exercises/06-retry", got[0].(session.Briefed).Exercise)
		graded := got[1].(session.Graded)
		assert.Equal(t, result(k), graded.Result)
		assert.Equal(t, 28*time.Minute, graded.Left)
		assert.True(t, graded.Timed)
		assert.Equal(t, map[string][]byte{"retry.go": []byte("package retry\n")}, graded.Code, "the code graded")

		lines <- "hint"
		synctest.Wait()
		assert.Equal(t, []session.Event{session.HintShown{N: 1, Of: 2, Covers: []string{"R1"}, Text: "loop"}}, ev.since(3))

		mock.Add(23 * time.Minute)
		synctest.Wait()
		assert.Equal(t, []session.Event{session.Countdown{Left: 5 * time.Minute}}, ev.since(4))

		require.NoError(t, os.WriteFile(filepath.Join(k.Exercise, "retry.go"), []byte("package retry\n\n// done\n"), 0o644))
		lines <- "done"
		out := <-done
		require.NoError(t, out.err)
		got = ev.since(5)
		require.Len(t, got, 3, "the edit not yet graded is graded, then the final grade, then the end")
		assert.True(t, got[0].(session.Graded).Result.Passed())
		assert.Equal(t, session.FinalGrading{Ending: "Done.", Repeat: 20, CPU: "1,2,4"}, got[1])
		fin := got[2].(session.Finished)
		assert.Equal(t, "Done.", fin.Ending)
		assert.True(t, fin.Passed)
		assert.Equal(t, ".kata/interviews/20300506-140000-06-retry-ada.md", fin.Saved)
		assert.Equal(t, ".kata/interviews/20300506-140000-06-retry-ada.json", fin.Record)
		card, err := os.ReadFile(filepath.Join(root, fin.Saved))
		require.NoError(t, err)
		assert.Equal(t, fin.Scorecard, string(card))
		assert.Contains(t, fin.Scorecard, "- **Time used:** 25:00 of 30:00 (asking first: 2:00) · **ended:** done typed\n")
		assert.Contains(t, fin.Scorecard, "- **Grades:** 2 (1 at the start, 1 of an edit not yet graded at the end), then the final grade\n")
		assert.Contains(t, fin.Scorecard, "- **Hints used in the interview:** 1 of 2 (hint 1 at 2:00, typed in the interview)\n")
		assert.Equal(t, 25*time.Minute, out.iv.FirstPass["R2"])
	})
}

// Ctrl-C during the ask-first pause stops the interview at once, with no
// scorecard.
func TestRunInterviewInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root, k := checkout(t)
		ctx, cancel := context.WithCancel(context.Background())
		var ev events
		done := make(chan error, 1)
		go func() {
			_, err := session.RunInterview(ctx, session.InterviewRun{
				Grader: &session.Grader{Root: root}, Kata: k, Minutes: 30, Clock: clock.NewMock(), Lines: make(chan string), Emit: ev.emit,
			})
			done <- err
		}()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		got := ev.since(0)
		require.Len(t, got, 2)
		assert.Equal(t, session.Stopped{}, got[1])
		_, err := os.Stat(filepath.Join(root, ".kata", "interviews"))
		assert.ErrorIs(t, err, os.ErrNotExist, "no scorecard")
	})
}

// When time runs out, the interview ends with the last grade, and a save
// that was graded already is not graded again.
func TestRunInterviewTimeUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root, k := checkout(t)
		mock := clock.NewMock()
		g := &session.Grader{Root: root}
		grades := 0
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { grades++; return result(k, "R1") })
		lines := make(chan string)
		close(lines) // no one at the keyboard: no pause
		var ev events
		done := make(chan *session.Interview, 1)
		go func() {
			iv, err := session.RunInterview(context.Background(), session.InterviewRun{
				Grader: g, Kata: k, Minutes: 10, Clock: mock, Lines: lines, Emit: ev.emit,
			})
			assert.NoError(t, err)
			done <- iv
		}()
		for _, step := range []time.Duration{5 * time.Minute, 4 * time.Minute, time.Minute} {
			synctest.Wait()
			mock.Add(step)
		}
		iv := <-done
		assert.Equal(t, "Time is up.", iv.Ending)
		assert.Equal(t, 2, grades, "the one save was graded, then the final grade")
		var countdown []time.Duration
		for _, e := range ev.since(0) {
			if c, ok := e.(session.Countdown); ok {
				countdown = append(countdown, c.Left)
			}
		}
		assert.Equal(t, []time.Duration{5 * time.Minute, time.Minute}, countdown)
	})
}

// Ctrl-C during the coding ends the interview with its record: the
// ending says so, there is no final grade, and the scorecard flags it.
func TestRunInterviewStoppedWhileCoding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root, k := checkout(t)
		ctx, cancel := context.WithCancel(context.Background())
		mock := clock.NewMock()
		g := &session.Grader{Root: root}
		grades := 0
		session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { grades++; return result(k, "R1") })
		lines := make(chan string)
		var ev events
		done := make(chan error, 1)
		go func() {
			_, err := session.RunInterview(ctx, session.InterviewRun{
				Grader: g, Kata: k, Minutes: 30, Clock: mock, Lines: lines, Emit: ev.emit,
			})
			done <- err
		}()
		lines <- ""
		synctest.Wait()
		mock.Add(4 * time.Minute)
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, 1, grades, "no final grade after Ctrl-C")
		all := ev.since(0)
		fin := all[len(all)-1].(session.Finished)
		assert.Equal(t, "Interview stopped.", fin.Ending)
		assert.Zero(t, fin.Runs)
		rec, err := record.Load(filepath.Join(root, fin.Record))
		require.NoError(t, err)
		assert.Equal(t, record.Stopped, rec.Ending)
		assert.Nil(t, rec.Final)
		assert.Equal(t, record.StartUnknown, rec.StartCode, "no stub given: unknown")
		assert.Contains(t, record.Flags(rec, nil), "Stopped with Ctrl-C: no final repeated grade was made; the last grade of the session stands.")
		assert.Contains(t, fin.Scorecard, "(the last grade, one run)")
	})
}
