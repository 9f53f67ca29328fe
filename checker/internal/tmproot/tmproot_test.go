package tmproot_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/tmproot"
)

func TestNewSweepsTheDead(t *testing.T) {
	parent := t.TempDir()
	// A process that has ended, and one that runs: this one.
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := filepath.Join(parent, "kata-run-"+strconv.Itoa(cmd.Process.Pid)+"-123")
	require.NoError(t, os.MkdirAll(filepath.Join(dead, "kata-1"), 0o700))
	other := filepath.Join(parent, "kata-run-x")
	require.NoError(t, os.Mkdir(other, 0o700))

	dir, err := tmproot.New(parent)
	require.NoError(t, err)
	assert.DirExists(t, dir)
	assert.NoDirExists(t, dead)
	assert.DirExists(t, other)

	again, err := tmproot.New(parent)
	require.NoError(t, err)
	assert.DirExists(t, dir, "a running checker's directory stays")
	assert.NotEqual(t, dir, again)
}
