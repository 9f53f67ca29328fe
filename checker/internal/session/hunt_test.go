package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
	"gokata/internal/failure"
)

// A grade during a bug hunt says whether it fixed the planted mistake; the
// first that does and passes HuntRepeat more runs too marks the hunt
// solved and names the mistake and its WHY paragraph. A mutant that fails
// a bonus item needs that item too; a fix that fails one of the runs again
// is not solved, and says which item failed in how many runs.
func TestGradeDuringAHunt(t *testing.T) {
	root, k := checkout(t)
	mutants := filepath.Join(k.Solution, "testdata", "mutants")
	require.NoError(t, os.MkdirAll(mutants, 0o755))
	write := func(p, s string) { require.NoError(t, os.WriteFile(p, []byte(s), 0o644)) }
	write(filepath.Join(k.Solution, "WHY.md"), "# Why\n\n**Budgets.** Count the whole call.\n")
	write(filepath.Join(mutants, "nobudget.patch"), "// Mistake: ignores the budget.\n// Fails: R1 B1\n// Expect: x\n// Symptom: it ran long.\n// Why: budgets\n// Level: one-line\n\n--- retry.go\n+++ retry.go\n@@ -1 +1 @@\n-package retry\n+package retry // x\n")
	now := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	require.NoError(t, state.Progress{Root: root}.StartHunt(k.Slug, "nobudget", "one-line", now, true))

	pass, fail := grade.Verdict{Kind: failure.Pass}, grade.Verdict{Kind: failure.Assertion, Message: "the budget ran out 3s late"}
	var r1, b1 grade.Verdict
	failedAgain := 0 // runs of R1 that fail when the fix runs again
	var got []session.Graded
	var again []session.CheckingAgain
	g := &session.Grader{Root: root, Toolchain: &grade.Toolchain{}, Now: func() time.Time { return now.Add(time.Minute) },
		Emit: func(e session.Event) {
			switch e := e.(type) {
			case session.Graded:
				got = append(got, e)
			case session.CheckingAgain:
				again = append(again, e)
			}
		}}
	session.FakeGradesWith(g, func(_ context.Context, _ catalog.Kata, opt grade.Options) *grade.Result {
		if opt.Repeat <= 1 {
			return &grade.Result{Kata: k, Runs: 1, Items: []grade.ItemResult{
				{Item: catalog.Item{ID: "R1"}, Verdict: r1, Runs: 1, Passes: 1},
				{Item: catalog.Item{ID: "B1"}, Bonus: true, Verdict: b1, Runs: 1, Passes: 1},
			}}
		}
		assert.Equal(t, session.HuntRepeat, opt.Repeat)
		assert.Equal(t, "1,2,4", opt.CPU, "at every GOMAXPROCS check --repeat uses")
		runs := 3 * opt.Repeat
		r := &grade.Result{Kata: k, Runs: runs, Items: []grade.ItemResult{
			{Item: catalog.Item{ID: "R1"}, Verdict: pass, Runs: runs, Passes: runs - failedAgain},
			{Item: catalog.Item{ID: "B1"}, Bonus: true, Verdict: pass, Runs: runs, Passes: runs},
		}}
		if failedAgain > 0 {
			r.Items[0].Verdict = fail
		}
		return r
	})
	hunt := func() *state.Kata {
		s, err := state.Load(root)
		require.NoError(t, err)
		return s.Kata(k.Slug)
	}

	for i, step := range []struct {
		r1, b1      grade.Verdict
		failedAgain int
		again       bool // the fix ran again
		fixed       bool
	}{
		{fail, fail, 0, false, false},
		{pass, fail, 0, false, false},
		{pass, pass, 3, true, false}, // passes once, fails 3 of 60 runs again
		{pass, pass, 0, true, true},
	} {
		r1, b1, failedAgain = step.r1, step.b1, step.failedAgain
		_, err := g.Grade(context.Background(), k)
		require.NoError(t, err)
		h := got[len(got)-1].Hunt
		require.NotNil(t, h, "a hunt is under way")
		assert.Equal(t, step.fixed, h.Fixed, "step %d", i)
		assert.Equal(t, []string{"B1"}, h.Bonus)
		assert.Equal(t, step.again, h.Again != nil, "step %d", i)
		if !step.fixed {
			assert.Empty(t, h.Mistake, "the mistake stays hidden until it is fixed")
			assert.NotNil(t, hunt().Hunt())
		}
	}
	assert.Len(t, again, 2, "CheckingAgain before each run again")
	assert.Equal(t, session.CheckingAgain{Kata: k.Slug, Repeat: session.HuntRepeat, CPU: "1,2,4"}, again[0])
	assert.Equal(t, &session.Again{Runs: 60, Item: "R1", Failed: 3, Message: "the budget ran out 3s late"}, got[2].Hunt.Again,
		"which item failed the fix, in how many runs")
	h := got[len(got)-1].Hunt
	assert.Equal(t, &session.Again{Runs: 60}, h.Again)
	assert.Equal(t, "ignores the budget.", h.Mistake)
	assert.Equal(t, "**Budgets.** Count the whole call.", h.Why)
	assert.Nil(t, hunt().Hunt(), "solved, so over")
	assert.Equal(t, 1, hunt().HuntsSolved())
	assert.True(t, hunt().Hunts[0].Solved.Equal(now.Add(time.Minute)))

	_, err := g.Grade(context.Background(), k)
	require.NoError(t, err)
	assert.Nil(t, got[len(got)-1].Hunt, "no hunt under way any more")

	// A check that ran every test HuntRepeat times already needs no more.
	require.NoError(t, state.Progress{Root: root}.StartHunt(k.Slug, "nobudget", "one-line", now, true))
	g.Options.Repeat, g.Options.CPU = session.HuntRepeat, "1,2,4"
	_, err = g.Grade(context.Background(), k)
	require.NoError(t, err)
	assert.Len(t, again, 2, "no run again")
	assert.True(t, got[len(got)-1].Hunt.Fixed)
}

// huntCheckout is a checkout whose kata 06 has a reference of one
// function and two mutants, one-line and reasoning, and the learner's
// own code and test in its exercise.
func huntCheckout(t *testing.T) (root string, k catalog.Kata, c *session.Checkout, ev *events) {
	root, k = checkout(t)
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(k.Solution, "retry.go"), "package retry\n\n// Do adds.\nfunc Do(a, b int) int {\n\t// The sum.\n\treturn a + b\n}\n")
	for name, level := range map[string]string{"minus": "one-line", "twice": "reasoning"} {
		change := "-\treturn a + b\n+\treturn a - b\n"
		if name == "twice" {
			change = "-\treturn a + b\n+\ts := a + b\n+\treturn s + s\n"
		}
		n := 3 + strings.Count(change, "\n+")
		write(filepath.Join(k.Solution, "testdata", "mutants", name+".patch"),
			fmt.Sprintf("// Mistake: m\n// Fails: R1\n// Expect: x\n// Symptom: wrong sums.\n// Level: %s\n\n--- retry.go\n+++ retry.go\n@@ -4,4 +4,%d @@\n func Do(a, b int) int {\n \t// The sum.\n%s }\n", level, n, change))
	}
	write(filepath.Join(k.Exercise, "retry.go"), "package retry\n\n// My own Do.\nfunc Do(a, b int) int { return b + a }\n")
	write(filepath.Join(k.Exercise, "mine_test.go"), "package retry\n")
	ev = &events{}
	c = &session.Checkout{Root: root, Emit: ev.emit, Now: func() time.Time { return time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC) }}
	return root, k, c, ev
}

// replacing is the last Replacing event.
func (e *events) replacing(t *testing.T) session.Replacing {
	for i := len(e.all) - 1; i >= 0; i-- {
		if r, ok := e.all[i].(session.Replacing); ok {
			return r
		}
	}
	t.Fatal("no Replacing event")
	return session.Replacing{}
}

// Without a level, a hunt is picked at the lowest level the learner has
// not solved a hunt at on the kata, then at any; a level asked for wins.
func TestPlantClimbsTheLevels(t *testing.T) {
	root, k, c, _ := huntCheckout(t)
	p := state.Progress{Root: root}
	h, err := c.Plant(k, session.HuntChoice{}, true, false)
	require.NoError(t, err)
	assert.Equal(t, "minus", h.Mutant)
	assert.Equal(t, hunt.OneLine, h.Level)
	assert.True(t, h.Next)
	h, err = c.Plant(k, session.HuntChoice{}, true, false)
	require.NoError(t, err)
	assert.Equal(t, "minus", h.Mutant, "one-line again: the last one was not solved")
	require.NoError(t, p.SolveHunt(k.Slug, time.Now()))

	h, err = c.Plant(k, session.HuntChoice{}, true, false)
	require.NoError(t, err)
	assert.Equal(t, hunt.Reasoning, h.Level, "one-line solved: the next level")
	h, err = c.Plant(k, session.HuntChoice{Level: hunt.OneLine}, true, false)
	require.NoError(t, err)
	assert.Equal(t, "minus", h.Mutant, "the level asked for")
	assert.False(t, h.Next)
	require.NoError(t, p.SolveHunt(k.Slug, time.Now()))
	s, err := p.Read()
	require.NoError(t, err)
	assert.Equal(t, "one-line", s.Kata(k.Slug).Hunts[3].Level, "the level is recorded")

	_, err = c.Plant(k, session.HuntChoice{Level: hunt.Schedule}, true, false)
	assert.EqualError(t, err, "no hunt at level schedule in this kata; it has 1 one-line, 1 reasoning")
	_, err = c.Plant(k, session.HuntChoice{Name: "minus", Level: hunt.OneLine}, true, false)
	assert.ErrorContains(t, err, "by its name or by its level, not both")

	h, err = c.Plant(k, session.HuntChoice{}, true, false)
	require.NoError(t, err)
	assert.Equal(t, hunt.Reasoning, h.Level, "reasoning not solved yet")
	require.NoError(t, p.SolveHunt(k.Slug, time.Now()))
	h, err = c.Plant(k, session.HuntChoice{}, true, false)
	require.NoError(t, err)
	assert.False(t, h.Next, "every level solved: any level")
	assert.Equal(t, "minus", h.Mutant, "never the last one again")
}

// The learner's own code is backed up; a hunt's code, planted or fixed,
// is not, and backups of it an older checker kept go when a hunt is
// planted.
func TestPlantKeepsNoHuntCode(t *testing.T) {
	root, k, c, ev := huntCheckout(t)
	backups := filepath.Join(root, ".kata", "backup")
	_, err := c.Plant(k, session.HuntChoice{Name: "minus"}, true, false)
	require.NoError(t, err)
	e := ev.replacing(t)
	assert.Empty(t, e.HuntCode, "the learner's own code")
	first := filepath.Join(root, e.Backup)
	mine, err := os.ReadFile(filepath.Join(first, "retry.go"))
	require.NoError(t, err)
	assert.Contains(t, string(mine), "My own Do", "backed up")
	planted, err := os.ReadFile(filepath.Join(k.Exercise, "retry.go"))
	require.NoError(t, err)

	// An older checker backed up the planted code, fixed, with a comment.
	old := filepath.Join(backups, "06-retry-20300101-090000")
	require.NoError(t, os.MkdirAll(old, 0o755))
	fixed := strings.Replace(string(planted), "return a - b", "return a + b // fixed", 1)
	require.NoError(t, os.WriteFile(filepath.Join(old, "retry.go"), []byte(fixed), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(k.Exercise, "retry.go"), []byte(fixed), 0o644))

	c.Now = func() time.Time { return time.Date(2030, 5, 6, 15, 0, 0, 0, time.UTC) }
	_, err = c.Plant(k, session.HuntChoice{Name: "twice"}, true, false)
	require.NoError(t, err)
	e = ev.replacing(t)
	assert.Equal(t, []string{"retry.go"}, e.HuntCode, "the hunt's code, fixed, is not kept")
	assert.Equal(t, []string{filepath.Join(".kata", "backup", "06-retry-20300101-090000", "retry.go")}, e.Stale)
	assert.NoDirExists(t, old, "the older checker's backup of a hunt's code is gone")
	second := filepath.Join(root, e.Backup)
	assert.NoFileExists(t, filepath.Join(second, "retry.go"))
	assert.FileExists(t, filepath.Join(second, "mine_test.go"), "the learner's own test is still kept")
	assert.FileExists(t, filepath.Join(first, "retry.go"), "the learner's own code stays backed up")
}

// list's bug hunts by level: solved, with the median time to fix them, and
// given up; a hunt recorded before levels takes its mutant's level.
func TestHuntStats(t *testing.T) {
	root, k, c, _ := huntCheckout(t)
	t0 := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	s := &state.State{Schema: 1}
	for i, h := range []struct {
		mutant, level string
		minutes       int
		end           string
	}{
		{"minus", "one-line", 3, "solved"},
		{"minus", "", 5, "solved"}, // recorded before levels
		{"minus", "one-line", 10, "solved"},
		{"twice", "reasoning", 20, "solved"},
		{"twice", "reasoning", 40, "solved"},
		{"twice", "reasoning", 1, "gave up"},
		{"minus", "one-line", 1, "another hunt"},
	} {
		start := t0.Add(time.Duration(i) * time.Hour)
		s.StartHunt(k.Slug, h.mutant, h.level, start, true)
		end := start.Add(time.Duration(h.minutes) * time.Minute)
		switch h.end {
		case "solved":
			s.Kata(k.Slug).SolveHunt(end)
		case "gave up":
			s.Kata(k.Slug).EndHunt(end, true)
		}
	}
	s.StartHunt(k.Slug, "twice", "reasoning", t0.Add(9*time.Hour), true)
	s.Kata(k.Slug).Hunts = append(s.Kata(k.Slug).Hunts, state.Hunt{Mutant: "gone", Started: t0, Solved: &t0, Ended: &t0})
	data, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".kata"), 0o755))
	require.NoError(t, os.WriteFile(state.Path(root), data, 0o644))

	assert.Equal(t, []session.LevelStats{
		{Level: hunt.OneLine, Solved: 3, Median: 5 * time.Minute},
		{Level: hunt.Reasoning, Solved: 2, GivenUp: 1, Median: 30 * time.Minute},
		{Level: "", Solved: 1},
	}, c.HuntStats(&catalog.Catalog{Root: root, Katas: []catalog.Kata{k}}))
}
