package room_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/chromium"
	"gokata/checker/internal/golden"
	"gokata/checker/internal/room"
)

// grade is a --json grade as the checker prints it, cut to what matters
// here: the first req of total requirements pass, the others fail.
func grade(who, kata string, passed bool, req, total, bonus, btotal int) string {
	return timedGrade(who, kata, "", passed, req, total, bonus, btotal)
}

// timedGrade is a grade as the board stores it, with the time it was
// received ("" for none).
func timedGrade(who, kata, received string, passed bool, req, total, bonus, btotal int) string {
	var items []string
	for i := 1; i <= total; i++ {
		kind := "pass"
		if i > req {
			kind = "assertion"
		}
		items = append(items, `{"id": "R`+itoa(i)+`", "text": "requirement `+itoa(i)+`", "bonus": false, "kind": "`+kind+`"}`)
	}
	at := ""
	if received != "" {
		at = `, "received": "` + received + `"`
	}
	return `{"schema": 1, "participant": "` + who + `", "kata": "` + kata + `", "title": "Title of ` + kata + `",
  "passed": ` + map[bool]string{true: "true", false: "false"}[passed] + `,
  "score": {"required": ` + itoa(req) + `, "requiredTotal": ` + itoa(total) + `, "bonus": ` + itoa(bonus) + `, "bonusTotal": ` + itoa(btotal) + `},
  "race": true, "items": [` + strings.Join(items, ", ") + `]` + at + `}
`
}

func itoa(n int) string { return strconv.Itoa(n) }

// roomDir is a workshop's results directory: three participants, one of
// whom graded twice, and one whose grades name nobody.
func roomDir(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"ada.json": grade("Ada <b>Lovelace</b>", "01-fanout", true, 6, 6, 1, 2) +
			grade("Ada <b>Lovelace</b>", "06-retry", false, 3, 7, 0, 2),
		"ada-later.json": grade("Ada <b>Lovelace</b>", "06-retry", false, 5, 7, 0, 2) +
			grade("Ada <b>Lovelace</b>", "01-fanout", false, 2, 6, 0, 2), // a worse grade does not count
		"grace.json":  grade("Grace Hopper", "06-retry", true, 7, 7, 0, 2),
		"linus.json":  grade("", "02-first-wins", false, 0, 5, 0, 1),
		"broken.json": "{not json",
		"notes.txt":   "not a grade",
	}
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

func readRoom(t *testing.T) *room.Grid {
	g := room.New([]room.Kata{{Slug: "01-fanout", Title: "Fan-out"}, {Slug: "04-partial", Title: "Partial success"}})
	problems, err := g.ReadDir(roomDir(t))
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0], "broken.json: grade 1:")
	return g
}

func TestGrid(t *testing.T) {
	g := readRoom(t)
	var names []string
	for _, r := range g.Rows {
		names = append(names, r.Participant)
	}
	assert.Equal(t, []string{"Ada <b>Lovelace</b>", "Grace Hopper", "linus"}, names, "sorted; a grade naming nobody takes its file's name")
	var slugs []string
	for _, k := range g.Katas {
		slugs = append(slugs, k.Slug)
	}
	assert.Equal(t, []string{"01-fanout", "02-first-wins", "04-partial", "06-retry"}, slugs, "the checkout's katas and the graded ones")
	ada := g.Rows[0]
	assert.Equal(t, "✔ +1", ada.Cells["01-fanout"].Text(), "the best grade counts")
	assert.Equal(t, "5/7", ada.Cells["06-retry"].Text())
	assert.Equal(t, "–", ada.Cells["04-partial"].Text())
	assert.Equal(t, 1, g.PassedBy("06-retry"))
}

// Where a participant is stuck: the first failing requirement of the
// latest grade, since the earliest grade that failed there first, whatever
// the order the grades are read in. A better earlier grade is the mark.
func TestStuckSince(t *testing.T) {
	grades := []string{
		timedGrade("Ada", "06-retry", "2026-05-04T10:00:00+02:00", false, 2, 7, 0, 2), // stuck on R3
		timedGrade("Ada", "06-retry", "2026-05-04T10:05:00+02:00", false, 2, 7, 0, 2),
		timedGrade("Ada", "06-retry", "2026-05-04T10:10:00+02:00", false, 4, 7, 0, 2), // now on R5
		timedGrade("Ada", "06-retry", "2026-05-04T10:20:00+02:00", false, 4, 7, 0, 2),
		timedGrade("Ada", "06-retry", "2026-05-04T10:25:00+02:00", false, 4, 7, 0, 2),
		timedGrade("Ada", "06-retry", "2026-05-04T10:26:00+02:00", false, 1, 7, 0, 2), // worse, and the latest: shown, the best a mark
		timedGrade("ada", "01-fanout", "2026-05-04T10:30:00+02:00", true, 6, 6, 0, 2),
		grade("Ada", "04-partial", false, 0, 5, 0, 1), // no time
		`{"schema": 1, "participant": "Ada", "kata": "02-first-wins", "passed": false, "build": {"kind": "compile", "lines": []},
		  "score": {"required": 0, "requiredTotal": 5}, "items": [{"id": "R1", "kind": "compile"}]}`,
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1, 0}, {0, 1, 2, 3, 5, 6, 7, 8, 4}} {
		g := room.New(nil)
		for _, i := range order {
			require.NoError(t, g.Add(strings.NewReader(grades[i]), ""))
		}
		require.Len(t, g.Rows, 1)
		retry := g.Rows[0].Cells["06-retry"]
		assert.Equal(t, "1/7", retry.Text(), "order %v: the latest grade", order)
		assert.Equal(t, "best 4/7", retry.Mark(), "order %v", order)
		assert.Equal(t, "fail", retry.State())
		assert.Equal(t, "R2", retry.Stuck)
		assert.Equal(t, "requirement 2", retry.StuckText)
		assert.Equal(t, "R2 since 10:26", retry.Where(), "in the grade's own zone")
		g.Put(mustGrade(t, timedGrade("Ada", "06-retry", "2026-05-04T10:40:00+02:00", false, 4, 7, 0, 2)), "")
		retry = g.Rows[0].Cells["06-retry"]
		assert.Equal(t, "R5 since 10:10", retry.Where(), "since the first grade stuck there")
		assert.Equal(t, "", retry.Mark(), "the best is the one shown")
		assert.Equal(t, "", g.Rows[0].Cells["01-fanout"].Where(), "a pass is stuck nowhere")
		assert.Equal(t, "R1", g.Rows[0].Cells["04-partial"].Where(), "no time, no since")
		assert.Equal(t, "build", g.Rows[0].Cells["02-first-wins"].Where())
		assert.Equal(t, "it does not compile", g.Rows[0].Cells["02-first-wins"].StuckText)
	}
}

func mustGrade(t *testing.T, s string) room.Grade {
	t.Helper()
	gr, err := room.ParseGrade([]byte(s))
	require.NoError(t, err)
	return gr
}

func TestParseGrade(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{`{"schema": 1, "kata": "06-retry"}`, ""},
		{`{"schema": 2, "kata": "06-retry"}`, "schema 2"},
		{`{"schema": 1}`, "names no kata"},
		{`{"schema": 1, "kata": "06-retry"`, "unexpected end"},
		{`{"schema": 1, "kata": "06-retry"} {}`, "invalid character"},
	} {
		_, err := room.ParseGrade([]byte(tc.in))
		if tc.err == "" {
			assert.NoError(t, err, tc.in)
		} else {
			assert.ErrorContains(t, err, tc.err, tc.in)
		}
	}
}

func TestReadDirEmpty(t *testing.T) {
	_, err := room.New(nil).ReadDir(t.TempDir())
	assert.ErrorContains(t, err, "as NAME.json")
}

func TestMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, readRoom(t).Markdown(&b))
	golden.Check(t, filepath.Join("testdata", "room.md"), b.Bytes())
}

func TestHTMLGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, readRoom(t).HTML(&b))
	golden.Check(t, filepath.Join("testdata", "room.html"), b.Bytes())
	assert.NotContains(t, b.String(), "<b>", "names are escaped")
	assert.NotRegexp(t, `(src|href)=`, b.String(), "self-contained: nothing to fetch")
}

// The page in a real browser: headless Chromium loads it and dumps the
// DOM it built; every participant has a row with a cell for every kata.
// CI installs Chromium (.ci/run); elsewhere the test is skipped without it.
func TestHTMLInChromium(t *testing.T) {
	browser := chromium.Path(t)
	g := readRoom(t)
	page := filepath.Join(t.TempDir(), "room.html")
	var b bytes.Buffer
	require.NoError(t, g.HTML(&b))
	require.NoError(t, os.WriteFile(page, b.Bytes(), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())

	rows := regexp.MustCompile(`(?s)<tr data-participant="([^"]*)">(.*?)</tr>`).FindAllStringSubmatch(string(dom), -1)
	require.Len(t, rows, len(g.Rows), "a row per participant in the DOM:\n%s", dom)
	cellRE := regexp.MustCompile(`<td class="(\w+)" data-kata="([^"]+)"(?: title="[^"]*")?>([^<]*)(?:<small>([^<]*)</small>)?</td>`)
	for i, r := range g.Rows {
		assert.Contains(t, rows[i][2], ">"+strings.ReplaceAll(strings.ReplaceAll(r.Participant, "<", "&lt;"), ">", "&gt;")+"</td>")
		cells := cellRE.FindAllStringSubmatch(rows[i][2], -1)
		require.Len(t, cells, len(g.Katas), "a cell per kata in %s's row", r.Participant)
		for j, k := range g.Katas {
			assert.Equal(t, k.Slug, cells[j][2])
			assert.Equal(t, r.Cells[k.Slug].Text(), cells[j][3], "%s, %s", r.Participant, k.Slug)
			assert.Equal(t, r.Cells[k.Slug].Where(), cells[j][4], "%s, %s: where stuck", r.Participant, k.Slug)
			assert.Equal(t, r.Cells[k.Slug].State(), cells[j][1])
		}
	}
	for _, k := range g.Katas {
		assert.Contains(t, string(dom), `<th data-kata="`+k.Slug+`"`, "a column per kata")
	}
}
