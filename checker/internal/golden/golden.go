// Package golden compares what a test produced with a file kept in the
// repository, for the checker's own tests. Run a test with -update to
// rewrite its golden files from what it produced, then read the diff.
//
// Only test files import it: the -update flag it defines is a test flag.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files from what the tests produce")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check fails t unless got is the content of the golden file at path.
// With -update it writes got to path (creating its directory) instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file %s yet: run the test with -update, then read what it wrote", path)
	assert.Equal(t, string(want), string(got), "%s differs; if the change is intended, run the test with -update and read the diff", path)
}
