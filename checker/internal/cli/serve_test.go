package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/cli"
)

// A workshop with a live board, end to end: the facilitator serves the
// room, a participant's check pushes its grade, the board shows it, and a
// restarted board shows the same room. A push refused costs one line and
// changes nothing else; a port in use is one line too.
func TestServeAndPush(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	room := filepath.Join(t.TempDir(), "room")
	srv := start(t, dir, cli.Env{}, "serve", "--addr", "127.0.0.1:0", "--token", "workshop-2026", "--dir", room)
	srv.out.await(t, 0, "Ctrl-C stops the board.\n")
	url := regexp.MustCompile(`Room board: (http://127\.0\.0\.1:\d+)/\n`).FindStringSubmatch(srv.out.String())
	require.NotNil(t, url, srv.out.String())
	base := url[1]
	assert.Contains(t, srv.out.String(), "  make check EX=01 PUSH="+base+" TOKEN=workshop-2026 NAME=\"Their Name\"\n")
	assert.Contains(t, srv.out.String(), "  export KATA_PUSH="+base+" KATA_TOKEN=workshop-2026 KATA_NAME=\"Their Name\"\n")
	assert.Less(t, strings.Index(srv.out.String(), "  export KATA_PUSH="), strings.Index(srv.out.String(), "  make check "), "the environment's form comes first")

	second := run(t, dir, "serve", "--addr", "127.0.0.1:0", "--dir", room)
	assert.Equal(t, cli.ExitUsage, second.code)
	assert.Contains(t, second.stderr, fmt.Sprintf("another board (process %d) is serving the room in %s", os.Getpid(), room), "one server per room")

	busy := run(t, dir, "serve", "--addr", strings.TrimPrefix(base, "http://"))
	assert.Equal(t, cli.ExitUsage, busy.code)
	assert.Equal(t, "checker: cannot serve on "+strings.TrimPrefix(base, "http://")+": the port is in use; choose another, e.g. make serve ADDR=:8081\n", busy.stderr)

	ck := run(t, dir, "check", "06", "--push", base, "--token", "workshop-2026", "--name", "Ada <b>Lovelace</b>")
	assert.Equal(t, cli.ExitFail, ck.code, "the untouched stub")
	assert.Contains(t, ck.stdout, "06-retry")
	assert.NotContains(t, ck.stderr, "not sent", "the push was kept")
	srv.errb.await(t, 0, "Ada <b>Lovelace</b>: 06-retry 0/")

	page := httpGet(t, base+"/")
	assert.Contains(t, page, `<tr data-participant="Ada &lt;b&gt;Lovelace&lt;/b&gt;">`)
	assert.Contains(t, page, `<small>R1 · 0 min</small>`)

	// watch pushes each grade too, told by the environment.
	watching := start(t, dir, cli.Env{Vars: append(os.Environ(), "KATA_PUSH="+base, "KATA_TOKEN=workshop-2026", "KATA_NAME=Grace Hopper")}, "watch", "06")
	srv.errb.await(t, 0, "Grace Hopper: 06-retry 0/")
	watching.out.await(t, 0, "Watching ")
	assert.Equal(t, cli.ExitInterrupted, watching.stop(t))
	assert.NotContains(t, watching.errb.String(), "not sent")

	// The environment makes every check push; a wrong token is refused.
	env := cli.Env{Vars: append(os.Environ(), "KATA_PUSH="+base, "KATA_TOKEN=not-the-token", "KATA_NAME=Eve")}
	refused := start(t, dir, env, "check", "06")
	assert.Equal(t, cli.ExitFail, refused.wait(t), "the exit code is the grade's")
	assert.Contains(t, refused.out.String(), "06-retry")
	assert.Regexp(t, `(?m)^checker: grade of 06-retry not sent to the board at `+regexp.QuoteMeta(base)+`: the board answered 401: wrong or missing token`, refused.errb.String())
	srv.errb.await(t, 0, "refused a push from 127.0.0.1: wrong or missing token\n")
	assert.NotContains(t, srv.errb.String(), "workshop-2026", "the token is not in the log")
	assert.NotContains(t, srv.errb.String(), "not-the-token")

	assert.Equal(t, cli.ExitPass, srv.stop(t), "Ctrl-C stops the board cleanly")
	assert.Contains(t, srv.errb.String(), "checker: board stopped; the room is kept in ")

	again := start(t, dir, cli.Env{}, "serve", "--addr", "127.0.0.1:0", "--token", "workshop-2026", "--dir", room)
	again.out.await(t, 0, "(2 participants so far)")
	assert.Equal(t, cli.ExitPass, again.stop(t))
}

func TestPushUsage(t *testing.T) {
	dir := checkout(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "06", "--push", "http://127.0.0.1:1"}, "--push needs the room's token"},
		{[]string{"watch", "06", "--push", "http://127.0.0.1:1"}, "--push needs the room's token"},
		{[]string{"check", "06", "--push", "192.168.1.20:8080", "--token", "abcdefgh"}, `is not a board's address`},
		{[]string{"check", "06", "--token", "abcdefgh"}, "name the board too"},
		{[]string{"serve", "--token", "a b"}, "--token: use 8 to 100 letters"},
		{[]string{"serve", "--addr", "nonsense"}, "cannot serve on nonsense: address nonsense: missing port in address"},
		{[]string{"serve", "--katas", "03,99", "--dir", t.TempDir()}, `--katas: no kata "99"`},
		{[]string{"serve", "--stuck", "0", "--dir", t.TempDir()}, "--quiet and --stuck are durations above zero"},
	} {
		r := run(t, dir, tc.args...)
		assert.Equal(t, cli.ExitUsage, r.code, "%v", tc.args)
		assert.Contains(t, r.stderr, tc.want, "%v", tc.args)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestServeAdminToken(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	same := run(t, dir, "serve", "--addr", "127.0.0.1:0", "--token", "workshop-2026", "--admin-token", "workshop-2026", "--dir", t.TempDir())
	assert.Equal(t, cli.ExitUsage, same.code)
	assert.Contains(t, same.stderr, "--admin-token: use 8 to 100 letters, digits, or . _ ~ -, other than the participants' token")
	assert.NotContains(t, same.stdout, "workshop-2026")
}

// With join codes, the banner asks for each participant's code, and a
// check pushes with the one it is given (--code, KATA_CODE).
func TestServeCodes(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	codes := filepath.Join(t.TempDir(), "codes.txt")
	require.NoError(t, os.WriteFile(codes, []byte("Ada Lovelace ada-7f3k\nGrace Hopper gr-22qz\n"), 0o644))
	srv := start(t, dir, cli.Env{}, "serve", "--addr", "127.0.0.1:0", "--token", "workshop-2026", "--dir", t.TempDir(), "--codes", codes)
	srv.out.await(t, 0, "Ctrl-C stops the board.\n")
	base := regexp.MustCompile(`Room board: (http://127\.0\.0\.1:\d+)/\n`).FindStringSubmatch(srv.out.String())[1]
	assert.Contains(t, srv.out.String(), "  export KATA_PUSH="+base+" KATA_TOKEN=workshop-2026 KATA_NAME=\"Their Name\" KATA_CODE=their-code\n")
	assert.NotContains(t, srv.out.String(), "ada-7f3k")

	wrong := run(t, dir, "check", "06", "--push", base, "--token", "workshop-2026", "--name", "Ada Lovelace", "--code", "gr-22qz")
	assert.Contains(t, wrong.stderr, "the board answered 403: wrong or missing join code for this name")
	right := start(t, dir, cli.Env{Vars: append(os.Environ(), "KATA_CODE=ada-7f3k")}, "check", "06", "--push", base, "--token", "workshop-2026", "--name", "Ada Lovelace")
	srv.errb.await(t, 0, "Ada Lovelace: 06-retry 0/")
	assert.NotContains(t, right.errb.String(), "not sent")

	bad := run(t, dir, "serve", "--addr", "127.0.0.1:0", "--dir", t.TempDir(), "--codes", filepath.Join(t.TempDir(), "none.txt"))
	assert.Equal(t, cli.ExitUsage, bad.code)
	assert.Contains(t, bad.stderr, "--codes: ")
}
