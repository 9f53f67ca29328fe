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
