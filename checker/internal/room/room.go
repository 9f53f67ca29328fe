// Package room builds a workshop's room grid from the participants' grades
// and renders it as a self-contained HTML page and as Markdown: one row per
// participant, one column per kata. The report verb draws it from files;
// the live board (package board) draws it from the same model and the same
// template, and sends the table again after every push.
//
// The input is what `checker check --json` prints (the schema is in
// package report): a stream of grade objects, one per kata, each naming the
// participant. Only the fields the grid needs are read, so grades from a
// newer checker of the same schema still count. The board adds one field,
// "received" (RFC 3339): when it accepted the grade.
//
// A cell not passed also says where its participant is stuck: the first
// requirement its grade fails, and since when that requirement has been
// the first failing one (the earliest grade that failed there first, when
// the grades carry a time).
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

// Kata is a column of the grid.
type Kata struct {
	Slug  string // "06-retry"
	Title string
}

// Cell is one participant's best grade on one kata.
type Cell struct {
	Graded                  bool
	Passed                  bool
	Required, RequiredTotal int
	Bonus, BonusTotal       int
	// Stuck is where a grade not passed stops: the first requirement it
	// fails ("R4"), or "build" when the code was not built or run;
	// StuckText says what that is.
	Stuck, StuckText string
	// Since is when Stuck became the first failing requirement: the time
	// of the earliest grade that failed there first. Zero when the grades
	// carry no time.
	Since time.Time
}

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

// better reports whether c is a better grade than d.
func (c Cell) better(d Cell) bool {
	switch {
	case c.Passed != d.Passed:
		return c.Passed
	case c.Required != d.Required:
		return c.Required > d.Required
	}
	return c.Bonus > d.Bonus
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

// State names the cell's class: pass, partial, none.
func (c Cell) State() string {
	switch {
	case c.Passed:
		return "pass"
	case c.Graded && c.Required > 0:
		return "partial"
	case c.Graded:
		return "started"
	}
	return "none"
}

// Row is one participant.
type Row struct {
	Participant string
	Cells       map[string]Cell // by kata slug
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
	Rows  []Row

	since map[stuckKey]time.Time // see sawStuck
}

// New starts a grid whose columns include katas (those of the checkout,
// so that katas nobody graded still show).
func New(katas []Kata) *Grid {
	return &Grid{Katas: append([]Kata(nil), katas...)}
}

// Grade is the part of a JSON grade the grid reads.
type Grade struct {
	Schema      int    `json:"schema"`
	Participant string `json:"participant"`
	Kata        string `json:"kata"`
	Title       string `json:"title"`
	Passed      bool   `json:"passed"`
	Score       struct {
		Required, RequiredTotal, Bonus, BonusTotal int
	} `json:"score"`
	Build *struct {
		Kind string `json:"kind"`
	} `json:"build"`
	Gates []struct {
		Rule    string `json:"rule"`
		Message string `json:"message"`
	} `json:"gates"`
	Items []struct {
		ID    string `json:"id"`
		Text  string `json:"text"`
		Bonus bool   `json:"bonus"`
		Kind  string `json:"kind"`
	} `json:"items"`
	// Received is when the board accepted the grade; zero in a
	// participant's own file.
	Received time.Time `json:"received"`
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

// Add reads a stream of JSON grades; fallback names the participant of a
// grade that names none (the file's name, say).
func (g *Grid) Add(r io.Reader, fallback string) error {
	dec := json.NewDecoder(r)
	n := 0
	for {
		var gr Grade
		err := dec.Decode(&gr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("grade %d: %w", n+1, err)
		}
		n++
		if err := gr.check(); err != nil {
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
func (g *Grid) Put(gr Grade, fallback string) {
	who := Name(gr.Participant)
	if who == "" {
		who = fallback
	}
	c := Cell{Graded: true, Passed: gr.Passed,
		Required: gr.Score.Required, RequiredTotal: gr.Score.RequiredTotal,
		Bonus: gr.Score.Bonus, BonusTotal: gr.Score.BonusTotal}
	c.Stuck, c.StuckText = gr.stuck()
	g.sawStuck(who, gr.Kata, c.Stuck, gr.Received)
	g.add(who, Kata{gr.Kata, gr.Title}, c)
}

// Name is a participant's name as the grid shows it: one line, spaces
// collapsed.
func Name(s string) string { return strings.Join(strings.Fields(s), " ") }

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

func (g *Grid) add(who string, k Kata, c Cell) {
	found := false
	for i := range g.Katas {
		if g.Katas[i].Slug == k.Slug {
			found = true
			if g.Katas[i].Title == "" {
				g.Katas[i].Title = k.Title
			}
		}
	}
	if !found {
		g.Katas = append(g.Katas, k)
		sort.Slice(g.Katas, func(i, j int) bool { return g.Katas[i].Slug < g.Katas[j].Slug })
	}
	for i := range g.Rows {
		if strings.EqualFold(g.Rows[i].Participant, who) {
			old := g.Rows[i].Cells[k.Slug]
			if c.better(old) || !old.Graded {
				old = c
			}
			old.Since = g.since[stuckKey{strings.ToLower(who), k.Slug, old.Stuck}]
			g.Rows[i].Cells[k.Slug] = old
			return
		}
	}
	c.Since = g.since[stuckKey{strings.ToLower(who), k.Slug, c.Stuck}]
	g.Rows = append(g.Rows, Row{Participant: who, Cells: map[string]Cell{k.Slug: c}})
	sort.Slice(g.Rows, func(i, j int) bool {
		return strings.ToLower(g.Rows[i].Participant) < strings.ToLower(g.Rows[j].Participant)
	})
}

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

// Markdown writes the grid as a Markdown table with a legend.
func (g *Grid) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Room · %d participants · %d katas\n\n", len(g.Rows), len(g.Katas))
	b.WriteString("| participant |")
	for _, k := range g.Katas {
		fmt.Fprintf(&b, " %s |", escape.Cell(k.Slug))
	}
	b.WriteString(" passed |\n| --- |")
	for range g.Katas {
		b.WriteString(" :-: |")
	}
	b.WriteString(" --: |\n")
	for _, r := range g.Rows {
		fmt.Fprintf(&b, "| %s |", escape.Cell(r.Participant))
		for _, k := range g.Katas {
			c := r.Cells[k.Slug]
			if w := c.Where(); w != "" {
				fmt.Fprintf(&b, " %s · %s |", c.Text(), escape.Cell(w))
				continue
			}
			fmt.Fprintf(&b, " %s |", c.Text())
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
const Legend = "✔ passed (+n: bonus follow-ups passed) · k/n: requirements passed so far · R4 since 10:42: the first failing requirement, first since then (build: the code was not built) · –: not graded"
