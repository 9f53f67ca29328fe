// Package room builds a workshop's room grid from the participants' grades
// and renders it as a self-contained HTML page and as Markdown: one row per
// participant, one column per kata. The report verb draws it from files
// (Report); the live board (package board) draws it from the same model
// and the same template, and sends the table again after every push.
//
// The input is what `checker check --json` prints (the schema is in
// package report): a stream of grade objects, one per kata, each naming the
// participant. Only the fields the grid needs are read, so grades from a
// newer checker of the same schema still count. The board adds one field,
// "received" (RFC 3339): when it accepted the grade.
//
// A cell shows the participant's latest grade on the kata when the grades
// carry their time (the board's file), else the best (files from several
// machines); a better earlier grade is a mark. A cell not passed also says
// where its participant is stuck: the first requirement its grade fails,
// and since when that requirement has been the first failing one (the
// earliest grade that failed there first, when the grades carry a time).
// Above the grid, the room at a glance (Glance) says per kata how many
// passed, work, are stuck or have not started, and where most are stuck.
package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gokata/checker/internal/escape"
)

// Kata is a column of the grid, and what the catalog says of it.
type Kata struct {
	Slug  string // "06-retry"
	Title string
	// Requirements and Bonus are the kata's items, from the catalog: the
	// grid shows their text, not a grade's. Nil when not known (a report
	// outside a checkout).
	Requirements, Bonus []Item
	// Tests is the fingerprint of the hidden tests (package fingerprint);
	// a grade made by other tests is marked. "" when not known.
	Tests string
}

// Item is a requirement or bonus follow-up of a kata.
type Item struct {
	ID, Text string
}

// text is the catalog's text of item id; "" when not known.
func (k Kata) text(id string) string {
	for _, it := range append(append([]Item(nil), k.Requirements...), k.Bonus...) {
		if it.ID == id {
			return it.Text
		}
	}
	return ""
}

// Score is how far a grade got.
type Score struct {
	Passed          bool
	Required, Bonus int
}

// better reports whether s is a better grade than t.
func (s Score) better(t Score) bool {
	switch {
	case s.Passed != t.Passed:
		return s.Passed
	case s.Required != t.Required:
		return s.Required > t.Required
	}
	return s.Bonus > t.Bonus
}

// Cell is one participant's grade on one kata: the latest, when the
// grades carry their time, else the best.
type Cell struct {
	Graded                  bool
	Passed                  bool
	Required, RequiredTotal int
	Bonus, BonusTotal       int
	// Look is how far the grade got: "todo" (every requirement it fails is
	// still the stub's TODO), "build" (not built, or the gate refused it),
	// "fail" (fails at a requirement), "pass", or "bonus" (passed with
	// every bonus follow-up).
	Look string
	// Stuck is where a grade not passed stops: the first requirement it
	// fails ("R4"), or "build" when the code was not built or run;
	// StuckText says what that is.
	Stuck, StuckText string
	// Since is when Stuck became the first failing requirement: the time
	// of the earliest grade that failed there first. Zero when the grades
	// carry no time.
	Since time.Time
	// At is when the grade was made: when the board received it, else
	// when it was graded. Zero when not known.
	At time.Time
	// Best is the participant's best grade on the kata, this one or an
	// earlier one.
	Best Score
	// Unverified: the grade names hidden tests other than the catalog's
	// (Kata.Tests), or none.
	Unverified bool
}

func (c Cell) score() Score { return Score{c.Passed, c.Required, c.Bonus} }

// Where says where a cell not passed is stuck: "R4 since 10:42", or "R4"
// when the time is not known; "" for a cell passed or not graded.
func (c Cell) Where() string {
	switch {
	case c.Stuck == "" || c.Passed || !c.Graded:
		return ""
	case c.Since.IsZero():
		return c.Stuck
	}
	return c.Stuck + " since " + c.Since.Format("15:04")
}

// Text is the cell as the grid shows it: ✔ (with +n for bonus follow-ups
// passed), k/n requirements passed, or – when not graded.
func (c Cell) Text() string {
	switch {
	case !c.Graded:
		return "–"
	case c.Passed && c.Bonus > 0:
		return fmt.Sprintf("✔ +%d", c.Bonus)
	case c.Passed:
		return "✔"
	}
	return fmt.Sprintf("%d/%d", c.Required, c.RequiredTotal)
}

// Mark is the best grade when it is better than the one shown ("best ✔",
// "best 5/7"): a participant who broke working code; "" otherwise.
func (c Cell) Mark() string {
	if !c.Graded || !c.Best.better(c.score()) {
		return ""
	}
	b := Cell{Graded: true, Passed: c.Best.Passed, Required: c.Best.Required, RequiredTotal: c.RequiredTotal, Bonus: c.Best.Bonus}
	return "best " + b.Text()
}

// State names the cell's class: its Look, or "none" when not graded.
func (c Cell) State() string {
	if !c.Graded {
		return "none"
	}
	return c.Look
}

// Row is one participant.
type Row struct {
	Participant string
	Cells       map[string]Cell // by kata slug
	Last        time.Time       // the time of the participant's latest grade; zero when not known
}

// Passed counts the katas the participant passed.
func (r Row) Passed() int {
	n := 0
	for _, c := range r.Cells {
		if c.Passed {
			n++
		}
	}
	return n
}

// Grid is the room.
type Grid struct {
	Katas []Kata
	Rows  []Row // by name
	// Now, when set, is the time the grid is shown at: a cell then says
	// for how many minutes it has been stuck, not since when, and rows
	// quiet for QuietAfter are dimmed. The live board sets it.
	Now        time.Time
	QuietAfter time.Duration // 0: no row is dimmed
	// StuckAfter is how long a participant works on one requirement
	// before the summary counts them stuck, not working (default 10 min).
	StuckAfter time.Duration

	since  map[stuckKey]time.Time // see sawStuck
	hidden map[string]bool        // participants hidden (Apply), by lower-case name
}

// New starts a grid whose columns include katas (those of the checkout,
// so that katas nobody graded still show).
func New(katas []Kata) *Grid {
	return &Grid{Katas: append([]Kata(nil), katas...)}
}

// Grade is what the grid reads of a JSON grade, and all the board keeps
// of one: unknown fields are dropped.
type Grade struct {
	Schema      int    `json:"schema"`
	Participant string `json:"participant"`
	Time        string `json:"time,omitempty"`
	Fingerprint struct {
		Code  string `json:"code"`
		Tests string `json:"tests"`
	} `json:"fingerprint"`
	Kata   string `json:"kata"`
	Title  string `json:"title"`
	Passed bool   `json:"passed"`
	Score  struct {
		Required      int `json:"required"`
		RequiredTotal int `json:"requiredTotal"`
		Bonus         int `json:"bonus"`
		BonusTotal    int `json:"bonusTotal"`
	} `json:"score"`
	Race         bool   `json:"race"`
	NoRace       string `json:"noRace"`
	RaceRequired bool   `json:"raceRequired,omitempty"`
	Runs         int    `json:"runs"`
	Gates        []Gate `json:"gates"`
	Build        *struct {
		Kind string `json:"kind"`
	} `json:"build"`
	Items []GradeItem `json:"items"`
	// Received is when the board accepted the grade; zero in a
	// participant's own file.
	Received time.Time `json:"received"`
}

// Gate is a gate's finding, as the grid reads it.
type Gate struct {
	Rule    string `json:"rule"`
	Message string `json:"message"`
}

// GradeItem is a requirement's verdict, as the grid reads it.
type GradeItem struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Bonus bool   `json:"bonus"`
	Kind  string `json:"kind"`
}

// At is when the grade was made: when the board received it, else the
// time it was graded; zero when it says neither.
func (gr Grade) At() time.Time {
	if !gr.Received.IsZero() {
		return gr.Received
	}
	t, _ := time.Parse(time.RFC3339, gr.Time)
	return t
}

// ParseGrade reads one JSON grade and checks what the grid needs of it.
func ParseGrade(data []byte) (Grade, error) {
	var gr Grade
	if err := json.Unmarshal(data, &gr); err != nil {
		return gr, err
	}
	return gr, gr.check()
}

func (gr Grade) check() error {
	if gr.Schema != 1 {
		return fmt.Errorf("schema %d; this checker reads schema 1", gr.Schema)
	}
	if gr.Kata == "" {
		return errors.New("it names no kata")
	}
	return nil
}

// stuck is where a grade not passed stops (see Cell.Stuck).
func (gr Grade) stuck() (id, text string) {
	if gr.Passed {
		return "", ""
	}
	if gr.Build != nil {
		if gr.Build.Kind == "api" {
			return "build", "its exported API differs from the stub's"
		}
		return "build", "it does not compile"
	}
	for _, it := range gr.Items {
		switch {
		case it.Bonus || it.Kind == "pass":
		case it.Kind == "forbidden":
			return "build", "the static gate refused the code"
		default:
			return it.ID, it.Text
		}
	}
	if len(gr.Gates) > 0 {
		return "build", gr.Gates[0].Message
	}
	return "", ""
}

// look is the grade's Cell.Look.
func (gr Grade) look(stuck string) string {
	switch {
	case gr.Passed && gr.Score.BonusTotal > 0 && gr.Score.Bonus == gr.Score.BonusTotal:
		return "bonus"
	case gr.Passed:
		return "pass"
	case stuck == "build":
		return "build"
	}
	todo := false
	for _, it := range gr.Items {
		switch {
		case it.Bonus || it.Kind == "pass":
		case it.Kind == "not-implemented":
			todo = true
		default:
			return "fail"
		}
	}
	if todo {
		return "todo"
	}
	return "fail"
}

// Add reads a stream of JSON grades, and the controls of a board's file
// among them (Control); fallback names the participant of a grade that
// names none (the file's name, say).
func (g *Grid) Add(r io.Reader, fallback string) error {
	dec := json.NewDecoder(r)
	n := 0
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("grade %d: %w", n+1, err)
		}
		if c, ok, err := ParseControl(raw); ok {
			if err != nil {
				return fmt.Errorf("after grade %d: %w", n, err)
			}
			g.Apply(c)
			continue
		}
		n++
		gr, err := ParseGrade(raw)
		if err != nil {
			return fmt.Errorf("grade %d: %w", n, err)
		}
		g.Put(gr, fallback)
	}
	if n == 0 {
		return errors.New("no grades in it")
	}
	return nil
}

// Put adds one grade; fallback names its participant when it names none.
// Of a participant's grades on a kata, the cell shows the latest when
// both carry a time, else the better; either way Best keeps the best.
func (g *Grid) Put(gr Grade, fallback string) {
	who := Name(gr.Participant)
	if who == "" {
		who = Name(fallback)
	}
	who = clip(who, MaxName)
	if g.Hidden(who) {
		return
	}
	k := g.column(gr.Kata, gr.Title)
	c := Cell{Graded: true, Passed: gr.Passed,
		Required: gr.Score.Required, RequiredTotal: gr.Score.RequiredTotal,
		Bonus: gr.Score.Bonus, BonusTotal: gr.Score.BonusTotal, At: gr.At(),
		Unverified: k.Tests != "" && gr.Fingerprint.Tests != k.Tests}
	c.Stuck, c.StuckText = gr.stuck()
	if t := k.text(c.Stuck); t != "" {
		c.StuckText = t
	}
	c.Look = gr.look(c.Stuck)
	c.Best = c.score()
	// Since is on the board's clock only: a grade's own time is the
	// participant's machine's.
	g.sawStuck(who, gr.Kata, c.Stuck, gr.Received)
	g.add(who, k.Slug, c)
}

// stuckKey names a requirement that was some grade's first failing one.
type stuckKey struct{ who, kata, stuck string }

// sawStuck remembers the earliest time requirement stuck was the first
// failing one of who's grades on kata.
func (g *Grid) sawStuck(who, kata, stuck string, at time.Time) {
	if stuck == "" || at.IsZero() {
		return
	}
	if g.since == nil {
		g.since = map[stuckKey]time.Time{}
	}
	k := stuckKey{strings.ToLower(who), kata, stuck}
	if t, ok := g.since[k]; !ok || at.Before(t) {
		g.since[k] = at
	}
}

// column is the grid's column for slug, added if need be.
func (g *Grid) column(slug, title string) Kata {
	for i := range g.Katas {
		if g.Katas[i].Slug == slug {
			if g.Katas[i].Title == "" {
				g.Katas[i].Title = title
			}
			return g.Katas[i]
		}
	}
	k := Kata{Slug: slug, Title: title}
	g.Katas = append(g.Katas, k)
	sort.Slice(g.Katas, func(i, j int) bool { return g.Katas[i].Slug < g.Katas[j].Slug })
	return k
}

func (g *Grid) add(who, slug string, c Cell) {
	key := strings.ToLower(who)
	for i := range g.Rows {
		r := &g.Rows[i]
		if !strings.EqualFold(r.Participant, who) {
			continue
		}
		old := r.Cells[slug]
		if old.Graded {
			best := old.Best
			if c.Best.better(best) {
				best = c.Best
			}
			if latest := !c.At.IsZero() && !old.At.IsZero(); latest && c.At.Before(old.At) || !latest && !c.better(old) {
				c = old
			}
			c.Best = best
		}
		c.Since = g.since[stuckKey{key, slug, c.Stuck}]
		r.Cells[slug] = c
		if c.At.After(r.Last) {
			r.Last = c.At
		}
		return
	}
	c.Since = g.since[stuckKey{key, slug, c.Stuck}]
	g.Rows = append(g.Rows, Row{Participant: who, Cells: map[string]Cell{slug: c}, Last: c.At})
	sort.Slice(g.Rows, func(i, j int) bool {
		return strings.ToLower(g.Rows[i].Participant) < strings.ToLower(g.Rows[j].Participant)
	})
}

// better reports whether c is a better grade than d.
func (c Cell) better(d Cell) bool { return c.score().better(d.score()) }

// ReadDir adds every *.json file of dir, each named after its file when
// its grades name no participant. A file that cannot be read is skipped
// and reported in problems; an error means nothing could be read.
func (g *Grid) ReadDir(dir string) (problems []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	read := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			err = g.Add(strings.NewReader(string(data)), strings.TrimSuffix(filepath.Base(f), ".json"))
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", filepath.Base(f), err))
			continue
		}
		read++
	}
	if read == 0 {
		return problems, fmt.Errorf("no grades in %s: put each participant's `checker check --json` output there as NAME.json", dir)
	}
	return problems, nil
}

// PassedBy counts the participants who passed kata slug.
func (g *Grid) PassedBy(slug string) int {
	n := 0
	for _, r := range g.Rows {
		if r.Cells[slug].Passed {
			n++
		}
	}
	return n
}

// Markdown writes the grid as a Markdown table with a legend, after the
// room at a glance (Glance) as a list.
func (g *Grid) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Room · %d participants · %d katas\n\n", len(g.Rows), len(g.Katas))
	for _, gl := range g.Glance() {
		fmt.Fprintf(&b, "- **%s**: %s", escape.Inline(gl.Kata.Slug), gl.Counts())
		for i, on := range gl.Top {
			sep := "; "
			if i == 0 {
				sep = ". Stuck on "
			}
			b.WriteString(sep + escape.Inline(on.String()))
			if on.Text != "" {
				b.WriteString(" (" + escape.Inline(on.Text) + ")")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| participant |")
	for _, k := range g.Katas {
		fmt.Fprintf(&b, " %s |", escape.Cell(k.Slug))
	}
	b.WriteString(" passed |\n| --- |")
	for range g.Katas {
		b.WriteString(" :-: |")
	}
	b.WriteString(" --: |\n")
	for _, r := range g.Sorted() {
		fmt.Fprintf(&b, "| %s |", escape.Cell(r.Participant))
		for _, k := range g.Katas {
			c := r.Cells[k.Slug]
			parts := []string{c.Text()}
			for _, more := range []string{g.Where(c), c.Mark(), map[bool]string{true: "tests differ"}[c.Unverified]} {
				if more != "" {
					parts = append(parts, escape.Cell(more))
				}
			}
			fmt.Fprintf(&b, " %s |", strings.Join(parts, " · "))
		}
		fmt.Fprintf(&b, " %d |\n", r.Passed())
	}
	b.WriteString("| **passed by** |")
	for _, k := range g.Katas {
		fmt.Fprintf(&b, " %d of %d |", g.PassedBy(k.Slug), len(g.Rows))
	}
	b.WriteString(" |\n\n" + Legend + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Legend explains the cells.
const Legend = "✔ passed (+n: bonus follow-ups passed) · k/n: requirements passed by the latest grade · R4 since 10:42, or R4 · 12 min: the first failing requirement, and since when (build: the code was not built) · best ✔: an earlier grade was better · tests differ: graded by other hidden tests than this checkout's · –: not graded"
