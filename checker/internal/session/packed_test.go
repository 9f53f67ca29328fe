package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
)

// A hunt planted when an interview kit was packed is under way from the
// first grade, graded like any hunt, and never named: solved, it has no
// mistake or WHY.md paragraph; given up, it shows nothing and stays
// over until an interview starts it again.
func TestPackedHunt(t *testing.T) {
	root, k := checkout(t)
	require.NoError(t, os.MkdirAll(k.Solution, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k.Solution, hunt.PackedFile),
		[]byte(`{"level":"one-line","symptom":"it ran long","bonus":["B1"]}`), 0o644))
	now := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var passing []string
	var got []session.Graded
	g := &session.Grader{Root: root, Toolchain: &grade.Toolchain{}, Now: clock, Options: grade.Options{Repeat: session.HuntRepeat},
		Emit: func(e session.Event) {
			if e, ok := e.(session.Graded); ok {
				got = append(got, e)
			}
		}}
	session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result { return result(k, passing...) })
	co := &session.Checkout{Root: root, Now: clock}
	progress := func() *state.Kata {
		s, err := state.Load(root)
		require.NoError(t, err)
		return s.Kata(k.Slug)
	}
	grades := func() *session.Hunt {
		_, err := g.Grade(context.Background(), k)
		require.NoError(t, err)
		return got[len(got)-1].Hunt
	}

	h := grades()
	require.NotNil(t, h, "the packed hunt is under way from the first grade")
	assert.True(t, h.Packed)
	assert.False(t, h.Fixed)
	assert.Equal(t, []string{"B1"}, h.Bonus)
	assert.Equal(t, hunt.PackedName, progress().Hunt().Mutant)

	gave, err := co.GiveUpHunt(k)
	require.NoError(t, err)
	assert.Equal(t, &session.GaveUp{Packed: true}, gave, "nothing to show")
	assert.Equal(t, 1, progress().HuntsGivenUp())
	assert.Nil(t, grades(), "given up: over, not started again by a grade")

	p, err := co.PackedHunt(context.Background(), k, true)
	require.NoError(t, err)
	assert.Equal(t, "it ran long", p.Symptom)
	assert.Equal(t, hunt.OneLine, p.Level)
	assert.Empty(t, p.Mutant+p.Mistake, "the kit does not know them")
	assert.NotNil(t, progress().Hunt(), "an interview starts it again")

	passing = []string{"R1", "R2"}
	assert.False(t, grades().Fixed, "B1, which the mistake breaks, still fails")
	passing = []string{"R1", "R2", "B1"}
	h = grades()
	assert.True(t, h.Fixed)
	assert.Empty(t, h.Mistake+h.Why)
	assert.Equal(t, 1, progress().HuntsSolved())
	assert.Nil(t, grades(), "solved: over")
}

// A bug hunt planted in another terminal during an interview is told
// from a save: the first grade of exactly its planted code, unless the
// interview planted that hunt itself.
func TestPlantedDuringAnInterview(t *testing.T) {
	_, k := checkout(t)
	mutants := filepath.Join(k.Solution, "testdata", "mutants")
	require.NoError(t, os.MkdirAll(mutants, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k.Solution, "retry.go"), []byte("package retry\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(mutants, "nobudget.patch"), []byte("// Mistake: ignores the budget.\n// Fails: R1\n// Expect: x\n// Symptom: it ran long.\n// Level: one-line\n\n--- retry.go\n+++ retry.go\n@@ -1 +1 @@\n-package retry\n+package retry // x\n"), 0o644))
	planted := map[string][]byte{"retry.go": []byte("package retry // x\n")}
	mine := map[string][]byte{"retry.go": []byte("package retry // mine\n")}
	hunted := func(code map[string][]byte) session.Graded {
		return session.Graded{Hunt: &session.Hunt{Mutant: "nobudget"}, Code: code}
	}

	assert.Equal(t, []bool{false, true, false, false},
		session.PlantedDuring(k, nil, session.Graded{Code: planted}, hunted(planted), hunted(planted), hunted(mine)),
		"no hunt, then its planted code, then the same again: a save")
	assert.Equal(t, []bool{false}, session.PlantedDuring(k, &session.Planted{Mutant: "nobudget"}, hunted(planted)),
		"the interview's own hunt")
	assert.Equal(t, []bool{false}, session.PlantedDuring(k, nil, session.Graded{Hunt: &session.Hunt{Mutant: hunt.PackedName, Packed: true}, Code: planted}))
}

// The state file's give-ups reach the record as what they were: planting
// a hunt before a pass, or a hunt given up during the session (one given
// up before it, perhaps by another candidate, is not this one's).
func TestRecordedGiveUps(t *testing.T) {
	t0 := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := t0.Add(d); return &t }
	iv := session.NewInterview(kata(), "Ada", t0, 30*time.Minute)
	p := &state.Kata{GaveUp: true, GaveUpAt: at(-time.Hour), GaveUpVia: state.GaveUpBughunt, Hunts: []state.Hunt{
		{Mutant: "clksleep", Started: *at(-time.Hour), Ended: at(-30 * time.Minute), GaveUp: true},
		{Mutant: "sleeplast", Started: *at(time.Minute), Ended: at(2 * time.Minute), GaveUp: true},
		{Mutant: hunt.PackedName, Started: *at(3 * time.Minute), Ended: at(5 * time.Minute), GaveUp: true},
		{Mutant: "solved", Started: *at(6 * time.Minute), Ended: at(7 * time.Minute), Solved: at(7 * time.Minute)},
	}}
	var got []string
	for _, e := range session.MergedEvents(iv, p) {
		got = append(got, fmt.Sprintf("%s %s/%s", e.At.Sub(t0), e.Kind, e.Via))
	}
	assert.Equal(t, []string{"-1h0m0s give-up/bughunt", "0s start/", "2m0s hunt-give-up/", "5m0s hunt-give-up/packed"}, got)
}
