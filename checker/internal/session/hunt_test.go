package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
	"gokata/internal/failure"
)

// A grade during a bug hunt says whether it fixed the planted mistake; the
// first that does marks the hunt solved and names the mistake and its WHY
// paragraph. A mutant that fails a bonus item needs that item too.
func TestGradeDuringAHunt(t *testing.T) {
	root, k := checkout(t)
	mutants := filepath.Join(k.Solution, "testdata", "mutants")
	require.NoError(t, os.MkdirAll(mutants, 0o755))
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(filepath.Join(k.Solution, "WHY.md"), "# Why\n\n**Budgets.** Count the whole call.\n")
	write(filepath.Join(mutants, "nobudget.patch"), "// Mistake: ignores the budget.\n// Fails: R1 B1\n// Expect: x\n// Symptom: it ran long.\n// Why: budgets\n// Level: one-line\n\n--- retry.go\n+++ retry.go\n@@ -1 +1 @@\n-package retry\n+package retry // x\n")
	now := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	require.NoError(t, state.Progress{Root: root}.StartHunt(k.Slug, "nobudget", now, true))

	pass, fail := grade.Verdict{Kind: failure.Pass}, grade.Verdict{Kind: failure.Assertion}
	var r1, b1 grade.Verdict
	var got []session.Graded
	g := &session.Grader{Root: root, Toolchain: &grade.Toolchain{}, Now: func() time.Time { return now.Add(time.Minute) },
		Emit: func(e session.Event) {
			if gr, ok := e.(session.Graded); ok {
				got = append(got, gr)
			}
		}}
	session.FakeGrades(g, func(context.Context, catalog.Kata) *grade.Result {
		return &grade.Result{Kata: k, Items: []grade.ItemResult{
			{Item: catalog.Item{ID: "R1"}, Verdict: r1},
			{Item: catalog.Item{ID: "B1"}, Bonus: true, Verdict: b1},
		}}
	})
	hunt := func() *state.Kata {
		s, err := state.Load(root)
		require.NoError(t, err)
		return s.Kata(k.Slug)
	}

	for _, step := range []struct {
		r1, b1 grade.Verdict
		fixed  bool
	}{{fail, fail, false}, {pass, fail, false}, {pass, pass, true}} {
		r1, b1 = step.r1, step.b1
		_, err := g.Grade(context.Background(), k)
		require.NoError(t, err)
		h := got[len(got)-1].Hunt
		require.NotNil(t, h, "a hunt is under way")
		assert.Equal(t, step.fixed, h.Fixed)
		assert.Equal(t, []string{"B1"}, h.Bonus)
		if !step.fixed {
			assert.Empty(t, h.Mistake, "the mistake stays hidden until it is fixed")
			assert.NotNil(t, hunt().Hunt())
		}
	}
	h := got[len(got)-1].Hunt
	assert.Equal(t, "ignores the budget.", h.Mistake)
	assert.Equal(t, "**Budgets.** Count the whole call.", h.Why)
	assert.Nil(t, hunt().Hunt(), "solved, so over")
	assert.Equal(t, 1, hunt().HuntsSolved())
	assert.True(t, hunt().Hunts[0].Solved.Equal(now.Add(time.Minute)))

	_, err := g.Grade(context.Background(), k)
	require.NoError(t, err)
	assert.Nil(t, got[len(got)-1].Hunt, "no hunt under way any more")
}
