package pack_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/grade"
	"gokata/checker/internal/pack"
)

// A system the go command cannot build for is a usage error that lists
// the ones it can.
func TestCheckPlatform(t *testing.T) {
	ctx := context.Background()
	tc, err := grade.Detect(ctx, os.Environ())
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, pack.CheckPlatform(ctx, tc, dir, "darwin", "arm64"))

	var ue *pack.UsageError
	require.ErrorAs(t, pack.CheckPlatform(ctx, tc, dir, "darwn", "arm64"), &ue)
	assert.Regexp(t, `^--os=darwn: Go cannot build for that system; --os takes one of: .*\bdarwin\b`, ue.Msg)
	assert.Equal(t, "checker pack --out DIR --os darwin --arch arm64", ue.Try)
	require.ErrorAs(t, pack.CheckPlatform(ctx, tc, dir, "darwin", "arm65"), &ue)
	assert.Equal(t, "--arch=arm65: Go cannot build darwin for that CPU; --arch takes one of: amd64 arm64", ue.Msg)
}
