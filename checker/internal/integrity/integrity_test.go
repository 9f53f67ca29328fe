package integrity_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/integrity"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func TestChanged(t *testing.T) {
	root, extra := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "internal/katatest/katatest.go"), "package katatest\n")
	write(t, filepath.Join(root, "exercises/06-retry/retry.go"), "package retry\n")
	write(t, filepath.Join(root, "exercises/07-loop/loop.go"), "package loop\n")
	write(t, filepath.Join(root, ".kata/state.json"), "{}\n")
	write(t, filepath.Join(extra, "06-retry/retry_test.go"), "package retry\n")
	graded := filepath.Join(root, "exercises/06-retry")
	before, err := integrity.Take(root, []string{graded}, extra)
	require.NoError(t, err)

	// Allowed: the graded exercise and .kata/.
	write(t, filepath.Join(graded, "retry.go"), "package retry // edited\n")
	write(t, filepath.Join(graded, "new.go"), "package retry\n")
	write(t, filepath.Join(root, ".kata/state.json"), "{\"x\":1}\n")
	write(t, filepath.Join(root, ".idea/workspace.xml"), "<x/>\n")
	write(t, filepath.Join(root, "exercises/07-loop/#README.md#"), "autosave\n")
	after, err := integrity.Take(root, []string{graded}, extra)
	require.NoError(t, err)
	assert.Empty(t, before.Changed(after))

	// Same size, same time, other content: still seen.
	p := filepath.Join(root, "internal/katatest/katatest.go")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	write(t, p, "package katatesT\n")
	require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	require.NoError(t, os.Remove(filepath.Join(root, "exercises/07-loop/loop.go")))
	write(t, filepath.Join(root, "internal/katatest/zz.go"), "package katatest\n")
	write(t, filepath.Join(extra, "06-retry/retry_test.go"), "package retry // pass\n")
	after, err = integrity.Take(root, []string{graded}, extra)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(root, "exercises/07-loop/loop.go"),
		filepath.Join(root, "internal/katatest/katatest.go"),
		filepath.Join(root, "internal/katatest/zz.go"),
		filepath.Join(extra, "06-retry/retry_test.go"),
	}, before.Changed(after))
}

func TestUncommitted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	top := t.TempDir()
	root := filepath.Join(top, "katas") // the checkout may sit inside a larger repository
	env := append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = top, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	write(t, filepath.Join(root, "go.mod"), "module gokata\n")
	write(t, filepath.Join(root, "internal/katatest/katatest.go"), "package katatest\n")
	write(t, filepath.Join(root, "internal/katatest/race.go"), "package katatest\n")
	paths := []string{"internal", "go.mod"}

	_, ok, err := integrity.Uncommitted(ctx, env, root, paths)
	require.NoError(t, err)
	assert.False(t, ok, "no git repository")

	git("init", "-q")
	_, ok, err = integrity.Uncommitted(ctx, env, root, paths)
	require.NoError(t, err)
	assert.False(t, ok, "nothing committed yet")

	git("add", "-A")
	git("commit", "-qm", "katas")
	changed, ok, err := integrity.Uncommitted(ctx, env, root, paths)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Empty(t, changed)

	write(t, filepath.Join(root, "internal/katatest/katatest.go"), "package katatest // pass\n")
	write(t, filepath.Join(root, "internal/katatest/extra file.go"), "package katatest\n")
	write(t, filepath.Join(root, "internal/.gitignore"), "*.syso\n")
	write(t, filepath.Join(root, "internal/katatest/x.syso"), "\x00")
	require.NoError(t, os.Remove(filepath.Join(root, "internal/katatest/race.go")))
	write(t, filepath.Join(root, "go.mod"), "module gokata\nreplace x => ./y\n")
	git("add", "katas/go.mod")
	changed, ok, err = integrity.Uncommitted(ctx, env, root, paths)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []integrity.Change{
		{Path: "go.mod", Differs: true},
		{Path: "internal/.gitignore", New: true, Differs: true},
		{Path: "internal/katatest/extra file.go", New: true, Differs: true},
		{Path: "internal/katatest/katatest.go", Differs: true},
		{Path: "internal/katatest/race.go", Differs: true},
		{Path: "internal/katatest/x.syso", New: true, Differs: true},
	}, changed)
	git("checkout", "-q", "HEAD", "--", ".")
	git("clean", "-qfdx")

	// git status trusts the index's flags; the content does not lie.
	write(t, filepath.Join(root, "internal/katatest/katatest.go"), "package katatest // pass\n")
	git("update-index", "--skip-worktree", "katas/internal/katatest/katatest.go")
	git("update-index", "--assume-unchanged", "katas/internal/katatest/race.go")
	status := exec.Command("git", "status", "--porcelain")
	status.Dir = top
	out, err := status.Output()
	require.NoError(t, err)
	require.Empty(t, string(out), "git status sees nothing")
	changed, _, err = integrity.Uncommitted(ctx, env, root, paths)
	require.NoError(t, err)
	assert.Equal(t, []integrity.Change{
		{Path: "internal/katatest/katatest.go", Flag: "skip-worktree", Differs: true},
		{Path: "internal/katatest/race.go", Flag: "assume-unchanged"},
	}, changed)
	git("update-index", "--no-skip-worktree", "katas/internal/katatest/katatest.go")
	git("update-index", "--no-assume-unchanged", "katas/internal/katatest/race.go")
	git("checkout", "-q", "HEAD", "--", ".")

	// A link where a file was committed differs; CRLF line ends do not;
	// a pattern covers what it matches.
	require.NoError(t, os.Remove(filepath.Join(root, "internal/katatest/race.go")))
	require.NoError(t, os.Symlink("katatest.go", filepath.Join(root, "internal/katatest/race.go")))
	write(t, filepath.Join(root, "go.mod"), "module gokata\r\n")
	write(t, filepath.Join(root, "solutions/a_test.go"), "package a\n")
	write(t, filepath.Join(root, "solutions/a.go"), "package a\n")
	changed, _, err = integrity.Uncommitted(ctx, env, root, append(paths, "solutions/*_test.go"))
	require.NoError(t, err)
	assert.Equal(t, []integrity.Change{
		{Path: "internal/katatest/race.go", Differs: true},
		{Path: "solutions/a_test.go", New: true, Differs: true},
	}, changed)
}

func BenchmarkTake(b *testing.B) {
	root, err := filepath.Abs("../../..")
	require.NoError(b, err)
	for b.Loop() {
		_, err := integrity.Take(root, []string{filepath.Join(root, "exercises/06-retry")})
		require.NoError(b, err)
	}
}
