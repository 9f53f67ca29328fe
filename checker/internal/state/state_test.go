package state_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/state"
)

func TestLoadWithoutFile(t *testing.T) {
	s, err := state.Load(t.TempDir())
	require.NoError(t, err)
	assert.Empty(t, s.Katas)
	assert.Nil(t, s.Kata("06-retry").Last, "no grade yet")
}

func TestProgressKeepsEveryChange(t *testing.T) {
	root := t.TempDir()
	p := state.Progress{Root: root}
	require.NoError(t, p.RecordGrade("06-retry", state.Grade{Fingerprint: "f1", Required: 7, RequiredTotal: 7, Passed: true}))
	require.NoError(t, p.RecordGrade("06-retry", state.Grade{Fingerprint: "f2", Required: 3, RequiredTotal: 7}))
	s, err := state.Load(root)
	require.NoError(t, err)
	k := s.Kata("06-retry")
	assert.Equal(t, "f2", k.Last.Fingerprint)
	assert.Equal(t, 3, k.Last.Required)
	assert.True(t, k.PassedOnce, "a later failing grade does not undo an earlier pass")
}

// Checkers running at once (watch in one terminal, hint in another) each
// change the latest state: no change is lost.
func TestProgressConcurrent(t *testing.T) {
	root := t.TempDir()
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, state.Progress{Root: root}.RevealHint("01-fanout", 1, time.Unix(0, 0), "hint"))
		}()
	}
	wg.Wait()
	s, err := state.Load(root)
	require.NoError(t, err)
	assert.Len(t, s.Kata("01-fanout").HintLog, n)
	left, _ := filepath.Glob(filepath.Join(root, state.Dir, "state.json.*"))
	assert.Empty(t, left, "no temporary files left behind")
}

func TestLoadDamaged(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, state.Dir), 0o755))
	require.NoError(t, os.WriteFile(state.Path(root), []byte("{not json"), 0o644))
	_, err := state.Load(root)
	assert.ErrorContains(t, err, "delete it to start afresh")
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	fp := func() string {
		f, err := state.Fingerprint(dir)
		require.NoError(t, err)
		return f
	}
	write("retry.go", "package retry\n")
	first := fp()
	write("README.md", "notes")
	write("mine_test.go", "package retry\n")
	assert.Equal(t, first, fp(), "only the files a grade reads count")
	write("retry.go", "package retry // edited\n")
	assert.NotEqual(t, first, fp())
	write("retry.go", "package retry\n")
	assert.Equal(t, first, fp(), "the same content is the same fingerprint")
	write("extra.go", "package retry\n")
	assert.NotEqual(t, first, fp(), "a new file counts")
}

// A state file written before runs were recorded reads as single runs.
func TestLoadOldFileWithoutRuns(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, state.Dir), 0o755))
	require.NoError(t, os.WriteFile(state.Path(root), []byte(`{"schema": 1, "katas": {"06-retry": {
		"last": {"fingerprint": "f1", "passed": true, "required": 7, "requiredTotal": 7, "bonus": 0, "bonusTotal": 2},
		"passedOnce": true, "hintsShown": 1}}}`), 0o644))
	s, err := state.Load(root)
	require.NoError(t, err)
	g := s.Kata("06-retry").Last
	assert.True(t, g.Passed)
	assert.Equal(t, 0, g.Runs)
	assert.False(t, g.Repeated(), "one run")
}

func TestRecordKeepsRepeatedPassOfTheSameFiles(t *testing.T) {
	s := &state.State{}
	s.Record("06-retry", state.Grade{Fingerprint: "f1", Passed: true, Runs: 60})
	s.Record("06-retry", state.Grade{Fingerprint: "f1", Passed: true, Runs: 1})
	assert.Equal(t, 60, s.Kata("06-retry").Last.Runs, "a single run of the same files does not undo 60")
	s.Record("06-retry", state.Grade{Fingerprint: "f2", Passed: true, Runs: 1})
	assert.False(t, s.Kata("06-retry").Last.Repeated(), "new files passed once")
	s.Record("06-retry", state.Grade{Fingerprint: "f2", Passed: true, Runs: 15})
	s.Record("06-retry", state.Grade{Fingerprint: "f2", Passed: false, Runs: 1})
	assert.False(t, s.Kata("06-retry").Last.Repeated(), "a failure of the same files is news")
}

func TestHunts(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	p := state.Progress{Root: root}
	require.NoError(t, p.SolveHunt("06-retry", t0), "no hunt to solve: nothing changes")
	require.NoError(t, p.StartHunt("06-retry", "clksleep", "reasoning", t0, true))
	s, err := state.Load(root)
	require.NoError(t, err)
	k := s.Kata("06-retry")
	require.NotNil(t, k.Hunt(), "a hunt under way survives the round trip")
	assert.Equal(t, "clksleep", k.Hunt().Mutant)
	assert.Equal(t, "reasoning", k.Hunt().Level)
	assert.True(t, k.Hunt().Started.Equal(t0))
	assert.True(t, k.HuntCode, "the exercise holds the hunt's code")

	assert.True(t, k.SolveHunt(t0.Add(time.Minute)))
	assert.Nil(t, k.Hunt(), "a solved hunt is over")
	assert.Equal(t, 1, k.HuntsSolved())
	assert.Equal(t, "clksleep", k.LastHunt())

	s.StartHunt("06-retry", "sleeplast", "reasoning", t0.Add(2*time.Minute), true)
	s.StartHunt("06-retry", "ctxfirst", "reasoning", t0.Add(3*time.Minute), true)
	assert.Len(t, k.Hunts, 3)
	assert.NotNil(t, k.Hunts[1].Ended, "a new hunt ends the one under way")
	assert.False(t, k.Hunts[1].GaveUp)
	k.EndHunt(t0.Add(4*time.Minute), true)
	assert.Nil(t, k.Hunt())
	assert.True(t, k.Hunts[2].GaveUp)
	assert.Nil(t, k.Hunts[2].Solved)
	assert.Equal(t, 1, k.HuntsSolved())
	assert.Equal(t, "ctxfirst", k.LastHunt())
}

// The rules of the operations, without files.
func TestProgressRules(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	t.Run("a hunt on a kata neither passed nor given up gives up on it, outside an interview", func(t *testing.T) {
		s := &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Required: 3, RequiredTotal: 7})
		s.StartHunt("06-retry", "clksleep", "reasoning", t0, false)
		k := s.Kata("06-retry")
		assert.True(t, k.GaveUp)
		assert.Equal(t, t0, *k.GaveUpAt)
		assert.Nil(t, k.Last, "the planted code replaced the graded files: the last grade is forgotten")

		s = &state.State{}
		s.StartHunt("06-retry", "clksleep", "reasoning", t0, true)
		assert.False(t, s.Kata("06-retry").GaveUp, "an interview's hunt is the interviewer's choice")

		s = &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Required: 7, RequiredTotal: 7, Passed: true})
		assert.False(t, s.Kata("06-retry").HuntGivesUp(false))
		s.StartHunt("06-retry", "clksleep", "reasoning", t0, false)
		assert.False(t, s.Kata("06-retry").GaveUp, "a passed kata is not given up by a hunt")
	})
	t.Run("decisions and the solution are noted the first time", func(t *testing.T) {
		s := &state.State{}
		s.ReadDecisions("06-retry", t0)
		s.ReadDecisions("06-retry", t0.Add(time.Hour))
		assert.Equal(t, t0, *s.Kata("06-retry").DecisionsRead)
		s.ShowSolution("06-retry", t0, false)
		s.ShowSolution("06-retry", t0.Add(time.Hour), true)
		k := s.Kata("06-retry")
		assert.Equal(t, t0, *k.SolutionShown)
		assert.True(t, k.GaveUp, "a give-up before any pass")
		assert.Equal(t, t0.Add(time.Hour), *k.GaveUpAt)
	})
	t.Run("decisions read after an interview showed them are not read early", func(t *testing.T) {
		for _, tc := range []struct {
			name        string
			read, shown []time.Duration // from t0, in the order done
			early       bool
		}{
			{"never read", nil, []time.Duration{0}, false},
			{"read, no interview", []time.Duration{0}, nil, true},
			{"read, then an interview", []time.Duration{0}, []time.Duration{time.Minute}, true},
			{"an interview, then read", []time.Duration{time.Minute}, []time.Duration{0}, false},
			{"an interview, read, another interview", []time.Duration{time.Minute}, []time.Duration{0, time.Hour}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := &state.State{}
				for _, d := range tc.shown {
					s.ShowDecisions("06-retry", t0.Add(d))
				}
				for _, d := range tc.read {
					s.ReadDecisions("06-retry", t0.Add(d))
				}
				assert.Equal(t, tc.early, s.Kata("06-retry").ReadEarly())
			})
		}
	})
	t.Run("a give-up after a pass is not one", func(t *testing.T) {
		s := &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Required: 7, RequiredTotal: 7, Passed: true})
		s.ShowSolution("06-retry", t0, true)
		assert.False(t, s.Kata("06-retry").GaveUp)
	})
	t.Run("reset forgets the attempt and keeps the pass and the hunts", func(t *testing.T) {
		s := &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Passed: true})
		s.Kata("06-retry").ShowHint(2, t0, "hint")
		s.ReadDecisions("06-retry", t0)
		s.ShowSolution("06-retry", t0, false)
		s.Kata("06-retry").Catch = &state.Catch{Caught: 6, Mutants: 18}
		s.StartHunt("06-retry", "clksleep", "reasoning", t0, false)
		assert.Equal(t, []string{"its grades", "2 hints shown", "decisions read", "solution read", "the catch score (6 of 18)", "the bug hunt under way"}, s.Kata("06-retry").Forgets())
		assert.Equal(t, []string{"that it passed", "its bug hunts"}, s.Kata("06-retry").Keeps())
		s.Reset("06-retry", t0.Add(time.Minute))
		k := s.Kata("06-retry")
		assert.Empty(t, k.Forgets(), "nothing left to forget")
		assert.Equal(t, state.PassedAlone, k.PassedBeforeReset)
		assert.Equal(t, state.NotPassed, k.Pass(), "the reference needs a pass of the new attempt")
		require.Len(t, k.Hunts, 1)
		assert.Nil(t, k.Hunt(), "the hunt under way ended")
		assert.False(t, k.Hunts[0].GaveUp, "ended by the reset, not given up")
		assert.False(t, k.HuntCode, "the stub replaced the hunt's code")
		assert.Equal(t, []string{"that it passed", "its bug hunts"}, k.Keeps())
	})
	t.Run("a reset keeps the best pass of all resets", func(t *testing.T) {
		s := &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Passed: true})
		s.Reset("06-retry", t0)
		s.ShowSolution("06-retry", t0, true)
		s.Record("06-retry", state.Grade{Fingerprint: "f", Passed: true})
		assert.Equal(t, state.PassedAfterSolution, s.Kata("06-retry").Pass())
		s.Reset("06-retry", t0)
		assert.Equal(t, state.PassedAlone, s.Kata("06-retry").PassedBeforeReset)
	})
	t.Run("a reset of a kata never passed, without hunts, leaves nothing", func(t *testing.T) {
		s := &state.State{}
		s.Record("06-retry", state.Grade{Fingerprint: "f", Required: 3, RequiredTotal: 7})
		s.ShowSolution("06-retry", t0, true)
		assert.Equal(t, []string{"its grades", "the give-up"}, s.Kata("06-retry").Forgets())
		assert.Empty(t, s.Kata("06-retry").Keeps())
		s.Reset("06-retry", t0)
		assert.NotContains(t, s.Katas, "06-retry")
	})
	t.Run("a pass after a give-up came after the solution was shown", func(t *testing.T) {
		s := &state.State{}
		s.ShowSolution("06-retry", t0, true)
		s.Record("06-retry", state.Grade{Fingerprint: "f", Passed: true})
		assert.Equal(t, state.PassedAfterSolution, s.Kata("06-retry").Pass())
	})
	t.Run("a bug hunt's pass solves the hunt, not the kata", func(t *testing.T) {
		s := &state.State{}
		s.StartHunt("06-retry", "clksleep", "reasoning", t0, true)
		s.Record("06-retry", state.Grade{Fingerprint: "planted", Passed: true})
		k := s.Kata("06-retry")
		assert.True(t, k.Last.Hunt)
		assert.False(t, k.PassedOnce, "the planted code passed, not the learner's")
		k.SolveHunt(t0)
		s.Record("06-retry", state.Grade{Fingerprint: "planted", Passed: true})
		assert.True(t, k.Last.Hunt, "the same files, checked again after the hunt: still the hunt's")
		assert.False(t, k.PassedOnce)
		s.Record("06-retry", state.Grade{Fingerprint: "mine", Passed: true})
		assert.False(t, k.Last.Hunt, "files changed since: the learner's")
		assert.Equal(t, state.PassedAlone, k.Pass())
	})
}

// A state file written before how a kata passed, bug hunts given up and
// the reset record were kept reads as before: a pass without a give-up is
// a pass alone, one with a give-up came after the solution was shown.
func TestLoadOldFormat(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, state.Dir), 0o755))
	old := `{
  "schema": 1,
  "katas": {
    "01-fanout": {"last": {"fingerprint": "a", "passed": true, "required": 7, "requiredTotal": 7, "bonus": 0, "bonusTotal": 2}, "passedOnce": true},
    "02-first-wins": {"last": {"fingerprint": "b", "passed": true, "required": 6, "requiredTotal": 6, "bonus": 1, "bonusTotal": 1}, "passedOnce": true, "gaveUp": true},
    "03-bounded": {"passedOnce": true, "hunts": [{"mutant": "m", "started": "2026-03-01T09:30:00Z", "ended": "2026-03-01T09:40:00Z", "gaveUp": true}]}
  }
}
`
	require.NoError(t, os.WriteFile(state.Path(root), []byte(old), 0o644))
	s, err := state.Load(root)
	require.NoError(t, err)
	assert.Equal(t, state.PassedAlone, s.Kata("01-fanout").Pass())
	assert.False(t, s.Kata("01-fanout").Last.Stub)
	assert.Equal(t, state.PassedAfterSolution, s.Kata("02-first-wins").Pass())
	k := s.Kata("03-bounded")
	assert.Equal(t, state.PassedAlone, k.Pass(), "an earlier pass survives a later hunt")
	assert.Equal(t, 1, k.HuntsGivenUp())
	assert.Equal(t, state.NotPassed, k.PassedBeforeReset)
	assert.Empty(t, k.Hunts[0].Level, "a hunt recorded before levels has none: its mutant's level stands in (session)")
	assert.False(t, k.HuntCode, "nothing says the exercise holds a hunt's code")
}

// Every write of the checker counts and sums the file; a look tells such
// a file from one edited by hand, and a missing one from both.
func TestLook(t *testing.T) {
	root := t.TempDir()
	assert.Equal(t, state.Snapshot{}, state.Look(root), "no file yet")

	p := state.Progress{Root: root}
	require.NoError(t, p.RevealHint("06-retry", 1, time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC), "hint"))
	require.NoError(t, p.ShowSolution("06-retry", time.Date(2030, 5, 6, 14, 5, 0, 0, time.UTC), true))
	snap := state.Look(root)
	assert.True(t, snap.Found)
	assert.True(t, snap.Checker, "the checker wrote it as it is")
	require.NotNil(t, snap.State)
	assert.Equal(t, 2, snap.State.Writes)
	assert.Equal(t, snap, state.Look(root), "nothing changed")

	data, err := os.ReadFile(state.Path(root))
	require.NoError(t, err)
	edited := strings.Replace(string(data), `"gaveUp": true`, `"gaveUp": false`, 1)
	require.NotEqual(t, string(data), edited)
	require.NoError(t, os.WriteFile(state.Path(root), []byte(edited), 0o644))
	after := state.Look(root)
	assert.True(t, after.Found)
	assert.False(t, after.Checker, "edited by hand: its sum no longer matches")
	assert.NotEqual(t, snap.Digest, after.Digest)

	require.NoError(t, os.WriteFile(state.Path(root), []byte("{"), 0o644))
	damaged := state.Look(root)
	assert.True(t, damaged.Found)
	assert.Nil(t, damaged.State)
	assert.False(t, damaged.Checker)
}
