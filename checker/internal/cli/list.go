package cli

import (
	"flag"
	"fmt"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/report"
	"gokata/checker/internal/state"
)

// status is where a learner stands on one kata, from its last grade.
type status struct {
	graded    bool
	passed    bool
	stale     bool // the files changed since that grade
	untouched bool // graded, but still the untouched stub
	noBuild   bool // graded, but it did not build
	g         state.Grade
}

func statusOf(k catalog.Kata, s *state.State) status {
	last := s.Kata(k.Slug).Last
	if last == nil {
		return status{}
	}
	st := status{graded: true, passed: last.Passed, g: *last}
	if fp, err := state.Fingerprint(k.Exercise); err == nil && fp != last.Fingerprint {
		st.stale = true
	}
	return st
}

// text is the status column: not started, 3 of 7, passed, passed 60× (every
// one of 60 runs), passed · bonus 1 of 2.
func (st status) text(style report.Style) string {
	var t string
	switch {
	case !st.graded || st.untouched:
		return style.Dim("not started")
	case st.noBuild:
		t = style.Bad("did not build")
	case st.passed:
		t = style.Good("passed")
		if st.g.Repeated() {
			t += fmt.Sprintf(" %d×", st.g.Runs)
		}
		if st.g.BonusTotal > 0 {
			t += fmt.Sprintf(" · bonus %d of %d", st.g.Bonus, st.g.BonusTotal)
		}
	default:
		t = style.Warn(fmt.Sprintf("%d of %d", st.g.Required, st.g.RequiredTotal))
		if st.g.Bonus > 0 {
			t += fmt.Sprintf(" · bonus %d of %d", st.g.Bonus, st.g.BonusTotal)
		}
	}
	if st.stale {
		t += " " + style.Dim("(stale)")
	}
	return t
}

var listVerb = verb{
	name: "list", section: learning, needs: needCatalog, inOrder: true,
	summary: "the katas with your status: not started, k of n, passed, bonus k of m,\nbug hunts solved, what your own tests catch",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		colorFlag(fs)
		return func(c *call) (int, error) { return list(c.cat, c.style, c.env) }
	},
}

func list(cat *catalog.Catalog, style report.Style, env Env) (int, error) {
	s := progress(cat.Root, env)
	width := 0
	for _, k := range cat.Katas {
		width = max(width, utf8.RuneCountInString(k.Title))
	}
	var passed, started, bonus, btotal, stale, once int
	for _, k := range cat.Katas {
		st := statusOf(k, s)
		pad := width - utf8.RuneCountInString(k.Title)
		fmt.Fprintf(env.Stdout, "%s  %s%*s  %-12s %3d min  %s%s\n", k.ID(), k.Title, pad, "", k.Difficulty, k.Minutes, st.text(style), hunts(s.Kata(k.Slug))+catchScore(s.Kata(k.Slug)))
		switch {
		case st.passed:
			passed++
			if !st.g.Repeated() {
				once++
			}
		case st.graded:
			started++
		}
		if st.stale {
			stale++
		}
		bonus += st.g.Bonus
		btotal += len(k.Bonus)
	}
	fmt.Fprintf(env.Stdout, "\nProgress: %d of %d passed · %d under way · bonus %d of %d\n", passed, len(cat.Katas), started, bonus, btotal)
	if stale > 0 {
		fmt.Fprintln(env.Stdout, style.Dim("(stale): the files changed since the last check; check again to update."))
	}
	if once < passed {
		fmt.Fprintln(env.Stdout, style.Dim("passed N×: passed every one of N runs (make check EX=NN REPEAT=20), so not by luck; passed alone: a single run."))
	}
	fmt.Fprintln(env.Stdout, nextStep(cat, s))
	return ExitPass, nil
}

// hunts is what list adds about a kata's bug hunts: how many were
// solved, and whether one is under way.
func hunts(k *state.Kata) string {
	var t string
	switch n := k.HuntsSolved(); n {
	case 0:
	case 1:
		t = " · 1 bug hunt solved"
	default:
		t = fmt.Sprintf(" · %d bug hunts solved", n)
	}
	if k.Hunt() != nil {
		t += " · bug hunt under way"
	}
	return t
}

// catchScore is what list adds about the learner's own tests: the last
// catch score.
func catchScore(k *state.Kata) string {
	c := k.Catch
	switch {
	case c == nil:
		return ""
	case c.FalseAlarms == 1:
		return fmt.Sprintf(" · tests catch %d of %d, 1 false alarm", c.Caught, c.Mutants)
	case c.FalseAlarms > 1:
		return fmt.Sprintf(" · tests catch %d of %d, %d false alarms", c.Caught, c.Mutants, c.FalseAlarms)
	}
	return fmt.Sprintf(" · tests catch %d of %d", c.Caught, c.Mutants)
}

// nextStep is where a learner goes next: the first kata, in order, whose
// last grade did not pass.
func nextStep(cat *catalog.Catalog, s *state.State) string {
	for _, k := range cat.Katas {
		if !statusOf(k, s).passed {
			return fmt.Sprintf("Next: make check EX=%s", k.ID())
		}
	}
	return "Every kata passes. Well done."
}
