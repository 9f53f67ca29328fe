package pack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

// The grader's copy of each harness file stands in for the kit's, and a
// file the candidate added to a harness directory is left out.
func TestOverlay(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	harness := filepath.Join(root, "internal", "katatest")
	require.NoError(t, os.MkdirAll(harness, 0o755))
	for _, f := range []string{"katatest.go", "extra.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(harness, f), []byte("package katatest\n"), 0o644))
	}
	kit, err := overlay(root, dir, map[string][]byte{
		"internal/katatest/katatest.go": nil,
		"internal/gone/gone.go":         nil, // not in the kit's files
		"06-retry/retry_test.go":        nil,
		"go.mod":                        nil,
	})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "go.mod"), kit.ModFile)
	assert.Equal(t, dir, kit.Dir)
	assert.Equal(t, map[string]string{
		filepath.Join(harness, "katatest.go"):              filepath.Join(dir, "internal", "katatest", "katatest.go"),
		filepath.Join(harness, "extra.go"):                 "",
		filepath.Join(root, "internal", "gone", "gone.go"): filepath.Join(dir, "internal", "gone", "gone.go"),
	}, kit.Overlay)
}

// The repository's checker packs nothing: Unpack leaves the catalog as it
// is, and Clean removes what Dir made.
func TestScratchInTheRepository(t *testing.T) {
	assert.False(t, Packed())
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	before := cat.Katas[0]

	s := &Scratch{}
	require.NoError(t, s.Unpack(cat))
	assert.Equal(t, before, cat.Katas[0])
	assert.False(t, s.Interview())
	var none *Scratch
	assert.False(t, none.Interview())
	require.NoError(t, none.Unpack(cat), "nothing to unpack needs no scratch space")

	d, err := s.Dir()
	require.NoError(t, err)
	assert.DirExists(t, d)
	s.Clean()
	assert.NoDirExists(t, d)

	tc, err := s.Detect(context.Background(), os.Environ())
	require.NoError(t, err)
	assert.Nil(t, tc.Kit)
}
