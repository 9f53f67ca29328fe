package fingerprint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/fingerprint"
)

// The fingerprint of a directory is the fingerprint of its non-test files
// read by name, whatever else lies beside them; a change of content or of
// name changes it.
func TestCodeMatchesFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("retry.go", "package retry\n")
	write("policy.go", "package retry\n// policy\n")
	write("retry_test.go", "package retry\n")
	write("README.md", "# Retry\n")
	got, err := fingerprint.Code(dir)
	require.NoError(t, err)
	want := fingerprint.Files(map[string][]byte{"retry.go": []byte("package retry\n"), "policy.go": []byte("package retry\n// policy\n")})
	assert.Equal(t, want, got)
	assert.Len(t, got, 64)

	paths, err := fingerprint.Paths([]string{filepath.Join(dir, "policy.go"), filepath.Join(dir, "retry.go")})
	require.NoError(t, err)
	assert.Equal(t, want, paths, "by base name, in any order")

	assert.NotEqual(t, want, fingerprint.Files(map[string][]byte{"retry.go": []byte("package retry\n// policy\n"), "policy.go": []byte("package retry\n")}),
		"the same contents under swapped names")
	assert.NotEqual(t, want, fingerprint.Files(map[string][]byte{"retry.go": []byte("package retry\n"), "policy.go": []byte("package retry\n// Policy\n")}))
	// A file's size ends its content: moving a byte from one file to the
	// next changes the fingerprint.
	assert.NotEqual(t, fingerprint.Files(map[string][]byte{"a.go": []byte("xy"), "b.go": []byte("z")}),
		fingerprint.Files(map[string][]byte{"a.go": []byte("x"), "b.go": []byte("yz")}))
}
