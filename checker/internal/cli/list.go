package cli

import (
	"flag"
	"fmt"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// statusText is the status column: not started, 3 of 7, passed, passed
// 60× (every one of 60 runs), passed · bonus 1 of 2.
func statusText(st session.Status, style report.Style) string {
	var t string
	g := st.Grade
	switch {
	case !st.Graded || st.Untouched:
		return style.Dim("not started")
	case st.NoBuild:
		t = style.Bad("did not build")
	case st.Passed:
		t = style.Good("passed")
		if g.Repeated() {
			t += fmt.Sprintf(" %d×", g.Runs)
		}
		if g.BonusTotal > 0 {
			t += fmt.Sprintf(" · bonus %d of %d", g.Bonus, g.BonusTotal)
		}
	default:
		t = style.Warn(fmt.Sprintf("%d of %d", g.Required, g.RequiredTotal))
		if g.Bonus > 0 {
			t += fmt.Sprintf(" · bonus %d of %d", g.Bonus, g.BonusTotal)
		}
	}
	if st.Stale {
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
	sts := checkout(cat.Root, env).List(cat)
	width := 0
	for _, k := range cat.Katas {
		width = max(width, utf8.RuneCountInString(k.Title))
	}
	var passed, started, bonus, btotal, stale, once int
	for _, st := range sts {
		k := st.Kata
		pad := width - utf8.RuneCountInString(k.Title)
		fmt.Fprintf(env.Stdout, "%s  %s%*s  %-12s %3d min  %s%s\n", k.ID(), k.Title, pad, "", k.Difficulty, k.Minutes, statusText(st, style), hunts(st)+catchScore(st))
		switch {
		case st.Passed:
			passed++
			if !st.Grade.Repeated() {
				once++
			}
		case st.Graded:
			started++
		}
		if st.Stale {
			stale++
		}
		bonus += st.Grade.Bonus
		btotal += len(k.Bonus)
	}
	fmt.Fprintf(env.Stdout, "\nProgress: %d of %d passed · %d under way · bonus %d of %d\n", passed, len(cat.Katas), started, bonus, btotal)
	if stale > 0 {
		fmt.Fprintln(env.Stdout, style.Dim("(stale): the files changed since the last check; check again to update."))
	}
	if once < passed {
		fmt.Fprintln(env.Stdout, style.Dim("passed N×: passed every one of N runs (make check EX=NN REPEAT=20), so not by luck; passed alone: a single run."))
	}
	fmt.Fprintln(env.Stdout, nextStep(sts))
	return ExitPass, nil
}

// hunts is what list adds about a kata's bug hunts: how many were
// solved, and whether one is under way.
func hunts(st session.Status) string {
	var t string
	switch n := st.Solved; n {
	case 0:
	case 1:
		t = " · 1 bug hunt solved"
	default:
		t = fmt.Sprintf(" · %d bug hunts solved", n)
	}
	if st.Hunting {
		t += " · bug hunt under way"
	}
	return t
}

// catchScore is what list adds about the learner's own tests: the last
// catch score.
func catchScore(st session.Status) string {
	c := st.Catch
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

// nextStep is where a learner goes next (session.Next).
func nextStep(sts []session.Status) string {
	if k, ok := session.Next(sts); ok {
		return fmt.Sprintf("Next: make check EX=%s", k.ID())
	}
	return "Every kata passes. Well done."
}
