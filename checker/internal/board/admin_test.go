package board

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

const adminToken = "facilitator-only-7"

// admin posts body to /admin/PATH with tok and returns the status and
// the answer's body.
func admin(t testing.TB, url, path, tok, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/admin/"+path, strings.NewReader(body))
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

func rowsOf(s *Server) map[string][]string {
	rows := map[string][]string{}
	s.Grid(func(g *room.Grid) {
		for _, r := range g.Rows {
			for k := range r.Cells {
				rows[r.Participant] = append(rows[r.Participant], k)
			}
		}
	})
	return rows
}

func TestAdminControls(t *testing.T) {
	dir := t.TempDir()
	withAdmin := func(cfg *Config) { cfg.AdminToken = adminToken }
	b, _ := start(t, dir, withAdmin)
	for _, g := range [][]byte{gradeJSON("Ada", "06-retry", 3, 7), gradeJSON("Ada", "01-fanout", 1, 6), gradeJSON("Troll", "06-retry", 7, 7)} {
		code, body := post(t, b.url, token, g)
		require.Equal(t, http.StatusOK, code, body)
	}

	for _, tok := range []string{"", token, adminToken + "x"} {
		code, body := admin(t, b.url, "hide", tok, `{"participant":"Troll"}`)
		assert.Equal(t, http.StatusUnauthorized, code, "token %q", tok)
		assert.NotContains(t, body, adminToken)
	}
	code, body := admin(t, b.url, "hide", adminToken, `{"participant":"Nobody"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `no participant "Nobody"`)
	code, body = admin(t, b.url, "hide", adminToken, ``)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "the body is not JSON such as {\"participant\": \"Their Name\"}\n", body)
	code, body = admin(t, b.url, "drop", adminToken, `{"participant":"Ada","kata":"99-none"}`)
	assert.Equal(t, http.StatusBadRequest, code, body)

	code, body = admin(t, b.url, "hide", adminToken, `{"participant":"troll"}`)
	require.Equal(t, http.StatusOK, code, body)
	code, body = admin(t, b.url, "drop", adminToken, `{"participant":"Ada","kata":"06-retry"}`)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post(t, b.url, token, gradeJSON("Troll", "01-fanout", 6, 6))
	require.Equal(t, http.StatusOK, code, body)
	want := map[string][]string{"Ada": {"01-fanout"}}
	assert.Equal(t, want, rowsOf(b.Server))
	page := tableOf(t, b.Server)
	assert.NotContains(t, page, "Troll")

	require.NoError(t, b.stop())
	assert.NotContains(t, b.log.String(), adminToken, "the admin token is never logged")
	assert.Contains(t, b.log.String(), "admin from 127.0.0.1: hide troll")
	b2, _ := start(t, dir, withAdmin)
	assert.Equal(t, want, rowsOf(b2.Server), "controls are kept in the room's file")
	assert.Equal(t, page, tableOf(t, b2.Server))
	assert.Contains(t, strings.Join(lines(t, b2.Path()), "\n"), `{"control":"hide","participant":"troll"`)
}

func TestAdminTokenOffAndDistinct(t *testing.T) {
	b, _ := start(t, t.TempDir())
	code, _ := admin(t, b.url, "hide", adminToken, `{"participant":"Ada"}`)
	assert.Equal(t, http.StatusUnauthorized, code, "no admin token: no admin requests")
	code, _ = admin(t, b.url, "hide", "", `{"participant":"Ada"}`)
	assert.Equal(t, http.StatusUnauthorized, code)
	_, err := Open(Config{Katas: katas, Dir: t.TempDir(), Token: token, AdminToken: token})
	assert.ErrorContains(t, err, "the admin token must differ")
}
