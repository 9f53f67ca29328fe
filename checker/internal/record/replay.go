package record

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/mutant"
)

// Replay writes the session of r as it happened, event by event: each
// grade with its time, its verdicts and the diff of the code from the
// previous grade's (the first grade's from the code the interview started
// from, or in full when the record does not hold it), the other events
// (hints, notes, the end) as a line each, and the final grade. After
// each grade but the last it calls next, which may wait (for Enter).
// A line after the title says what the record's hash chain says, before
// the first grade. Everything the record says is shown, never obeyed:
// its control characters are escaped (package escape).
func Replay(w io.Writer, r *Record, next func()) {
	head, pages := ReplayPages(r)
	io.WriteString(w, head)
	for i, p := range pages {
		if i > 0 && next != nil {
			next()
		}
		io.WriteString(w, p.Text)
	}
}

// Page is one stop of a replay: the events since the grade before, then
// a grade (and, on the last page, the events after it).
type Page struct {
	At   time.Duration // the grade's time into the interview
	Text string
}

// ReplayPages is Replay cut into its title and one page per grade, for a
// replay that moves back and forth (Navigate). A record without grades
// has one page, its events.
func ReplayPages(r *Record) (head string, pages []Page) {
	r = r.checked()
	var b strings.Builder
	fmt.Fprintf(&b, "Interview · %s · %s", r.Kata, r.Start.Format(DateFormat))
	if r.Candidate != "" {
		fmt.Fprintf(&b, " · %s", r.Candidate)
	}
	fmt.Fprintf(&b, " · %s", count(len(r.Grades()), "grade"))
	if r.Final != nil {
		fmt.Fprintf(&b, ", then the final grade")
	}
	fmt.Fprintln(&b)
	switch c := r.Chain(); c.State {
	case ChainIntact:
		fmt.Fprintf(&b, "Record: %s; only a witness can vouch for it, and none saw this interview.\n", c)
	case ChainChanged:
		fmt.Fprintf(&b, "✘ %s: what follows is the record as it is now, not as the interview wrote it.\n", c)
	default:
		fmt.Fprintf(&b, "Note: %s.\n", c)
	}
	head = b.String()

	var page strings.Builder
	prev, graded := startFiles(r), false
	for _, e := range r.Events {
		when := ClockText(e.At.Sub(r.Start))
		if e.At.Before(r.Start) {
			when = e.At.Format(DateFormat)
		}
		if e.Kind == KindSave && e.Code != nil {
			cur := files(e.Code)
			fmt.Fprintf(&page, "\n%s  %s\n", when, eventText(r, e))
			writeDiff(&page, r, prev, cur, graded)
			prev, graded = cur, true
			continue
		}
		if e.Grade == nil {
			fmt.Fprintf(&page, "\n%s  %s\n", when, eventText(r, e))
			continue
		}
		fmt.Fprintf(&page, "\n── %s · %s ──\n", when, eventText(r, e))
		writeVerdicts(&page, e.Grade)
		cur := e.Grade.Files()
		writeDiff(&page, r, prev, cur, graded)
		prev, graded = cur, true
		pages = append(pages, Page{At: e.At.Sub(r.Start), Text: page.String()})
		page.Reset()
	}
	if n := len(pages); n > 0 {
		pages[n-1].Text += page.String()
	} else {
		pages = append(pages, Page{Text: page.String()})
	}
	return head, pages
}

// writeDiff is what changed from the code before, prev (after the first
// grade or save: the code the interview started from, or nil when the
// record does not hold it), to cur.
func writeDiff(w io.Writer, r *Record, prev, cur map[string][]byte, after bool) {
	switch d := mutant.Diff(prev, cur); {
	case prev == nil:
		fmt.Fprintf(w, "\nThe code:\n\n%s", indentCode(d))
	case d == "" && !after:
		fmt.Fprintf(w, "\nThe code is %s, unchanged.\n", startText(r))
	case d == "":
		fmt.Fprintf(w, "\nThe code did not change.\n")
	case !after:
		fmt.Fprintf(w, "\nWhat changed from %s:\n\n%s", startText(r), indentCode(d))
	default:
		fmt.Fprintf(w, "\nWhat changed:\n\n%s", indentCode(d))
	}
}

// startFiles is the code the interview started from, nil when the record
// does not hold it.
func startFiles(r *Record) map[string][]byte {
	if len(r.StartFiles) == 0 {
		return nil
	}
	return files(r.StartFiles)
}

// files is code as bytes.
func files(code map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for name, c := range code {
		out[name] = []byte(c)
	}
	return out
}

// startText names the code the interview started from.
func startText(r *Record) string {
	if r.Hunt != nil {
		return "the planted code the interview started from"
	}
	return "the stub"
}

// NavigateHelp is what a replay that moves back and forth asks after each
// page.
const NavigateHelp = "[Enter: next grade · b: back · 3: grade 3 · 12:30: the grade at that time · q: quit]"

// Navigate is the page a line typed after page cur of pages asks for:
// Enter the next, b the one before, a number that grade, a time (m:ss)
// the last grade at or before it, q none (quit). Past the last page,
// Enter quits. A line it does not understand is an error that says what
// it takes.
func Navigate(pages []Page, cur int, line string) (next int, quit bool, err error) {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		if cur+1 >= len(pages) {
			return cur, true, nil
		}
		return cur + 1, false, nil
	case line == "q" || line == "quit":
		return cur, true, nil
	case line == "b" || line == "back":
		return max(cur-1, 0), false, nil
	}
	if n, err := strconv.Atoi(line); err == nil {
		if n < 1 || n > len(pages) {
			return cur, false, fmt.Errorf("there are grades 1 to %d", len(pages))
		}
		return n - 1, false, nil
	}
	if m, s, ok := strings.Cut(line, ":"); ok {
		mins, err1 := strconv.Atoi(m)
		secs, err2 := strconv.Atoi(s)
		if err1 == nil && err2 == nil && mins >= 0 && secs >= 0 && secs < 60 && len(s) == 2 {
			t := time.Duration(mins)*time.Minute + time.Duration(secs)*time.Second
			i := 0
			for j, p := range pages {
				if p.At <= t {
					i = j
				}
			}
			return i, false, nil
		}
	}
	return cur, false, fmt.Errorf("%q: type Enter, b, a grade's number or a time such as 12:30; q quits", line)
}

// writeVerdicts is a grade's verdicts: the compiler's or the gate's
// lines, the items that pass on one line, each failure on its own.
func writeVerdicts(w io.Writer, g *Grade) {
	for _, l := range g.Build {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, l := range g.Gate {
		fmt.Fprintf(w, "  gate: %s\n", l)
	}
	if len(g.Build) > 0 {
		return
	}
	var passed []string
	for _, v := range g.Items {
		if v.Passed {
			passed = append(passed, v.ID+runsOf(v))
		}
	}
	if len(passed) > 0 {
		fmt.Fprintf(w, "  ✔ %s\n", strings.Join(passed, " "))
	}
	for _, v := range g.Items {
		if !v.Passed {
			msg := v.Kind
			if v.Message != "" {
				msg += ": " + v.Message
			}
			fmt.Fprintf(w, "  ✘ %s%s %s\n", v.ID, runsOf(v), msg)
			for _, d := range v.Detail {
				fmt.Fprintf(w, "      %s\n", d)
			}
		}
	}
}

// runsOf is an item's pass rate, when it ran more than once.
func runsOf(v Verdict) string {
	if v.Runs <= 1 {
		return ""
	}
	return fmt.Sprintf(" [%d of %d runs]", v.Passes, v.Runs)
}

func indentCode(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}
