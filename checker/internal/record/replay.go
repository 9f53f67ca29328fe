package record

import (
	"fmt"
	"io"
	"strings"

	"gokata/checker/internal/mutant"
)

// Replay writes the session of r as it happened, event by event: each
// grade with its time, its verdicts and the diff of the code from the
// previous grade's (the first grade's code in full), the other events
// (hints, the end) as a line each, and the final grade. Before every
// grade after the first it calls next, which may wait (for Enter).
// A line after the title says what the record's hash chain says, before
// the first grade. Everything the record says is shown, never obeyed:
// its control characters are escaped (package escape).
func Replay(w io.Writer, r *Record, next func()) {
	r = r.checked()
	fmt.Fprintf(w, "Interview · %s · %s", r.Kata, r.Start.Format(DateFormat))
	if r.Candidate != "" {
		fmt.Fprintf(w, " · %s", r.Candidate)
	}
	fmt.Fprintf(w, " · %s", count(len(r.Grades()), "grade"))
	if r.Final != nil {
		fmt.Fprintf(w, ", then the final grade")
	}
	fmt.Fprintln(w)
	switch c := r.Chain(); c.State {
	case ChainIntact:
		fmt.Fprintf(w, "Record: %s; only a witness can vouch for it, and none saw this interview.\n", c)
	case ChainChanged:
		fmt.Fprintf(w, "✘ %s: what follows is the record as it is now, not as the interview wrote it.\n", c)
	default:
		fmt.Fprintf(w, "Note: %s.\n", c)
	}
	var prev map[string][]byte
	graded := false
	for _, e := range r.Events {
		at := ClockText(e.At.Sub(r.Start))
		if e.At.Before(r.Start) {
			at = e.At.Format(DateFormat)
		}
		if e.Grade == nil {
			fmt.Fprintf(w, "\n%s  %s\n", at, eventText(r, e))
			continue
		}
		if graded && next != nil {
			next()
		}
		graded = true
		title := eventText(r, e)
		fmt.Fprintf(w, "\n── %s · %s ──\n", at, title)
		writeVerdicts(w, e.Grade)
		cur := e.Grade.Files()
		switch d := mutant.Diff(prev, cur); {
		case prev == nil:
			fmt.Fprintf(w, "\nThe code:\n\n%s", indentCode(d))
		case d == "":
			fmt.Fprintf(w, "\nThe code did not change.\n")
		default:
			fmt.Fprintf(w, "\nWhat changed:\n\n%s", indentCode(d))
		}
		prev = cur
	}
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
