package board

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a time a test moves forward.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// postFull pushes body and returns the answer's status, body and
// Retry-After header.
func postFull(t testing.TB, url string, body []byte) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/push", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(got), resp.Header.Get("Retry-After")
}

func TestPushRateLimit(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
	b, _ := start(t, t.TempDir(), func(cfg *Config) { cfg.MaxPushes, cfg.Now = 3, c.now })
	for range 3 {
		code, body, _ := postFull(t, b.url, gradeJSON("Ada", "06-retry", 1, 7))
		require.Equal(t, http.StatusOK, code, body)
		c.add(10 * time.Second)
	}
	code, body, retry := postFull(t, b.url, gradeJSON("ada", "06-retry", 2, 7))
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.Equal(t, "too many pushes: at most 3 a minute per participant; try again in 30 s\n", body)
	assert.Equal(t, "30", retry)
	assert.Contains(t, b.log.String(), "refused a push from 127.0.0.1: too many pushes")
	code, _, _ = postFull(t, b.url, gradeJSON("Grace", "06-retry", 2, 7))
	assert.Equal(t, http.StatusOK, code, "another participant is not limited by Ada's pushes")
	c.add(30 * time.Second)
	code, _, _ = postFull(t, b.url, gradeJSON("Ada", "06-retry", 2, 7))
	assert.Equal(t, http.StatusOK, code, "a minute after her first push")
	assert.Len(t, lines(t, b.Path()), 5, "the refused push is not kept")
}

func TestPushStorageLimits(t *testing.T) {
	dir := t.TempDir()
	grade := gradeJSON("Ada", "06-retry", 1, 7)
	b, _ := start(t, dir)
	code, body := post(t, b.url, token, grade)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, b.stop())
	info, err := os.Stat(b.Path())
	require.NoError(t, err)
	line := info.Size()

	// Ada's share holds two lines; the file, after a restart, four.
	b, _ = start(t, dir, func(cfg *Config) { cfg.MaxStored, cfg.MaxData = 2*line+line/2, 4*line+line/2 })
	code, body = post(t, b.url, token, grade)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post(t, b.url, token, grade)
	assert.Equal(t, http.StatusInsufficientStorage, code)
	assert.Contains(t, body, "your grades fill your share of the room's data file")
	for _, who := range []string{"Grace", "Barbara"} {
		code, body = post(t, b.url, token, gradeJSON(who, "06-retry", 1, 7))
		require.Equal(t, http.StatusOK, code, body)
	}
	code, body = post(t, b.url, token, gradeJSON("Edsger", "06-retry", 1, 7))
	assert.Equal(t, http.StatusInsufficientStorage, code)
	assert.Regexp(t, `^the room's data file is full \(\d+ bytes\): the facilitator can raise it \(serve --max-data\)`, body)
	assert.Len(t, lines(t, b.Path()), 4)
}

func TestSizeText(t *testing.T) {
	assert.Equal(t, "64 MiB", sizeText(64<<20))
	assert.Equal(t, "1536 KiB", sizeText(1536<<10))
	assert.Equal(t, "1000 bytes", sizeText(1000))
}
