package room_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

// Report writes room.html and room.md next to the grades, or to Out, and
// the Markdown on stdout too; a file it skips is a line on the log.
func TestReport(t *testing.T) {
	work := t.TempDir()
	require.NoError(t, os.Rename(roomDir(t), filepath.Join(work, "results")))
	katas := []room.Kata{{Slug: "01-fanout", Title: "Fan-out"}, {Slug: "04-partial", Title: "Partial success"}}
	var stdout, log bytes.Buffer
	require.NoError(t, room.Report(room.ReportConfig{Katas: katas, WorkDir: work, Dir: "results"}, &stdout, &log))
	md, err := os.ReadFile(filepath.Join(work, "results", "room.md"))
	require.NoError(t, err)
	assert.Equal(t, string(md), stdout.String())
	assert.Contains(t, stdout.String(), "04-partial", "every kata has a column, graded or not")
	assert.FileExists(t, filepath.Join(work, "results", "room.html"))
	assert.Contains(t, log.String(), "checker: skipped broken.json: grade 1:")
	assert.Contains(t, log.String(), "checker: wrote "+filepath.Join(work, "results", "room.html")+" and ")

	out := filepath.Join(t.TempDir(), "new", "room")
	require.NoError(t, room.Report(room.ReportConfig{WorkDir: work, Dir: "results", Out: out}, &stdout, &log))
	assert.FileExists(t, filepath.Join(out, "room.html"))
	assert.FileExists(t, filepath.Join(out, "room.md"))
}

func TestReportNoGrades(t *testing.T) {
	var stdout, log bytes.Buffer
	err := room.Report(room.ReportConfig{WorkDir: t.TempDir(), Dir: "."}, &stdout, &log)
	var ue *room.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Msg, "no grades in ")
	assert.Contains(t, ue.Try, "check --json")
	assert.Empty(t, stdout.String())
}

// The name a grade carries: --name, else KATA_NAME, else git's
// user.name; a push falls back on the system's user name.
func TestParticipant(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"), "USER=ada"}
	dir := t.TempDir()
	ctx := t.Context()
	assert.Equal(t, "Ada Lovelace", room.Participant(ctx, "Ada Lovelace", dir, append(env, "KATA_NAME=Grace"), false))
	assert.Equal(t, "Grace", room.Participant(ctx, "", dir, append(env, "KATA_NAME=Grace"), false))
	assert.Equal(t, "", room.Participant(ctx, "", dir, env, false), "no name at all")
	assert.Equal(t, "ada", room.Participant(ctx, "", dir, env, true), "a push needs a name")

	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Grace Hopper\n"), 0o644))
	assert.Equal(t, "Grace Hopper", room.Participant(ctx, "", dir, env, true))
}
