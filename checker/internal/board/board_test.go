package board

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

const token = "s3cret-token-42"

var katas = []room.Kata{testKata("01-fanout", "Fan-out", 6), testKata("06-retry", "Retry", 7)}

// testKata is a kata as the catalog has it: n requirements, two bonus
// follow-ups.
func testKata(slug, title string, n int) room.Kata {
	k := room.Kata{Slug: slug, Title: title, Bonus: []room.Item{{ID: "B1", Text: "bonus 1"}, {ID: "B2", Text: "bonus 2"}}}
	for i := 1; i <= n; i++ {
		k.Requirements = append(k.Requirements, room.Item{ID: fmt.Sprintf("R%d", i), Text: fmt.Sprintf("requirement %d", i)})
	}
	return k
}

// syncBuffer is a log that handlers write to concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a board served on a free port of 127.0.0.1.
type running struct {
	*Server
	url  string // http://127.0.0.1:PORT
	log  *syncBuffer
	stop func() error // shuts it down and returns what Serve returned
}

// start opens the room in dir, its Config changed by each of opts, and
// serves it until the test ends; each board that connects to /events is
// announced on the returned channel.
func start(t testing.TB, dir string, opts ...func(*Config)) (*running, <-chan struct{}) {
	t.Helper()
	log := &syncBuffer{}
	cfg := Config{Katas: katas, Dir: dir, Token: token, Log: log,
		Now: func() time.Time { return time.Date(2026, 5, 4, 10, 42, 7, 0, time.FixedZone("CEST", 2*3600)) }}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := Open(cfg)
	require.NoError(t, err)
	connected := make(chan struct{}, 16)
	s.connected = func() {
		select {
		case connected <- struct{}{}:
		default: // nobody is counting that many
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() { cancel(); result = <-served })
		return result
	}
	t.Cleanup(func() { stop() })
	return &running{Server: s, url: "http://" + l.Addr().String(), log: log, stop: stop}, connected
}

// gradeJSON is a grade as `check --json` prints it: the first req of
// total requirements pass, and neither bonus follow-up.
func gradeJSON(who, kata string, req, total int) []byte {
	items := []map[string]any{}
	for i := 1; i <= total; i++ {
		kind := "pass"
		if i > req {
			kind = "assertion"
		}
		items = append(items, map[string]any{"id": fmt.Sprintf("R%d", i), "text": fmt.Sprintf("requirement %d", i),
			"bonus": false, "kind": kind, "message": "", "hints": []int{1}})
	}
	for i := 1; i <= 2; i++ {
		items = append(items, map[string]any{"id": fmt.Sprintf("B%d", i), "text": fmt.Sprintf("bonus %d", i),
			"bonus": true, "kind": "assertion", "message": "", "hints": []int{}})
	}
	b, err := json.MarshalIndent(map[string]any{"schema": 1, "participant": who, "kata": kata, "title": "T",
		"passed": req == total, "score": map[string]int{"required": req, "requiredTotal": total, "bonus": 0, "bonusTotal": 2},
		"race": true, "noRace": "", "runs": 1, "gates": []any{}, "build": nil, "items": items}, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// post pushes body with tok and returns the status and the answer's body.
func post(t testing.TB, url, tok string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/push", bytes.NewReader(body))
	require.NoError(t, err)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func get(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func lines(t testing.TB, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestPushIsKeptAndShown(t *testing.T) {
	b, _ := start(t, t.TempDir())
	code, body := post(t, b.url, token, gradeJSON("Ada Lovelace", "06-retry", 3, 7))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "kept: Ada Lovelace, 06-retry 3/7\n", body)

	stored := lines(t, b.Path())
	require.Len(t, stored, 1, "one line per push")
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(stored[0]), &line))
	assert.Equal(t, "2026-05-04T10:42:07+02:00", line["received"], "stamped with the time it came in")
	assert.Equal(t, "Ada Lovelace", line["participant"])
	assert.Len(t, line["items"], 9, "every item is kept")

	resp, page := get(t, b.url+"/")
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, page, `<tr data-participant="Ada Lovelace">`)
	assert.Contains(t, page, `3/7<small>R4 · 0 min</small>`, "minutes stuck")
	assert.Contains(t, b.log.String(), "10:42:07 Ada Lovelace: 06-retry 3/7\n")
}

// Each way a push can be wrong gets its status and reason, and nothing
// of it is kept or shown.
func TestBadPushes(t *testing.T) {
	b, _ := start(t, t.TempDir())
	for _, tc := range []struct {
		name, tok string
		body      []byte
		code      int
		reason    string
	}{
		{"no token", "", gradeJSON("Eve", "06-retry", 1, 7), 401, "wrong or missing token"},
		{"wrong token", "s3cret-token-41", gradeJSON("Eve", "06-retry", 1, 7), 401, "wrong or missing token"},
		{"a prefix of the token", token[:5], gradeJSON("Eve", "06-retry", 1, 7), 401, "wrong or missing token"},
		{"too big", token, append(gradeJSON("Eve", "06-retry", 1, 7), bytes.Repeat([]byte(" "), MaxBody)...), 413, "at most 1 MiB"},
		{"not JSON", token, []byte("{\"schema\": 1, "), 400, "not a grade from checker check --json: unexpected end of JSON input"},
		{"two grades", token, append(gradeJSON("Eve", "06-retry", 1, 7), gradeJSON("Eve", "06-retry", 1, 7)...), 400, "not a grade"},
		{"another schema", token, []byte(`{"schema": 2, "participant": "Eve", "kata": "06-retry"}`), 400, "schema 2"},
		{"a kata the room has not", token, gradeJSON("Eve", "99-nope", 1, 7), 400, `this room has no kata "99-nope"`},
		{"no name", token, gradeJSON("  ", "06-retry", 1, 7), 400, "names no participant"},
		{"a name too long", token, gradeJSON(strings.Repeat("x", 41), "06-retry", 1, 7), 400, "over 40 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, b.url, tc.tok, tc.body)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, body, tc.reason)
		})
	}
	assert.Equal(t, 0, b.Participants(), "nothing refused is shown")
	data, err := os.ReadFile(b.Path())
	require.NoError(t, err)
	assert.Empty(t, data, "nothing refused is kept")
	assert.Contains(t, b.log.String(), "refused a push from 127.0.0.1: wrong or missing token")
	code, body := post(t, b.url, token, largestGrade(t))
	assert.Equal(t, http.StatusOK, code, "the largest grade the checker can print fits: %s", body)
}

// largestGrade is a grade as large as `check --json` can print: 24 tests
// (the most a kata has), each with the 20 lines of 300 bytes of output a
// grade keeps, every byte one that JSON escapes as \u00XX.
func largestGrade(t *testing.T) []byte {
	var g map[string]any
	require.NoError(t, json.Unmarshal(gradeJSON("Ada", "06-retry", 3, 7), &g))
	line := strings.Repeat("\x01", 300)
	var lines []string
	for range 10 {
		lines = append(lines, line)
	}
	var tests []map[string]any
	for i := range 24 {
		tests = append(tests, map[string]any{"name": fmt.Sprintf("TestR1_Case%d", i), "kind": "assertion",
			"message": strings.Repeat("m", 300), "output": map[string]any{"head": lines, "cut": 1000, "tail": lines}})
	}
	g["items"].([]any)[0].(map[string]any)["tests"] = tests
	out, err := json.MarshalIndent(g, "", "  ")
	require.NoError(t, err)
	require.Greater(t, len(out), 850_000)
	return out
}

// The token is in neither a page nor the log, whatever was pushed.
func TestTokenNeverShown(t *testing.T) {
	b, _ := start(t, t.TempDir())
	code, _ := post(t, b.url, token, gradeJSON("Ada", "06-retry", 3, 7))
	require.Equal(t, 200, code)
	post(t, b.url, token+"x", gradeJSON("Eve", "06-retry", 3, 7))
	post(t, b.url, token, []byte("{"))
	var seen strings.Builder
	for _, p := range []string{"/", "/board.js"} {
		_, body := get(t, b.url+p)
		seen.WriteString(body)
	}
	seen.WriteString(b.log.String())
	require.NoError(t, b.stop())
	assert.Contains(t, seen.String(), "Ada", "the pages and log were read")
	assert.NotContains(t, seen.String(), token[3:], "the token, or most of it")
}

// Only the board's own paths: no directory listing, no file.
func TestOnlyTheBoardsPaths(t *testing.T) {
	dir := t.TempDir()
	b, _ := start(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("do not serve"), 0o644))
	for _, p := range []string{"/pushes.json", "/secret.txt", "/index.html", "/board.js/", "/events/x", "/..%2fpushes.json", "/static/", "/push/"} {
		resp, body := get(t, b.url+p)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		assert.NotContains(t, body, "do not serve", p)
	}
	resp, _ := get(t, b.url+"/push")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "a push is a POST")

	resp, js := get(t, b.url+"/board.js")
	assert.Equal(t, "text/javascript; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, js, `new EventSource("/events")`)
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "script-src 'self'")
	assert.Contains(t, csp, "connect-src 'self'")
	assert.NotContains(t, csp, "unsafe-inline")
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
}

// A participant named like a script is shown as text, in the page and in
// the tables the events carry.
func TestNamesAreEscaped(t *testing.T) {
	b, connected := start(t, t.TempDir())
	ev := follow(t, b.url, connected)
	ev.next(t) // the empty room
	name := `<script>alert("pwned")</script>`
	code, body := post(t, b.url, token, gradeJSON(name, "06-retry", 3, 7))
	require.Equal(t, 200, code, body)
	_, page := get(t, b.url+"/")
	table := ev.next(t)
	for what, html := range map[string]string{"page": page, "event": table} {
		assert.NotContains(t, html, "<script>alert", what)
		assert.Contains(t, html, `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;`, what)
	}
	assert.Equal(t, 1, strings.Count(page, "<script"), "only the board's own script tag")
}

// The board's log is a terminal: a pushed name cannot steer it (clear
// the screen, retitle the window), nor the pusher's terminal. A name
// loses its control characters; what a refused push names is escaped.
func TestLogIsEscaped(t *testing.T) {
	b, _ := start(t, t.TempDir())
	code, body := post(t, b.url, token, gradeJSON("Mallory\x1b]0;pwned\a\x1b[2J", "06-retry", 3, 7))
	require.Equal(t, 200, code, body)
	refusedCode, refusedBody := post(t, b.url, token, gradeJSON("Mallory", "06\x1b]0;pwned\a", 3, 7))
	require.Equal(t, 400, refusedCode, refusedBody)
	for what, text := range map[string]string{"log": b.log.String(), "answer": body} {
		assert.NotContains(t, text, "\x1b", what)
		assert.NotContains(t, text, "\a", what)
		assert.Contains(t, text, `Mallory]0;pwned[2J`, what)
	}
	assert.Contains(t, b.log.String(), `this room has no kata "06\x1b]0;pwned\a"`)
}

// events reads Server-Sent Events from /events.
type events struct {
	r    *bufio.Reader
	body io.Closer
}

// follow connects to /events and waits until the board says it is
// following.
func follow(t testing.TB, url string, connected <-chan struct{}) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	select {
	case <-connected:
	case <-time.After(10 * time.Second):
		t.Fatal("the board did not see the client connect")
	}
	return &events{r: bufio.NewReader(resp.Body), body: resp.Body}
}

// next reads one "grid" event and returns its data.
func (e *events) next(t testing.TB) string {
	t.Helper()
	var data []string
	event := ""
	for {
		line, err := e.r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			require.Equal(t, "grid", event)
			return strings.Join(data, "\n")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
}

func TestEventsDeliverEachChange(t *testing.T) {
	b, connected := start(t, t.TempDir())
	ev := follow(t, b.url, connected)
	first := ev.next(t)
	assert.True(t, strings.HasPrefix(first, `<table id="room">`), first)
	assert.NotContains(t, first, "data-participant=")

	post(t, b.url, token, gradeJSON("Grace Hopper", "01-fanout", 6, 6))
	second := ev.next(t)
	assert.Contains(t, second, `<tr data-participant="Grace Hopper">`)
	assert.Contains(t, second, `<td class="pass" data-kata="01-fanout">✔</td>`)

	require.NoError(t, b.stop(), "a shutdown ends the stream and is clean")
	_, err := ev.r.ReadString('\n')
	assert.ErrorIs(t, err, io.EOF)
}

// Boards following /events are capped: one more is refused with 503, and
// a place freed is taken again.
func TestEventsCapped(t *testing.T) {
	b, connected := start(t, t.TempDir())
	b.Server.mu.Lock()
	b.Server.maxStreams = 1
	b.Server.mu.Unlock()
	ev := follow(t, b.url, connected)
	ev.next(t)
	resp, body := get(t, b.url+"/events")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, body, "open in 1 places already")
	assert.Contains(t, b.log.String(), "refused a board from 127.0.0.1")
}

// A restarted board shows the same room; a line cut short by a crash is
// skipped with a warning and cut off, a bad line in the middle is
// skipped with its number, and new pushes follow.
func TestRestartShowsTheSameRoom(t *testing.T) {
	dir := t.TempDir()
	b, _ := start(t, dir)
	for _, g := range [][]byte{
		gradeJSON("Ada", "06-retry", 3, 7), gradeJSON("Ada", "06-retry", 5, 7), gradeJSON("Grace", "01-fanout", 6, 6),
	} {
		code, body := post(t, b.url, token, g)
		require.Equal(t, 200, code, body)
	}
	before := tableOf(t, b.Server)
	require.NoError(t, b.stop())

	b2, _ := start(t, dir)
	assert.Equal(t, before, tableOf(t, b2.Server), "the same room after a restart")
	assert.Empty(t, b2.log.String(), "nothing to warn about")
	require.NoError(t, b2.stop())

	// A crash in the middle of a write, after a line someone broke by hand.
	path := filepath.Join(dir, FileName)
	stored := lines(t, path)
	broken := strings.Join([]string{stored[0], "{not a grade", stored[1], stored[2]}, "\n") + "\n"
	full := string(gradeJSON("Linus", "06-retry", 1, 7))
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, []byte(full)))
	torn := compact.String()[:compact.Len()/2]
	require.NoError(t, os.WriteFile(path, []byte(broken+torn), 0o644))

	b3, _ := start(t, dir)
	assert.Equal(t, before, tableOf(t, b3.Server), "the torn push is not shown, the rest is")
	assert.Equal(t, "warning: pushes.json: line 2 skipped: invalid character 'n' looking for beginning of object key string\n"+
		"warning: pushes.json: line 5 was cut short when the server stopped; skipped it (it was never acknowledged)\n", b3.log.String())
	code, body := post(t, b3.url, token, gradeJSON("Linus", "06-retry", 1, 7))
	require.Equal(t, 200, code, body)
	require.NoError(t, b3.stop())
	after := lines(t, path)
	require.Len(t, after, 5, "the torn line was cut off, the new push follows on a line of its own")
	assert.Contains(t, after[4], `"participant":"Linus"`)

	b4, _ := start(t, dir)
	assert.Equal(t, 3, b4.Participants())
	assert.Equal(t, "warning: pushes.json: line 2 skipped: invalid character 'n' looking for beginning of object key string\n", b4.log.String())
}

// A last line that lost only its newline is whole: it is kept.
func TestLastLineWithoutNewline(t *testing.T) {
	dir := t.TempDir()
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, gradeJSON("Ada", "06-retry", 3, 7)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), compact.Bytes(), 0o644))
	b, _ := start(t, dir)
	assert.Equal(t, 1, b.Participants())
	code, _ := post(t, b.url, token, gradeJSON("Grace", "06-retry", 3, 7))
	require.Equal(t, 200, code)
	require.NoError(t, b.stop())
	assert.Len(t, lines(t, filepath.Join(dir, FileName)), 2)
}

func tableOf(t testing.TB, s *Server) string {
	var b bytes.Buffer
	s.Grid(func(g *room.Grid) { require.NoError(t, g.Table(&b)) })
	return b.String()
}

// The push client: a grade kept is nil; every failure is one short line,
// within PushTimeout even when the board never answers.
func TestPushClient(t *testing.T) {
	b, _ := start(t, t.TempDir())
	grade := gradeJSON("Ada", "06-retry", 3, 7)
	require.NoError(t, Push(context.Background(), b.url, token, "", grade))
	require.NoError(t, Push(context.Background(), b.url+"/", token, "", grade), "a trailing slash is fine")
	assert.Equal(t, 1, b.Participants())

	err := Push(context.Background(), b.url, "wrong", "", grade)
	assert.EqualError(t, err, "the board answered 401: wrong or missing token: use the one the facilitator gave (KATA_TOKEN, --token)")
	err = Push(context.Background(), b.url, token, "", []byte("{}"))
	assert.EqualError(t, err, "the board answered 400: not a grade from checker check --json: schema 0; this checker reads schema 1")

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := closed.Addr().String()
	closed.Close()
	err = Push(context.Background(), "http://"+addr, token, "", grade)
	assert.EqualError(t, err, "connection refused: is the board running, at that address and port?")

	err = Push(context.Background(), "192.168.1.20:8080", token, "", grade)
	assert.EqualError(t, err, `"192.168.1.20:8080" is not a board's address: give one like http://192.168.1.20:8080`)
}

// A board that takes the request and never answers costs a push its
// timeout, not more.
func TestPushClientTimeout(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer hang.Close()
	defer close(release)
	start := time.Now()
	err := Push(context.Background(), hang.URL, token, "", gradeJSON("Ada", "06-retry", 3, 7))
	took := time.Since(start)
	assert.EqualError(t, err, "no answer within 1s")
	select {
	case <-arrived:
	default:
		t.Fatal("the push never reached the board")
	}
	assert.GreaterOrEqual(t, took, PushTimeout, "it gave the board its whole second")
}
