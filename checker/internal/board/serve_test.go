package board

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ByteSize
		text string
	}{
		{"64MiB", 64 << 20, "64MiB"},
		{"512KiB", 512 << 10, "512KiB"},
		{"1GiB", 1 << 30, "1GiB"},
		{"1024", 1 << 10, "1KiB"},
		{"1000", 1000, "1000"},
		{"1024GiB", 1 << 40, "1024GiB"},
	} {
		var b ByteSize
		require.NoError(t, b.Set(tc.in), tc.in)
		assert.Equal(t, tc.want, b, tc.in)
		assert.Equal(t, tc.text, b.String(), tc.in)
	}
	for _, in := range []string{"", "0", "-1MiB", "1.5MiB", "64MB", "1025GiB", "MiB"} {
		var b ByteSize
		assert.EqualError(t, b.Set(in), "give a size above zero such as 64MiB, 512KiB or 1GiB", in)
	}
}

// serveConfig is a valid ServeConfig for a room in a new directory.
func serveConfig(t *testing.T) ServeConfig {
	return ServeConfig{Addr: "127.0.0.1:0", WorkDir: t.TempDir(), Dir: "room", Token: token, Catalog: katas,
		Find:       func(name string) (string, bool) { return findSlug(strings.TrimSpace(name)) },
		QuietAfter: 10 * time.Minute, StuckAfter: 10 * time.Minute,
		MaxPushes: DefaultMaxPushes, MaxStored: DefaultMaxStored, MaxData: DefaultMaxData}
}

// findSlug finds a test kata by its number or its slug.
func findSlug(name string) (string, bool) {
	for _, k := range katas {
		if name == k.Slug || name == short(k.Slug) {
			return k.Slug, true
		}
	}
	return "", false
}

// The choices Serve refuses, each with what to try.
func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		change func(*ServeConfig)
		msg    string
		try    string
	}{
		{func(c *ServeConfig) { c.Token = "a b" }, "--token: use 8 to 100 letters", "checker serve --token workshop-2026"},
		{func(c *ServeConfig) { c.AdminToken = token }, "--admin-token: use 8 to 100 letters, digits, or . _ ~ -, other than the participants' token", "checker serve --admin-token facilitator-2026"},
		{func(c *ServeConfig) { c.MaxPushes = 0 }, "--max-pushes is a number of pushes above zero", "checker serve --max-pushes 60"},
		{func(c *ServeConfig) { c.StuckAfter = 0 }, "--quiet and --stuck are durations above zero", "checker serve --quiet 10m --stuck 10m"},
		{func(c *ServeConfig) { c.QuietAfter = -time.Second }, "--quiet and --stuck are durations above zero", "checker serve --quiet 10m --stuck 10m"},
		{func(c *ServeConfig) { c.Agenda = "06, 99" }, `--katas: no kata "99"; the katas are 01-fanout, 06-retry`, "checker serve --katas 01,06"},
		{func(c *ServeConfig) { c.Codes = "none.txt" }, "--codes: open ", ""},
		{func(c *ServeConfig) { c.Addr = "nonsense" }, "cannot serve on nonsense: address nonsense: missing port in address", ""},
	} {
		cfg := serveConfig(t)
		tc.change(&cfg)
		err := Serve(t.Context(), cfg, io.Discard, io.Discard)
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.msg)
		assert.Contains(t, ue.Msg, tc.msg)
		assert.Equal(t, tc.try, ue.Try, tc.msg)
	}
	cfg := serveConfig(t)
	cfg.Catalog = nil
	err := Serve(t.Context(), cfg, io.Discard, io.Discard)
	assert.EqualError(t, err, "the checkout has no katas to show")
	assert.False(t, errors.As(err, new(*UsageError)), "not the facilitator's mistake")
}

func TestServeAgenda(t *testing.T) {
	cfg := serveConfig(t)
	cfg.Agenda = "06,01, 06-retry"
	agenda, err := cfg.agenda()
	require.NoError(t, err)
	require.Len(t, agenda, 2, "each kata once, in the agenda's order")
	assert.Equal(t, "06-retry", agenda[0].Slug)
	assert.Equal(t, "01-fanout", agenda[1].Slug)
	cfg.Agenda = " "
	agenda, err = cfg.agenda()
	require.NoError(t, err)
	assert.Len(t, agenda, 2, "all")
}

func TestListenError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	cfg := serveConfig(t)
	cfg.Addr = l.Addr().String()
	err = Serve(t.Context(), cfg, io.Discard, io.Discard)
	assert.EqualError(t, err, "cannot serve on "+cfg.Addr+": the port is in use; choose another, e.g. make serve ADDR=:8081")
}

func TestBoardHost(t *testing.T) {
	assert.Equal(t, "127.0.0.1", boardHost("127.0.0.1:8080"))
	assert.Equal(t, "board.local", boardHost("board.local:8080"))
	assert.NotEmpty(t, boardHost(":8080"))
	assert.NotEqual(t, "0.0.0.0", boardHost("0.0.0.0:8080"))
}

// Serve prints the board's address and what participants type, takes the
// pushes of a Pusher, and stops cleanly when its context is done.
func TestServeAndPusher(t *testing.T) {
	cfg := serveConfig(t)
	cfg.Agenda, cfg.AdminToken = "06", "facilitator-2026"
	out, log := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, cfg, out, log) }()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "Ctrl-C stops the board.\n") }, 10*time.Second, 10*time.Millisecond)
	m := regexp.MustCompile(`Room board: (http://127\.0\.0\.1:\d+)/\n`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	base := m[1]
	assert.Contains(t, out.String(), "  export KATA_PUSH="+base+" KATA_TOKEN="+token+" KATA_NAME=\"Their Name\"\n")
	assert.Contains(t, out.String(), "  make check EX=06 PUSH="+base+" TOKEN="+token+" NAME=\"Their Name\"\n")
	assert.Contains(t, out.String(), "Your controls: POST "+base+"/admin/hide")
	assert.Contains(t, out.String(), "The room is kept in "+filepath.Join("room", FileName)+" (0 participants so far).")
	assert.NotContains(t, out.String(), "facilitator-2026")

	pushLog := &syncBuffer{}
	p, err := NewPusher(t.Context(), PushConfig{Name: "Ada", Env: []string{"KATA_PUSH=" + base, "KATA_TOKEN=" + token}, Verb: "check", Log: pushLog})
	require.NoError(t, err)
	p.Send(t.Context(), "06-retry", func(w io.Writer, who string) error {
		_, err := w.Write(gradeJSON(who, "06-retry", 3, 7))
		return err
	})
	assert.Empty(t, pushLog.String())
	assert.Contains(t, log.String(), "Ada: 06-retry 3/7")

	p.Send(t.Context(), "06-retry", func(io.Writer, string) error { return errors.New("cannot encode") })
	assert.Equal(t, "checker: grade not sent to the board: cannot encode\n", pushLog.String())

	cancel()
	require.NoError(t, <-served)
	assert.Contains(t, log.String(), "checker: board stopped; the room is kept in "+filepath.Join("room", FileName)+"\n")
}

func TestNewPusher(t *testing.T) {
	p, err := NewPusher(t.Context(), PushConfig{Verb: "check"})
	assert.NoError(t, err)
	assert.Nil(t, p, "no board named")

	for _, tc := range []struct {
		cfg      PushConfig
		msg, try string
	}{
		{PushConfig{Token: "abcdefgh", Verb: "watch"}, "--token is the room's token for --push: name the board too", "checker watch --push http://HOST:8080 --token TOKEN"},
		{PushConfig{URL: "192.168.1.20:8080", Token: "abcdefgh", Verb: "check"}, `--push: "192.168.1.20:8080" is not a board's address`, "checker check --push http://HOST:8080 --token TOKEN"},
		{PushConfig{Env: []string{"KATA_PUSH=http://127.0.0.1:1"}, Verb: "check"}, "--push needs the room's token: --token (or KATA_TOKEN), as the facilitator gave it", "checker check --push http://127.0.0.1:1 --token TOKEN"},
	} {
		_, err := NewPusher(t.Context(), tc.cfg)
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.msg)
		assert.Contains(t, ue.Msg, tc.msg)
		assert.Equal(t, tc.try, ue.Try)
	}
}

// A push the board refuses is one line on the pusher's log, naming the
// kata and the board.
func TestPusherRefused(t *testing.T) {
	b, _ := start(t, t.TempDir())
	log := &syncBuffer{}
	p, err := NewPusher(t.Context(), PushConfig{URL: b.url, Token: "not-the-token", Name: "Eve", Code: "eve-code", Log: log})
	require.NoError(t, err)
	p.Send(t.Context(), "06-retry", func(w io.Writer, who string) error {
		_, err := w.Write(gradeJSON(who, "06-retry", 3, 7))
		return err
	})
	assert.Equal(t, "checker: grade of 06-retry not sent to the board at "+b.url+": the board answered 401: wrong or missing token: use the one the facilitator gave (KATA_TOKEN, --token)\n", log.String())
	assert.Zero(t, b.Participants())

	var none *Pusher
	none.Send(t.Context(), "06-retry", func(io.Writer, string) error { panic("a nil pusher sends nothing") })
}
