package board

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pushCode pushes body with the room's token and code and returns the
// status and the answer's body.
func pushCode(t testing.TB, url, code string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/push", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if code != "" {
		req.Header.Set(CodeHeader, code)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestJoinCodes(t *testing.T) {
	codes, err := ReadCodes(strings.NewReader("# the room\nAda Lovelace  ada-7f3k\n\nGrace\tgr-22qz\n"))
	require.NoError(t, err)
	b, _ := start(t, t.TempDir(), func(cfg *Config) { cfg.Codes = codes })

	code, body := pushCode(t, b.url, "ada-7f3k", gradeJSON("ada lovelace", "06-retry", 3, 7))
	assert.Equal(t, http.StatusOK, code, body)
	require.NoError(t, Push(context.Background(), b.url, token, "gr-22qz", gradeJSON("Grace", "06-retry", 1, 7)))
	for _, c := range []struct{ who, code string }{
		{"Ada Lovelace", "gr-22qz"}, // Grace's code cannot write Ada's row
		{"Ada Lovelace", ""},
		{"Ada Lovelace", "ada-7f3"},
		{"Mallory", "ada-7f3k"}, // not on the list
	} {
		code, body := pushCode(t, b.url, c.code, gradeJSON(c.who, "06-retry", 7, 7))
		assert.Equal(t, http.StatusForbidden, code, "%+v", c)
		assert.Equal(t, "wrong or missing join code for this name: push with the code the facilitator gave you (KATA_CODE, --code)\n", body)
		if c.code != "" {
			assert.NotContains(t, b.log.String(), c.code)
		}
	}
	assert.Len(t, lines(t, b.Path()), 2, "refused pushes are not kept")
	assert.NotContains(t, b.log.String(), "ada-7f3k", "codes are never logged")
	assert.Contains(t, b.log.String(), "refused a push from 127.0.0.1 as Mallory: wrong or missing join code")
	err = Push(context.Background(), b.url, token, "wrong-code", gradeJSON("Grace", "06-retry", 2, 7))
	assert.EqualError(t, err, "the board answered 403: wrong or missing join code for this name: push with the code the facilitator gave you (KATA_CODE, --code)")
}

func TestReadCodes(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "no codes in it",
		"Ada\n":                "line 1: give a name, then the participant's code",
		"Ada abc\n":            "line 1: a code is 4 to 100 characters",
		"Ada abcd\nada efgh\n": "line 2: ada has a code already",
		"Аda abcd\n":           "line 1: the participant's name mixes",
	} {
		_, err := ReadCodes(strings.NewReader(in))
		assert.ErrorContains(t, err, want, "%q", in)
	}
}
