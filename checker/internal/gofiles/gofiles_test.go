package gofiles_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/gofiles"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func TestCopy(t *testing.T) {
	dir, dst, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, "retry.go"), "package retry\n")
	write(t, filepath.Join(dir, "retry_test.go"), "package retry\n")
	write(t, filepath.Join(dir, "README.md"), "# retry\n")
	write(t, filepath.Join(elsewhere, "reference.go"), "package retry // the reference\n")
	require.NoError(t, os.Symlink(filepath.Join(elsewhere, "reference.go"), filepath.Join(dir, "linked.go")))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(dir, ".#retry.go"))) // an editor's lock file
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe.go"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	big, err := os.Create(filepath.Join(dir, "big.go"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(gofiles.MaxFile+1)) // sparse: nothing written
	require.NoError(t, big.Close())

	refused, err := gofiles.Copy(dir, dst)
	require.NoError(t, err)
	var got []string
	for _, r := range refused {
		got = append(got, filepath.Base(r.Path)+" "+r.Why)
	}
	assert.Equal(t, []string{
		"big.go is 1048577 bytes, more than the 1 MiB a source file may have",
		"linked.go is a symbolic link (to " + filepath.Join(elsewhere, "reference.go") + "), not a file",
		"pipe.go is a named pipe, not a file",
	}, got)
	entries, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "retry.go", entries[0].Name())
	data, err := os.ReadFile(filepath.Join(dst, "retry.go"))
	require.NoError(t, err)
	assert.Equal(t, "package retry\n", string(data))
}

func TestCopyTotal(t *testing.T) {
	dir, dst := t.TempDir(), t.TempDir()
	chunk := strings.Repeat("x", gofiles.MaxFile)
	for _, n := range []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go", "g.go", "h.go", "i.go"} {
		write(t, filepath.Join(dir, n), chunk)
	}
	refused, err := gofiles.Copy(dir, dst)
	require.NoError(t, err)
	require.Len(t, refused, 1)
	assert.Equal(t, "i.go", filepath.Base(refused[0].Path))
	assert.Contains(t, refused[0].Why, "more than 8 MiB together")
}

// TestCopyMemory measures the heap while Copy takes a folder of a 512 MiB
// (sparse) file and 8 files of just under the limit: nothing is read whole.
func TestCopyMemory(t *testing.T) {
	dir, dst := t.TempDir(), t.TempDir()
	big, err := os.Create(filepath.Join(dir, "big.go"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(512<<20))
	require.NoError(t, big.Close())
	chunk := strings.Repeat("x", gofiles.MaxFile-1)
	for _, n := range []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go", "g.go", "h.go"} {
		write(t, filepath.Join(dir, n), chunk)
	}
	chunk = ""
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	refused, err := gofiles.Copy(dir, dst)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	require.Len(t, refused, 1)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("Copy allocated %d KiB for 8 MiB copied and 512 MiB refused", allocated>>10)
	assert.Less(t, allocated, uint64(1<<20), "Copy must stream, not read files whole")
}
