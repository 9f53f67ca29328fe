package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

func TestParseAdapter(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name+".go")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	a, err := ParseAdapter(write("lib", "// Library: golang.org/x/sync v0.22.0\n// GOMAXPROCS: 2\n// Fails: R5 B2\n// Why: because.\n\npackage p\n"))
	require.NoError(t, err)
	assert.Equal(t, "golang.org/x/sync v0.22.0", a.Library)
	assert.Equal(t, []string{"B2", "R5"}, a.Fails)
	assert.Equal(t, "2", a.CPU)

	a, err = ParseAdapter(write("none", "// Library: golang.org/x/sync v0.22.0\n// Fails: none\n// Why: it holds.\n\npackage p\n"))
	require.NoError(t, err)
	assert.Empty(t, a.Fails)

	a, err = ParseAdapter(write("some", "// Library: golang.org/x/sync v0.22.0\n// Fails: R3\n// Sometimes: R4\n// Why: x.\n\npackage p\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"R3"}, a.Fails)
	assert.Equal(t, []string{"R4"}, a.Sometimes)
	_, err = ParseAdapter(write("both", "// Library: golang.org/x/sync v0.22.0\n// Fails: R3\n// Sometimes: R3\n// Why: x.\n\npackage p\n"))
	assert.ErrorContains(t, err, "in both Fails: and Sometimes:")

	for name, text := range map[string]string{
		"noversion": "// Library: golang.org/x/sync\n// Fails: none\n// Why: x.\n\npackage p\n",
		"nofails":   "// Library: golang.org/x/sync v0.22.0\n// Why: x.\n\npackage p\n",
		"nowhy":     "// Library: golang.org/x/sync v0.22.0\n// Fails: R1\n\npackage p\n",
		"badcpu":    "// Library: golang.org/x/sync v0.22.0\n// GOMAXPROCS: 1,2\n// Fails: R1\n// Why: x.\n\npackage p\n",
	} {
		_, err := ParseAdapter(write(name, text))
		assert.Error(t, err, name)
	}
}

// TestEveryAdapterNamesAPinnedVersion checks the committed adapters
// against the committed go.mod without building anything: verify grades
// them.
func TestEveryAdapterNamesAPinnedVersion(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	mods, err := libraryModules(root)
	require.NoError(t, err)
	goLine, err := os.ReadFile(filepath.Join(root, LibraryModFile))
	require.NoError(t, err)
	assert.Contains(t, string(goLine), "\ngo 1.25.0\n", "the adapters build with the Go release the README promises")
	n := 0
	for _, k := range cat.Katas {
		as, err := Adapters(k)
		require.NoError(t, err)
		for _, a := range as {
			n++
			mod, version, _ := strings.Cut(a.Library, " ")
			assert.Equal(t, version, mods[mod], "%s/%s: %s names %s", k.Slug, a.Name, LibraryModFile, mod)
			imports, err := adapterImports(a.Path)
			require.NoError(t, err)
			assert.NotEmpty(t, imports, "%s/%s imports no library", k.Slug, a.Name)
		}
	}
	assert.NotZero(t, n, "no library adapter found")
}
