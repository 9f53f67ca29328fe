package catalog_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

// The real checkout: every kata must load, and its README must agree with
// its kata.json.
func TestCheckoutKatas(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	require.NotEmpty(t, cat.Katas)
	for _, k := range cat.Katas {
		assert.Empty(t, catalog.CheckReadme(k), k.Slug)
		assert.DirExists(t, k.Solution)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644))
	kata := filepath.Join(dir, "exercises", "06-retry")
	require.NoError(t, os.MkdirAll(kata, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kata, "kata.json"), []byte(`{"title":"Retry","minutes":30}`), 0o644))
	sub := filepath.Join(kata, "deeper")
	require.NoError(t, os.MkdirAll(sub, 0o755))

	root, err := catalog.FindRoot(sub)
	require.NoError(t, err)
	assert.Equal(t, dir, root)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	for _, name := range []string{"06", "6", "06-retry", "retry", " Retry "} {
		k, ok := cat.Find(name)
		if assert.True(t, ok, name) {
			assert.Equal(t, "retry", k.Package)
			assert.Equal(t, "06", k.ID())
		}
	}
	for _, name := range []string{"99", "abc", "", "0"} {
		_, ok := cat.Find(name)
		assert.False(t, ok, name)
	}
	_, err = catalog.FindRoot(t.TempDir())
	assert.ErrorIs(t, err, catalog.ErrNoRoot)
}

func TestLoadRejectsUnknownFields(t *testing.T) {
	dir := t.TempDir()
	kata := filepath.Join(dir, "exercises", "01-x")
	require.NoError(t, os.MkdirAll(kata, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kata, "kata.json"), []byte(`{"titel":"typo"}`), 0o644))
	cat, err := catalog.Load(dir)
	require.NoError(t, err)
	require.Len(t, cat.Broken, 1)
	assert.ErrorContains(t, cat.Broken[0].Err, "titel")
}

// A damaged kata.json makes that kata unusable, never the others.
func TestLoadKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	for slug, meta := range map[string]string{
		"01-good": `{"title":"Good"}`, "02-cut": `{"title":"Cu`, "03-two": `{"title":"A"} {"title":"B"}`,
	} {
		kata := filepath.Join(dir, "exercises", slug)
		require.NoError(t, os.MkdirAll(kata, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(kata, "kata.json"), []byte(meta), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "exercises", "04-none"), 0o755))
	cat, err := catalog.Load(dir)
	require.NoError(t, err)
	require.Len(t, cat.Katas, 1)
	assert.Equal(t, "Good", cat.Katas[0].Title)
	var broken []string
	for _, b := range cat.Broken {
		broken = append(broken, b.Slug)
	}
	assert.ElementsMatch(t, []string{"02-cut", "03-two", "04-none"}, broken)
	b, ok := cat.FindBroken("2")
	assert.True(t, ok)
	assert.Equal(t, "02-cut", b.Slug)
	_, ok = cat.Find("2")
	assert.False(t, ok)
}

// What is revealed only on request lives in solutions/, never among the
// learner's files: no file of an exercise holds a hint's text, and only
// the README holds the decisions (learning mode reads them there).
func TestRevealIsOutOfTheExercise(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	for _, k := range cat.Katas {
		require.NotEmpty(t, k.Hints, k.Slug)
		require.NotEmpty(t, k.Decisions, k.Slug)
		entries, err := os.ReadDir(k.Exercise)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(k.Exercise, e.Name()))
			require.NoError(t, err)
			for i, h := range k.Hints {
				assert.NotContains(t, string(data), h.Text, "%s/%s holds hint %d", k.Slug, e.Name(), i+1)
			}
			if e.Name() != "README.md" {
				for _, d := range k.Decisions {
					assert.NotContains(t, string(data), d, "%s/%s holds a decision", k.Slug, e.Name())
				}
			}
		}
	}
}

func TestReveal(t *testing.T) {
	dir := t.TempDir()
	kata := func(slug, reveal string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "exercises", slug), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "exercises", slug, "kata.json"), []byte(`{"title":"T"}`), 0o644))
		if reveal != "" {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "solutions", slug), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "solutions", slug, catalog.RevealFile), []byte(reveal), 0o644))
		}
	}
	kata("01-read", `{"decisions": ["**D.** d"], "hints": [{"covers": ["R1"], "text": "h1"}, {"covers": ["R1", "R2"], "text": "h2"}]}`)
	kata("02-none", "")
	kata("03-cut", `{"hints": [{"covers"`)
	kata("04-typo", `{"hint": []}`)
	cat, err := catalog.Load(dir)
	require.NoError(t, err)
	require.Len(t, cat.Katas, 2)
	read, none := cat.Katas[0], cat.Katas[1]
	assert.Equal(t, []string{"**D.** d"}, read.Decisions)
	assert.Equal(t, []int{1, 2}, read.HintsFor("R1"))
	assert.Equal(t, []int{2}, read.HintsFor("R2"))
	assert.Empty(t, none.Hints, "a kata without reveal.json (a kit's) has nothing to reveal, and still works")
	assert.Empty(t, none.Decisions)
	require.Len(t, cat.Broken, 2)
	for _, b := range cat.Broken {
		assert.Equal(t, filepath.Join(dir, "solutions", b.Slug, catalog.RevealFile), b.File)
		assert.ErrorContains(t, b.Err, "reveal.json: ")
	}

	// Reading again from elsewhere (a kit's unpacked files) replaces it.
	read.Solution = filepath.Join(dir, "solutions", "02-none")
	require.NoError(t, catalog.ReadReveal(&read))
	assert.Empty(t, read.Hints)
}

// The README's Decisions are checked against reveal.json, the rest
// against kata.json.
func TestCheckReadmeDecisions(t *testing.T) {
	dir := t.TempDir()
	k := catalog.Kata{Num: 1, Slug: "01-x", Exercise: dir}
	k.Title, k.Difficulty, k.Minutes = "X", "beginner", 5
	k.Ask = []string{"Why?"}
	k.Decisions = []string{"**Because.** So."}
	readme := "# 01 · X\n\n**Difficulty:** beginner · **Time:** 5 min\n\n## Ask first\n\n1. Why?\n\n## Decisions\n\n- **Because.** So.\n\n## Requirements\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644))
	assert.Empty(t, catalog.CheckReadme(k))
	k.Decisions = []string{"**Because.** Otherwise."}
	problems := catalog.CheckReadme(k)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], `README section "Decisions" differs from reveal.json`)
	k.Decisions = nil
	assert.Len(t, catalog.CheckReadme(k), 1, "a README that shows decisions reveal.json lacks")
}
