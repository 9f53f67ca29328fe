package room

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// DefaultStuckAfter is Grid.StuckAfter when it is not set.
const DefaultStuckAfter = 10 * time.Minute

// Glance is the room at a glance for one kata: how many passed, work, are
// stuck or have not started, and the requirements most of them are stuck
// on: what to explain to everyone next.
type Glance struct {
	Kata                               Kata
	Passed, Working, Stuck, NotStarted int
	After                              time.Duration // Stuck counts those stuck this long
	Top                                []StuckOn     // most people first; at most 3
}

// StuckOn is a requirement that some participants' latest grades fail
// first.
type StuckOn struct {
	ID, Text string
	People   int
	// Median is the median time they have been stuck there; Timed is
	// false when the grades carry no time.
	Median time.Duration
	Timed  bool
}

// Minutes is Median in whole minutes.
func (s StuckOn) Minutes() int { return int(s.Median / time.Minute) }

// String is the line a facilitator reads: "R4: 9 people, median 12 min".
func (s StuckOn) String() string {
	who := fmt.Sprintf("%d people", s.People)
	if s.People == 1 {
		who = "1 person"
	}
	if s.Timed {
		return fmt.Sprintf("%s: %s, median %d min", s.ID, who, s.Minutes())
	}
	return s.ID + ": " + who
}

// clock is the time the grid is shown at: Now, else the time of the
// latest grade (a report of a board's file), else zero.
func (g *Grid) clock() time.Time {
	if !g.Now.IsZero() {
		return g.Now
	}
	var last time.Time
	for _, r := range g.Rows {
		if r.Last.After(last) {
			last = r.Last
		}
	}
	return last
}

// stuckFor is how long c has been stuck at now; ok is false when not
// known or not stuck.
func stuckFor(c Cell, now time.Time) (d time.Duration, ok bool) {
	if c.Where() == "" || c.Since.IsZero() || now.IsZero() {
		return 0, false
	}
	return max(0, now.Sub(c.Since)), true
}

// Where is where c is stuck, as the grid shows it: for how long when the
// grid has a Now ("R4 · 12 min"), else since when (Cell.Where).
func (g *Grid) Where(c Cell) string {
	d, ok := stuckFor(c, g.Now)
	if g.Now.IsZero() || !ok {
		return c.Where()
	}
	return fmt.Sprintf("%s · %d min", c.Stuck, int(d/time.Minute))
}

// Quiet reports whether r has pushed nothing for QuietAfter.
func (g *Grid) Quiet(r Row) bool {
	return g.QuietAfter > 0 && !g.Now.IsZero() && !r.Last.IsZero() && g.Now.Sub(r.Last) > g.QuietAfter
}

// Sorted is the rows as the grid shows them: the participant stuck
// longest first (the earliest Since of a kata not passed), then those
// stuck with no time known, then by name.
func (g *Grid) Sorted() []Row {
	rows := append([]Row(nil), g.Rows...)
	key := func(r Row) (since time.Time, stuck bool) {
		for _, k := range g.Katas {
			c := r.Cells[k.Slug]
			if c.Where() == "" {
				continue
			}
			stuck = true
			if !c.Since.IsZero() && (since.IsZero() || c.Since.Before(since)) {
				since = c.Since
			}
		}
		return since, stuck
	}
	sort.SliceStable(rows, func(i, j int) bool {
		si, _ := key(rows[i])
		sj, _ := key(rows[j])
		switch {
		case si.IsZero() != sj.IsZero():
			return !si.IsZero()
		case !si.Equal(sj):
			return si.Before(sj)
		}
		return false // Rows is by name already
	})
	return rows
}

// Glance is the room at a glance, a Glance per kata.
func (g *Grid) Glance() []Glance {
	now := g.clock()
	after := g.StuckAfter
	if after <= 0 {
		after = DefaultStuckAfter
	}
	var out []Glance
	for _, k := range g.Katas {
		gl := Glance{Kata: k, After: after}
		on := map[string][]time.Duration{}
		text := map[string]string{}
		timed := map[string]bool{}
		for _, r := range g.Rows {
			c := r.Cells[k.Slug]
			switch {
			case !c.Graded || c.Look == "todo":
				gl.NotStarted++
				continue
			case c.Passed:
				gl.Passed++
				continue
			}
			d, ok := stuckFor(c, now)
			if ok && d >= after {
				gl.Stuck++
			} else {
				gl.Working++
			}
			if c.Stuck == "" {
				continue
			}
			on[c.Stuck] = append(on[c.Stuck], d)
			text[c.Stuck] = c.StuckText
			timed[c.Stuck] = timed[c.Stuck] || ok
		}
		for id, ds := range on {
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			gl.Top = append(gl.Top, StuckOn{ID: id, Text: text[id], People: len(ds), Median: ds[len(ds)/2], Timed: timed[id]})
		}
		sort.Slice(gl.Top, func(i, j int) bool {
			a, b := gl.Top[i], gl.Top[j]
			switch {
			case a.People != b.People:
				return a.People > b.People
			case a.Median != b.Median:
				return a.Median > b.Median
			}
			return a.ID < b.ID
		})
		if len(gl.Top) > 3 {
			gl.Top = gl.Top[:3]
		}
		out = append(out, gl)
	}
	return out
}

// Counts is the glance's counts as one line: "3 passed · 5 working · 2
// stuck 10+ min · 1 not started".
func (gl Glance) Counts() string {
	return strings.Join([]string{
		fmt.Sprintf("%d passed", gl.Passed), fmt.Sprintf("%d working", gl.Working),
		gl.StuckCount(), fmt.Sprintf("%d not started", gl.NotStarted),
	}, " · ")
}

// StuckCount is "2 stuck 10+ min".
func (gl Glance) StuckCount() string {
	return fmt.Sprintf("%d stuck %d+ min", gl.Stuck, int(gl.After/time.Minute))
}
