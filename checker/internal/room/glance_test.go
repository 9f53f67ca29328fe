package room_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

// lookGrade is a timed grade of 06-retry whose items fail with kind from
// requirement req+1 on; build, when set, is the build failure's kind.
func lookGrade(who, at string, req int, kind, build string, bonus int) string {
	items := []string{}
	for i := 1; i <= 3; i++ {
		k := "pass"
		if i > req {
			k = kind
		}
		items = append(items, `{"id": "R`+itoa(i)+`", "text": "pushed text", "kind": "`+k+`"}`)
	}
	b := "null"
	if build != "" {
		b = `{"kind": "` + build + `"}`
	}
	return `{"schema": 1, "participant": "` + who + `", "kata": "06-retry", "passed": ` + map[bool]string{true: "true", false: "false"}[req == 3 && build == ""] +
		`, "score": {"required": ` + itoa(req) + `, "requiredTotal": 3, "bonus": ` + itoa(bonus) + `, "bonusTotal": 2}, "build": ` + b +
		`, "items": [` + strings.Join(items, ", ") + `], "received": "` + at + `"}`
}

var retry = room.Kata{Slug: "06-retry", Title: "Retry",
	Requirements: []room.Item{{"R1", "retries"}, {"R2", "backs off"}, {"R3", "cancels at once"}}, Bonus: []room.Item{{"B1", "b1"}, {"B2", "b2"}}}

func timedRoom(t *testing.T, grades ...string) *room.Grid {
	g := room.New([]room.Kata{retry})
	for _, gr := range grades {
		require.NoError(t, g.Add(strings.NewReader(gr), ""))
	}
	return g
}

// Each stage of a kata has its look: not started (the stub's TODOs), does
// not compile, fails at Rn, passed, passed with every bonus.
func TestLooks(t *testing.T) {
	g := timedRoom(t,
		lookGrade("stub", "2026-05-04T10:00:00Z", 0, "not-implemented", "", 0),
		lookGrade("broken", "2026-05-04T10:00:00Z", 0, "compile", "compile", 0),
		lookGrade("failing", "2026-05-04T10:00:00Z", 1, "assertion", "", 0),
		lookGrade("passing", "2026-05-04T10:00:00Z", 3, "", "", 1),
		lookGrade("bonus", "2026-05-04T10:00:00Z", 3, "", "", 2),
	)
	looks := map[string]string{}
	for _, r := range g.Rows {
		looks[r.Participant] = r.Cells["06-retry"].State()
	}
	assert.Equal(t, map[string]string{"stub": "todo", "broken": "build", "failing": "fail", "passing": "pass", "bonus": "bonus"}, looks)
	assert.Equal(t, "backs off", g.Rows[2].Cells["06-retry"].StuckText, "the catalog's text, not the pushed one")
}

// The room at a glance: counts per kata, and the requirements most people
// are stuck on, with the median time; rows stuck longest come first, and
// rows quiet too long are dimmed.
func TestGlance(t *testing.T) {
	g := timedRoom(t,
		lookGrade("Ada", "2026-05-04T10:00:00Z", 1, "assertion", "", 0),       // R2 since 10:00
		lookGrade("Bob", "2026-05-04T10:10:00Z", 1, "assertion", "", 0),       // R2 since 10:10
		lookGrade("Cy", "2026-05-04T10:25:00Z", 1, "assertion", "", 0),        // R2 since 10:25
		lookGrade("Dee", "2026-05-04T10:05:00Z", 2, "timeout", "", 0),         // R3 since 10:05
		lookGrade("Eve", "2026-05-04T10:20:00Z", 3, "", "", 0),                // passed
		lookGrade("Fay", "2026-05-04T10:20:00Z", 0, "not-implemented", "", 0), // not started
		lookGrade("Ada", "2026-05-04T10:29:00Z", 1, "assertion", "", 0),       // still R2
	)
	g.Now = time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)
	g.QuietAfter = 15 * time.Minute
	gl := g.Glance()
	require.Len(t, gl, 1)
	assert.Equal(t, "1 passed · 1 working · 3 stuck 10+ min · 1 not started", gl[0].Counts())
	var top []string
	for _, on := range gl[0].Top {
		top = append(top, on.String()+" · "+on.Text)
	}
	assert.Equal(t, []string{"R2: 3 people, median 20 min · backs off", "R3: 1 person, median 25 min · cancels at once"}, top)

	var order []string
	for _, r := range g.Sorted() {
		order = append(order, r.Participant)
	}
	assert.Equal(t, []string{"Ada", "Dee", "Bob", "Fay", "Cy", "Eve"}, order, "stuck longest first (Fay on the stub since 10:20)")
	assert.Equal(t, "R2 · 30 min", g.Where(g.Rows[0].Cells["06-retry"]), "minutes stuck, not a clock time")

	var quiet []string
	for _, r := range g.Rows {
		if g.Quiet(r) {
			quiet = append(quiet, r.Participant)
		}
	}
	assert.Equal(t, []string{"Bob", "Dee"}, quiet, "nothing pushed for over 15 minutes")
	var html bytes.Buffer
	require.NoError(t, g.Table(&html))
	assert.Contains(t, html.String(), `<tr data-participant="Bob" class="quiet">`)
	assert.Contains(t, html.String(), `<li><strong>R2: 3 people, median 20 min</strong> · backs off</li>`)
}

// A participant who broke code that passed shows the latest grade, with
// the pass as a mark.
func TestBrokenAfterPass(t *testing.T) {
	g := timedRoom(t,
		lookGrade("Ada", "2026-05-04T10:00:00Z", 3, "", "", 0),
		lookGrade("Ada", "2026-05-04T10:05:00Z", 0, "compile", "compile", 0),
	)
	c := g.Rows[0].Cells["06-retry"]
	assert.Equal(t, "0/3", c.Text())
	assert.Equal(t, "build", c.State())
	assert.Equal(t, "best ✔", c.Mark())
	var md bytes.Buffer
	require.NoError(t, g.Markdown(&md))
	assert.Contains(t, md.String(), "| Ada | 0/3 · build since 10:05 · best ✔ | 0 |")
}

// A grade made by other hidden tests than the catalog's is marked.
func TestUnverified(t *testing.T) {
	k := retry
	k.Tests = strings.Repeat("ab", 32)
	g := room.New([]room.Kata{k})
	require.NoError(t, g.Add(strings.NewReader(lookGrade("Ada", "2026-05-04T10:00:00Z", 3, "", "", 0)), ""))
	c := g.Rows[0].Cells["06-retry"]
	assert.True(t, c.Unverified)
	var html, md bytes.Buffer
	require.NoError(t, g.Table(&html))
	require.NoError(t, g.Markdown(&md))
	assert.Contains(t, html.String(), `<td class="pass unverified" data-kata="06-retry">`)
	assert.Contains(t, md.String(), "| Ada | ✔ · tests differ | 1 |")
}

// room.md shows what a grade says as text: no HTML, link or extra column
// from a requirement id or its text.
func TestMarkdownEscapesStuck(t *testing.T) {
	g := room.New(nil)
	gr := `{"schema": 1, "participant": "Ada", "kata": "06-retry", "passed": false, "score": {"required": 0, "requiredTotal": 1},
	  "items": [{"id": "<img src=x>|[a](http://x)", "text": "<script>x</script> | *bold*", "kind": "assertion"}]}`
	require.NoError(t, g.Add(strings.NewReader(gr), ""))
	var md bytes.Buffer
	require.NoError(t, g.Markdown(&md))
	assert.NotContains(t, md.String(), "<img")
	assert.NotContains(t, md.String(), "<script")
	assert.NotContains(t, md.String(), "[a](http")
	assert.Contains(t, md.String(), `&lt;img src=x&gt;\|\[a\](http://x)`)
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| Ada") {
			assert.Equal(t, 3+1, strings.Count(line, "|")-strings.Count(line, `\|`), "the row keeps its columns: %s", line)
		}
	}
}
