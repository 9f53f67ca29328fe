package board

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

// edit is gradeJSON(who, "06-retry", 3, 7) changed by f.
func edit(t *testing.T, who string, f func(g map[string]any)) []byte {
	t.Helper()
	var g map[string]any
	require.NoError(t, json.Unmarshal(gradeJSON(who, "06-retry", 3, 7), &g))
	f(g)
	out, err := json.Marshal(g)
	require.NoError(t, err)
	return out
}

func item(g map[string]any, i int) map[string]any { return g["items"].([]any)[i].(map[string]any) }

// Only what the catalog knows is kept: a grade the checker could not have
// printed is refused with the reason, whoever's row it names.
func TestOnlyTheCatalogsGrades(t *testing.T) {
	b, _ := start(t, t.TempDir())
	for _, tc := range []struct {
		name   string
		body   []byte
		reason string
	}{
		{"a hand-written pass", []byte(`{"schema": 1, "participant": "Ada", "kata": "06-retry", "passed": true,
			"score": {"required": 7, "requiredTotal": 7}}`), "it lists 0 of the 9 requirements and bonus follow-ups of 06-retry"},
		{"a score its items do not say", edit(t, "Eve", func(g map[string]any) { g["score"].(map[string]any)["required"] = 7 }),
			"its score 7/7 (bonus 0/2) is not what its items say, 3/7 (bonus 0/2)"},
		{"passed, with a failing requirement", edit(t, "Eve", func(g map[string]any) {
			g["passed"] = true
		}), "it says passed, but not every requirement passed"},
		{"an unknown requirement", edit(t, "Eve", func(g map[string]any) { item(g, 0)["id"] = strings.Repeat("R", 3000) }),
			`06-retry has no requirement "RRRRRRRRRRRRRRRRRRRR"`},
		{"a requirement twice", edit(t, "Eve", func(g map[string]any) { item(g, 1)["id"] = "R1" }), "it lists R1 twice"},
		{"a requirement as bonus", edit(t, "Eve", func(g map[string]any) { item(g, 0)["bonus"] = true }), "R1 is not a bonus follow-up"},
		{"a made-up verdict", edit(t, "Eve", func(g map[string]any) { item(g, 4)["kind"] = "<b>x</b>" }), `R5's verdict "<b>x</b>" is not one`},
		{"a made-up build", edit(t, "Eve", func(g map[string]any) { g["build"] = map[string]any{"kind": "nope"} }), "neither compile nor api"},
		{"a fingerprint not hex", edit(t, "Eve", func(g map[string]any) {
			g["fingerprint"] = map[string]any{"code": "x", "tests": ""}
		}), "not SHA-256 hex"},
		{"a time not RFC 3339", edit(t, "Eve", func(g map[string]any) { g["time"] = "yesterday" }), "not RFC 3339"},
		{"a name of nothing visible", gradeJSON("\u200b\u200b\u202e", "06-retry", 3, 7), "names no participant"},
		{"a name in two scripts", gradeJSON("\u0410da Lovelace", "06-retry", 3, 7), "mixes Latin and Cyrillic letters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, b.url, token, tc.body)
			assert.Equal(t, http.StatusBadRequest, code, body)
			assert.Contains(t, body, tc.reason)
		})
	}
	assert.Equal(t, 0, b.Participants())
	data, err := os.ReadFile(b.Path())
	require.NoError(t, err)
	assert.Empty(t, data, "nothing refused is kept")
}

// What is kept is what the board reads: unknown fields and the output of
// the tests are dropped, texts are the catalog's, free texts are cut,
// and the name is the one shown.
func TestKeepsOnlyWhatItReads(t *testing.T) {
	b, _ := start(t, t.TempDir())
	body := edit(t, "Ada\u200b  Lovelace", func(g map[string]any) {
		g["evil"] = strings.Repeat("e", 1000)
		g["title"] = strings.Repeat("t", 3000)
		g["noRace"] = strings.Repeat("n", 3000)
		item(g, 3)["text"] = strings.Repeat("x", 100_000)
		item(g, 3)["tests"] = []any{map[string]any{"name": "TestR4", "output": map[string]any{"head": []string{strings.Repeat("o", 300)}}}}
	})
	code, answer := post(t, b.url, token, body)
	require.Equal(t, http.StatusOK, code, answer)
	stored := lines(t, b.Path())
	require.Len(t, stored, 1)
	assert.Less(t, len(stored[0]), 2000, "a line of what the board reads, not of what was sent (%d bytes)", len(body))
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(stored[0]), &line))
	assert.NotContains(t, line, "evil")
	assert.Equal(t, "Retry", line["title"], "the catalog's title")
	assert.Equal(t, "Ada Lovelace", line["participant"])
	assert.Equal(t, "requirement 4", item(line, 3)["text"], "the catalog's text")
	assert.NotContains(t, item(line, 3), "tests")
	assert.LessOrEqual(t, len(line["noRace"].(string)), maxText+len("…"))
}

// A name that reads like one on the board, in other letters, is refused;
// the same name with invisible characters is the same row.
func TestLookAlikeNames(t *testing.T) {
	b, _ := start(t, t.TempDir())
	for _, name := range []string{"Ada Lovelace", "Ada\u200b Lovelace", "\u202eAda Lovelace", "ada lovelace"} {
		code, body := post(t, b.url, token, gradeJSON(name, "06-retry", 3, 7))
		require.Equal(t, http.StatusOK, code, body)
	}
	assert.Equal(t, 1, b.Participants(), "one row")
	code, body := post(t, b.url, token, gradeJSON("\u0415\u0441\u043e \u041c\u0430\u0441\u0435", "06-retry", 3, 7)) // Cyrillic, reads "Eco Mace"
	require.Equal(t, http.StatusOK, code, body, "a name in one script that looks like no one's")
	code, body = post(t, b.url, token, gradeJSON("\u0415\u0441\u043e \u041c\u0430\u0441\u0435", "06-retry", 4, 7))
	require.Equal(t, http.StatusOK, code, body, "the same name again")
	code, body = post(t, b.url, token, gradeJSON("Eco Mace", "06-retry", 3, 7))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `looks like "Есо Масе", already on the board`)
	assert.Equal(t, 2, b.Participants())
}

// A grade made by other hidden tests than the board's is marked, or
// refused when the board is told to.
func TestFingerprintChecked(t *testing.T) {
	theirs := strings.Repeat("ab", 32)
	ours := strings.Repeat("cd", 32)
	withTests := func(fp string) func(g map[string]any) {
		return func(g map[string]any) { g["fingerprint"] = map[string]any{"code": "", "tests": fp} }
	}
	cat := []room.Kata{testKata("06-retry", "Retry", 7)}
	cat[0].Tests = ours

	dir := t.TempDir()
	s, err := Open(Config{Katas: cat, Dir: dir, Token: token})
	require.NoError(t, err)
	_, _, err = s.accept(edit(t, "Ada", withTests(theirs)))
	require.NoError(t, err, "kept")
	gr, _, err := s.accept(edit(t, "Ada", withTests(theirs)))
	require.NoError(t, err)
	require.NoError(t, s.store(gr, []byte("{}\n")))
	gr, _, err = s.accept(edit(t, "Bob", withTests(ours)))
	require.NoError(t, err)
	require.NoError(t, s.store(gr, []byte("{}\n")))
	s.Grid(func(g *room.Grid) {
		require.Len(t, g.Rows, 2)
		assert.True(t, g.Rows[0].Cells["06-retry"].Unverified, "Ada's is marked")
		assert.False(t, g.Rows[1].Cells["06-retry"].Unverified, "Bob's is not")
	})
	require.NoError(t, s.Close())

	strict, err := Open(Config{Katas: cat, Dir: t.TempDir(), Token: token, VerifiedOnly: true})
	require.NoError(t, err)
	defer strict.Close()
	_, _, err = strict.accept(edit(t, "Ada", withTests(theirs)))
	assert.ErrorContains(t, err, "graded by other hidden tests than the board's 06-retry: update the checkout")
	_, _, err = strict.accept(edit(t, "Ada", withTests(ours)))
	assert.NoError(t, err)
}

// The board shows the agenda's katas only; a grade for another kata of the
// catalog is kept, and shows once that kata is on the agenda.
func TestAgenda(t *testing.T) {
	dir := t.TempDir()
	cat := append([]room.Kata{testKata("03-bounded", "Bounded", 6)}, katas...)
	s, err := Open(Config{Catalog: cat, Katas: cat[:1], Dir: dir, Token: token})
	require.NoError(t, err)
	for _, g := range [][]byte{gradeJSON("Ada", "06-retry", 3, 7), gradeJSON("Bob", "03-bounded", 3, 6)} {
		gr, line, err := s.accept(g)
		require.NoError(t, err)
		require.NoError(t, s.store(gr, line))
	}
	_, _, err = s.accept(gradeJSON("Bob", "99-nope", 3, 6))
	assert.ErrorContains(t, err, `this room has no kata "99-nope"`)
	s.Grid(func(g *room.Grid) {
		assert.Len(t, g.Katas, 1, "one column: 03")
		require.Len(t, g.Rows, 1)
		assert.Equal(t, "Bob", g.Rows[0].Participant)
	})
	require.NoError(t, s.Close())
	all, err := Open(Config{Catalog: cat, Katas: cat, Dir: dir, Token: token})
	require.NoError(t, err)
	defer all.Close()
	assert.Equal(t, 2, all.Participants(), "Ada's grade of 06 was kept")
}

// One server per room: a second one on the same directory is refused,
// naming the first's process; once the first closes, the room is free.
func TestOneServerPerRoom(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(Config{Katas: katas, Dir: dir, Token: token})
	require.NoError(t, err)
	_, err = Open(Config{Katas: katas, Dir: dir, Token: token})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another board (process "+itoa(os.Getpid())+") is serving the room in "+dir)
	require.NoError(t, first.Close())
	again, err := Open(Config{Katas: katas, Dir: dir, Token: token})
	require.NoError(t, err, "free after Close")
	require.NoError(t, again.Close())
	_, err = os.Stat(filepath.Join(dir, LockName))
	assert.NoError(t, err)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
