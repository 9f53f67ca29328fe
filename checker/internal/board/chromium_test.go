package board

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/chromium"
)

// The board in a real browser: headless Chromium opens it; once the page
// follows /events, a grade is pushed, and the page must show it (as text,
// though the name is a script tag) within a second, having loaded no
// script from anywhere but the board. The browser is driven over the
// DevTools protocol on a pipe (--remote-debugging-pipe): standard library
// only, and nothing waits a fixed time.
func TestBoardInChromium(t *testing.T) {
	browser := chromium.Path(t)
	b, connected := start(t, t.TempDir())

	cdp := launch(t, browser)
	target := cdp.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	attached := cdp.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target["targetId"], "flatten": true})
	session := attached["sessionId"].(string)
	cdp.call(t, session, "Network.enable", nil)
	cdp.call(t, session, "Page.navigate", map[string]any{"url": b.url + "/"})
	select {
	case <-connected:
	case <-time.After(time.Minute):
		t.Fatal("the page never followed /events")
	}

	name := `Ada <script>alert("x")</script>`
	seen := cdp.send(session, "Runtime.evaluate", map[string]any{"awaitPromise": true, "returnByValue": true,
		"expression": fmt.Sprintf(waitForRow, jsString(name))})
	code, body := post(t, b.url, token, gradeJSON(name, "06-retry", 3, 7))
	require.Equal(t, 200, code, body)
	res := cdp.wait(t, seen)
	var got struct {
		Found   bool     `json:"found"`
		Ms      float64  `json:"ms"`
		Text    string   `json:"text"`
		Cell    string   `json:"cell"`
		Scripts []string `json:"scripts"`
		Status  string   `json:"status"`
		Font    string   `json:"fontSize"`
	}
	value, err := json.Marshal(res["result"].(map[string]any)["value"])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(value, &got), "%s", value)
	require.True(t, got.Found, "the pushed grade was not in the page within a second: %s", value)
	assert.Equal(t, name, got.Text, "the name is shown as text")
	assert.Equal(t, "3/7R4 · 0 min", got.Cell, "minutes stuck")
	assert.Equal(t, []string{b.url + "/board.js"}, got.Scripts, "one script, the board's own")
	assert.True(t, strings.HasPrefix(got.Status, "live"), got.Status)
	assert.Equal(t, "24px", got.Font, "the inline style is allowed (by its hash) and in force: large type")

	for _, u := range cdp.requested() {
		if !strings.HasPrefix(u, "data:") {
			assert.True(t, strings.HasPrefix(u, b.url+"/"), "the page fetched %s, not from the board", u)
		}
	}
	assert.Contains(t, cdp.requested(), b.url+"/board.js")
}

// waitForRow resolves once the row of the participant named %s is in the
// DOM, or after a second without it.
const waitForRow = `new Promise((resolve) => {
  const name = %s;
  const t0 = performance.now();
  const row = () => [...document.querySelectorAll("tr[data-participant]")].find((r) => r.dataset.participant === name);
  const done = () => {
    const r = row();
    resolve({
      found: !!r, ms: performance.now() - t0,
      text: r ? r.querySelector("td.participant").textContent : "",
      cell: r ? r.querySelector('td[data-kata="06-retry"]').textContent : "",
      scripts: [...document.scripts].map((s) => s.src || "inline"),
      status: document.getElementById("status").textContent,
      fontSize: getComputedStyle(document.body).fontSize,
    });
  };
  if (row()) return done();
  const seen = new MutationObserver(() => { if (row()) { seen.disconnect(); done(); } });
  seen.observe(document.body, {childList: true, subtree: true});
  setTimeout(() => { seen.disconnect(); done(); }, 1000);
})`

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// devtools speaks the DevTools protocol with a browser over its pipe:
// JSON messages ended by a NUL byte.
type devtools struct {
	w *os.File

	mu       sync.Mutex
	nextID   int
	replies  map[int]chan map[string]any
	requests []string // every URL the page asked for
}

// launch starts headless Chromium with the protocol on fds 3 and 4.
func launch(t *testing.T, browser string) *devtools {
	ctx, cancel := context.WithCancel(context.Background())
	toBrowser, ourEnd, err := os.Pipe()
	require.NoError(t, err)
	fromBrowser, theirEnd, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, theirEnd} // fd 3: what it reads; fd 4: what it writes
	require.NoError(t, cmd.Start())
	toBrowser.Close()
	theirEnd.Close()
	d := &devtools{w: ourEnd, replies: map[int]chan map[string]any{}}
	done := make(chan struct{})
	go d.read(fromBrowser, done)
	t.Cleanup(func() {
		defer cancel()
		// Closing its end of the pipe shuts Chromium down as a whole: killed
		// instead, its helper processes could still be writing into the
		// profile directory while the test removes it.
		ourEnd.Close()
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(time.Minute): // a browser that does not quit is killed
			cancel()
			<-exited
		}
		<-done
		fromBrowser.Close()
	})
	return d
}

func (d *devtools) read(r *os.File, done chan<- struct{}) {
	defer close(done)
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID     int            `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		d.mu.Lock()
		if m.Method == "Network.requestWillBeSent" {
			if req, ok := m.Params["request"].(map[string]any); ok {
				d.requests = append(d.requests, fmt.Sprint(req["url"]))
			}
		}
		if ch, ok := d.replies[m.ID]; ok && m.Method == "" {
			delete(d.replies, m.ID)
			if m.Error != nil {
				m.Result = map[string]any{"error": m.Error}
			}
			ch <- m.Result
		}
		d.mu.Unlock()
	}
}

// send sends a command and returns where its reply will come.
func (d *devtools) send(session, method string, params any) chan map[string]any {
	d.mu.Lock()
	d.nextID++
	id := d.nextID
	ch := make(chan map[string]any, 1)
	d.replies[id] = ch
	d.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	d.w.Write(append(b, 0))
	return ch
}

func (d *devtools) wait(t *testing.T, ch chan map[string]any) map[string]any {
	t.Helper()
	select {
	case r := <-ch:
		require.NotContains(t, r, "error", "devtools: %v", r)
		return r
	case <-time.After(time.Minute):
		t.Fatal("the browser did not answer")
		return nil
	}
}

func (d *devtools) call(t *testing.T, session, method string, params any) map[string]any {
	t.Helper()
	return d.wait(t, d.send(session, method, params))
}

func (d *devtools) requested() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.requests...)
}

// Thirty participants fit one 1920×1080 screen: the glance, every row and
// the totals, with the longest name allowed, in a real browser at that
// size. The screenshot is written to $BOARD_SCREENSHOT when it is set.
func TestThirtyFitOneScreen(t *testing.T) {
	browser := chromium.Path(t)
	b, connected := start(t, t.TempDir())
	for p := range 30 {
		name := participantName(p)
		if p == 7 {
			name = strings.Repeat("W", 40)
		}
		for _, g := range [][]byte{gradeJSON(name, "01-fanout", min(6, p%8), 6), gradeJSON(name, "06-retry", p%8, 7)} {
			code, body := post(t, b.url, token, g)
			require.Equal(t, 200, code, body)
		}
	}
	cdp := launch(t, browser)
	target := cdp.call(t, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	attached := cdp.call(t, "", "Target.attachToTarget", map[string]any{"targetId": target["targetId"], "flatten": true})
	session := attached["sessionId"].(string)
	cdp.call(t, session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1920, "height": 1080, "deviceScaleFactor": 1, "mobile": false})
	cdp.call(t, session, "Page.navigate", map[string]any{"url": b.url + "/"})
	select {
	case <-connected:
	case <-time.After(time.Minute):
		t.Fatal("the page never followed /events")
	}
	res := cdp.call(t, session, "Runtime.evaluate", map[string]any{"awaitPromise": true, "returnByValue": true, "expression": measure})
	var got struct {
		Rows, Height, Width, LastRow, Foot, Right, Glance float64
	}
	value, err := json.Marshal(res["result"].(map[string]any)["value"])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(value, &got), "%s", value)
	assert.Equal(t, 30.0, got.Rows)
	assert.Equal(t, 1080.0, got.Height)
	assert.Greater(t, got.Glance, 0.0, "the glance is shown")
	assert.LessOrEqual(t, got.Foot, got.Height, "every row and the totals within 1080 px: %s", value)
	assert.LessOrEqual(t, got.Right, got.Width, "nothing wider than the screen: %s", value)
	if dir := os.Getenv("BOARD_SCREENSHOT"); dir != "" {
		shot := cdp.call(t, session, "Page.captureScreenshot", map[string]any{"format": "png"})
		png, err := base64.StdEncoding.DecodeString(shot["data"].(string))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "board-1920x1080.png"), png, 0o644))
	}
}

// measure waits for the live table (the events' first), then measures
// the page.
const measure = `new Promise((resolve) => {
  const done = () => {
    const rows = document.querySelectorAll("#room tbody tr");
    const rect = (el) => el ? el.getBoundingClientRect() : {bottom: 0, right: 0, height: 0};
    resolve({
      rows: rows.length, height: innerHeight, width: innerWidth,
      lastRow: rect(rows[rows.length - 1]).bottom, foot: rect(document.querySelector("#room tfoot")).bottom,
      right: Math.max(document.documentElement.scrollWidth, rect(document.getElementById("room")).right),
      glance: rect(document.getElementById("glance")).height,
    });
  };
  const ready = () => document.getElementById("status").textContent.startsWith("live");
  if (ready()) return done();
  const seen = new MutationObserver(() => { if (ready()) { seen.disconnect(); done(); } });
  seen.observe(document.body, {childList: true, subtree: true, characterData: true});
})`
