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
	_, err := catalog.Load(dir)
	assert.ErrorContains(t, err, "titel")
}
