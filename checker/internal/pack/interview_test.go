package pack_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/pack"
)

// An interview kit's README keeps everything but the decisions: every
// other section the catalog checks still matches the metadata, and no
// decision is left in it.
func TestKeepDecisionsBack(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	require.NotEmpty(t, cat.Katas)
	for _, k := range cat.Katas {
		readme, err := os.ReadFile(filepath.Join(k.Exercise, "README.md"))
		require.NoError(t, err)
		kept := string(pack.KeepDecisionsBack(readme, k))
		for _, d := range k.Decisions {
			assert.NotContains(t, kept, d, k.Slug)
		}
		assert.Contains(t, kept, "## Decisions\n\n"+pack.DecisionsKeptBack(k)+"\n\n## Requirements\n", k.Slug)
		assert.Contains(t, kept, "make decisions EX="+k.ID())

		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte(kept), 0o644))
		kit := k
		kit.Exercise, kit.Decisions = dir, nil
		assert.Empty(t, catalog.CheckReadme(kit), "%s: the rest of the README still matches its metadata", k.Slug)

		// Nothing but the Decisions section changed.
		before, after := strings.Split(string(readme), "\n## "), strings.Split(kept, "\n## ")
		require.Equal(t, len(before), len(after), k.Slug)
		for i := range before {
			if !strings.HasPrefix(before[i], "Decisions\n") {
				assert.Equal(t, before[i], after[i], k.Slug)
			}
		}
	}
}
