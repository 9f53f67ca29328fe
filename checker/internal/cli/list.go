package cli

import (
	"flag"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
)

// statusText is the status column, the same in list and in the summary
// of a check: how the kata passed (passed, passed 60×, passed after the
// solution was shown), else where its code stands (not started, 3 of 7,
// did not build, with "solution shown" after a give-up), then bonus
// k of m, (stale), and a pass from before a reset. A grade of a bug
// hunt's code is the hunt's, not shown here.
func statusText(st session.Status, style report.Style) string {
	var t string
	own := st.Own()
	switch st.Pass {
	case state.PassedAlone, state.PassedAfterSolution:
		t = style.Good("passed")
		if own && st.Passed && st.Grade.Repeated() {
			t += fmt.Sprintf(" %d×", st.Grade.Runs)
		}
		if st.Pass == state.PassedAfterSolution {
			t += " after the solution was shown"
		}
		if own && !st.Passed {
			t += ", now " + gradeText(st, style)
		}
	case state.NotPassed:
		switch {
		case own:
			t = gradeText(st, style)
			if st.GaveUp {
				t += ", solution shown"
			}
		case st.GaveUp:
			t = style.Warn("solution shown")
		default:
			t = style.Dim("not started")
		}
	}
	if g := st.Grade; own && (st.Passed && g.BonusTotal > 0 || g.Bonus > 0) {
		t += fmt.Sprintf(" · bonus %d of %d", g.Bonus, g.BonusTotal)
	}
	if own && st.Stale {
		t += " " + style.Dim("(stale)")
	}
	switch {
	case !st.PassedBefore.Better(st.Pass):
	case st.PassedBefore == state.PassedAlone:
		t += " · passed before a reset"
	default:
		t += " · passed before a reset, after the solution was shown"
	}
	return t
}

// gradeText is the last grade of the learner's code: passed, 3 of 7, did
// not build.
func gradeText(st session.Status, style report.Style) string {
	switch g := st.Grade; {
	case st.NoBuild:
		return style.Bad("did not build")
	case st.Passed:
		return style.Good("passed")
	default:
		return style.Warn(fmt.Sprintf("%d of %d", g.Required, g.RequiredTotal))
	}
}

var listVerb = verb{
	name: "list", section: learning, needs: needCatalog, inOrder: true,
	summary: "the katas with your status: not started, k of n, passed (on your own,\nor after the solution was shown), bonus k of m, bug hunts solved and\ngiven up, what your own tests catch",
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
	var alone, after, started, bonus, btotal, stale, repeated int
	for _, st := range sts {
		k := st.Kata
		pad := width - utf8.RuneCountInString(k.Title)
		fmt.Fprintf(env.Stdout, "%s  %s%*s  %-12s %3d min  %s%s\n", k.ID(), k.Title, pad, "", k.Difficulty, k.Minutes, statusText(st, style), hunts(st)+catchScore(st))
		switch {
		case st.Pass == state.PassedAlone:
			alone++
		case st.Pass == state.PassedAfterSolution:
			after++
		case st.Own():
			started++
		}
		if st.Own() {
			bonus += st.Grade.Bonus
			if st.Stale {
				stale++
			}
			if st.Passed && st.Grade.Repeated() {
				repeated++
			}
		}
		btotal += len(k.Bonus)
	}
	passed := fmt.Sprintf("%d of %d passed", alone, len(cat.Katas))
	if after > 0 {
		passed = fmt.Sprintf("%d of %d passed on your own, %d after the solution was shown", alone, len(cat.Katas), after)
	}
	fmt.Fprintf(env.Stdout, "\nProgress: %s · %d under way · bonus %d of %d\n", passed, started, bonus, btotal)
	if by := huntLevels(checkout(cat.Root, env).HuntStats(cat)); by != "" {
		fmt.Fprintln(env.Stdout, by)
	}
	if stale > 0 {
		fmt.Fprintln(env.Stdout, style.Dim("(stale): the files changed since the last check; check again to update."))
	}
	if repeated > 0 {
		fmt.Fprintln(env.Stdout, style.Dim("passed N×: passed every one of N runs (make check EX=NN REPEAT=20), so not by luck; passed alone: a single run."))
	}
	fmt.Fprintln(env.Stdout, nextStep(sts))
	return ExitPass, nil
}

// hunts is what list adds about a kata's bug hunts: how many were solved
// and given up (the answer shown), and whether one is under way. Hunts
// ended by another hunt or a reset are neither.
func hunts(st session.Status) string {
	var parts []string
	if st.Solved > 0 {
		parts = append(parts, fmt.Sprintf("%d solved", st.Solved))
	}
	if st.GivenUp > 0 {
		parts = append(parts, fmt.Sprintf("%d given up", st.GivenUp))
	}
	switch {
	case len(parts) == 0 && st.Hunting:
		return " · bug hunt under way"
	case st.Hunting:
		parts = append(parts, "1 under way")
	case len(parts) == 0:
		return ""
	}
	return " · bug hunts: " + strings.Join(parts, ", ")
}

// huntLevels is list's line about the bug hunts by level: how many were
// solved, the median time to fix them, and how many were given up; "" for
// none.
func huntLevels(by []session.LevelStats) string {
	var parts []string
	for _, st := range by {
		level := string(st.Level)
		if level == "" {
			level = "level unknown"
		}
		t := fmt.Sprintf("%s %d solved", level, st.Solved)
		if st.Solved > 0 {
			t += fmt.Sprintf(" (median time to fix %s)", st.Median.Round(time.Second))
		}
		if st.GivenUp > 0 {
			t += fmt.Sprintf(", %d given up", st.GivenUp)
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Bug hunts by level: " + strings.Join(parts, " · ")
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
	after := 0
	for _, st := range sts {
		if st.Pass == state.PassedAfterSolution {
			after++
		}
	}
	if after > 0 {
		return fmt.Sprintf("Every kata passes, %d of them after the solution was shown.", after)
	}
	return "Every kata passes. Well done."
}
