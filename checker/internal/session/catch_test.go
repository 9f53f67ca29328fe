package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/catch"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
)

// A catch run without tests of the learner's is ErrNoTests; with tests
// the gate refuses, it is a report that ran nothing, emitted as Caught,
// and no score is recorded. (Runs that build: the catch testscripts.)
func TestCatcherWithoutRunnableTests(t *testing.T) {
	root := t.TempDir()
	ex := filepath.Join(root, "exercises", "06-retry")
	require.NoError(t, os.MkdirAll(ex, 0o755))
	k := catalog.Kata{Slug: "06-retry", Package: "retry", Exercise: ex, Solution: filepath.Join(root, "solutions", "06-retry")}
	var ev events
	c := &session.Catcher{Toolchain: &grade.Toolchain{Race: true}, Root: root, Emit: ev.emit}

	_, err := c.Catch(context.Background(), k)
	assert.ErrorIs(t, err, catch.ErrNoTests)
	assert.Empty(t, ev.since(0))

	require.NoError(t, os.WriteFile(filepath.Join(ex, "mine_test.go"), []byte("package retry\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { os.Getenv(\"X\") }\n"), 0o644))
	r, err := c.Catch(context.Background(), k)
	require.NoError(t, err)
	assert.False(t, r.Ran())
	require.Len(t, r.Gate, 1)
	assert.Contains(t, r.Gate[0].String(), `exercises/06-retry/mine_test.go:4: import "os" is not allowed`)
	assert.Equal(t, []session.Event{session.Caught{Report: r}}, ev.since(0))
	s, err := state.Load(root)
	require.NoError(t, err)
	assert.Nil(t, s.Kata(k.Slug).Catch, "nothing ran: no score")
}
