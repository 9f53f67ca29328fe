package pristine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/pristine"
)

var gitEnv = append(os.Environ(),
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")

type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) repo {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r := repo{t, t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r repo) write(name, content string) {
	p := filepath.Join(r.dir, name)
	require.NoError(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(r.t, os.WriteFile(p, []byte(content), 0o644))
}

func (r repo) git(args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, gitEnv
	out, err := cmd.CombinedOutput()
	require.NoError(r.t, err, "git %v: %s", args, out)
}

func (r repo) commit(msg string) { r.git("add", "-A"); r.git("commit", "-qm", msg) }

func (r repo) kata() catalog.Kata {
	return catalog.Kata{Num: 6, Slug: "06-retry", Package: "retry",
		Exercise: filepath.Join(r.dir, "exercises", "06-retry"), Solution: filepath.Join(r.dir, "solutions", "06-retry")}
}

func read(t *testing.T, r repo) map[string]string {
	t.Helper()
	s, err := pristine.Read(context.Background(), gitEnv, r.kata())
	require.NoError(t, err)
	m := map[string]string{}
	for n, d := range s.Files {
		m[n] = string(d)
	}
	return m
}

func TestStubSurvivesLearnerCommits(t *testing.T) {
	r := newRepo(t)
	r.write("exercises/06-retry/kata.json", "{}")
	r.write("exercises/06-retry/README.md", "task")
	r.write("exercises/06-retry/retry.go", "stub")
	r.write("exercises/06-retry/policy.go", "policy v1")
	r.write("solutions/06-retry/retry.go", "reference")
	r.commit("kata 06")
	r.git("branch", "upstream")
	r.write("exercises/06-retry/retry.go", "my attempt")
	r.write("exercises/06-retry/helper.go", "my helper")
	r.commit("my work")
	r.write("exercises/06-retry/retry.go", "my second attempt")
	r.commit("more work")
	assert.Equal(t, map[string]string{"retry.go": "stub", "policy.go": "policy v1"}, read(t, r))

	// The maintainers change the stub's API, with its tests, and the
	// learner merges that in: the stub is the maintainers' new one.
	r.git("checkout", "-q", "upstream")
	r.write("exercises/06-retry/policy.go", "policy v2")
	r.write("solutions/06-retry/retry_test.go", "tests v2")
	r.commit("kata 06: new API")
	r.git("checkout", "-q", "main")
	r.git("merge", "-q", "--no-edit", "upstream")
	r.write("exercises/06-retry/policy.go", "mine on v2")
	r.commit("mine again")
	assert.Equal(t, map[string]string{"retry.go": "stub", "policy.go": "policy v2"}, read(t, r))
}

func TestStubWithoutSolutionCommits(t *testing.T) {
	r := newRepo(t)
	r.write("exercises/06-retry/kata.json", "{}")
	r.write("exercises/06-retry/retry.go", "stub")
	r.commit("exercise first")
	r.write("solutions/06-retry/retry.go", "reference")
	r.commit("then its solution")
	r.write("exercises/06-retry/retry.go", "mine")
	r.commit("mine")
	assert.Equal(t, map[string]string{"retry.go": "stub"}, read(t, r))
}

func TestNoHistory(t *testing.T) {
	r := newRepo(t)
	r.write("exercises/06-retry/retry.go", "never committed")
	_, err := pristine.Read(context.Background(), gitEnv, r.kata())
	assert.ErrorIs(t, err, pristine.ErrNoHistory)

	plain := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(plain, "exercises", "06-retry"), 0o755))
	k := r.kata()
	k.Exercise = filepath.Join(plain, "exercises", "06-retry")
	_, err = pristine.Read(context.Background(), gitEnv, k)
	assert.ErrorIs(t, err, pristine.ErrNoHistory)
}

// Untouched: the exercise holds the stub's files and no others; the
// learner's own tests do not count.
func TestUntouched(t *testing.T) {
	r := newRepo(t)
	r.write("exercises/06-retry/retry.go", "package retry\n")
	r.write("exercises/06-retry/kata.json", "{}")
	r.write("solutions/06-retry/retry.go", "package retry // solved\n")
	r.commit("kata")
	untouched := func() bool {
		t.Helper()
		ok, err := pristine.Untouched(context.Background(), gitEnv, r.kata())
		require.NoError(t, err)
		return ok
	}
	assert.True(t, untouched())
	r.write("exercises/06-retry/retry_test.go", "package retry\n")
	assert.True(t, untouched(), "a test of the learner's own changes nothing")
	r.write("exercises/06-retry/retry.go", "package retry\n\nvar x int\n")
	assert.False(t, untouched(), "edited")
	r.write("exercises/06-retry/retry.go", "package retry\n")
	r.write("exercises/06-retry/more.go", "package retry\n")
	assert.False(t, untouched(), "a file added")
	require.NoError(t, os.Remove(filepath.Join(r.dir, "exercises/06-retry/more.go")))
	r.commit("the learner commits the stub with a test")
	assert.True(t, untouched())
}
