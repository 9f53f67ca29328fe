package cli

import (
	"fmt"
	"strings"

	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// terminal draws a session's events: grades over the last ones on a
// terminal (below a rule otherwise), progress lines for slow builds on
// stderr, the interview's texts and the watch's footer on stdout.
type terminal struct {
	env   Env
	style report.Style
	drawn int // reports drawn so far
	// interviewer: the interviewer runs the session, so the scorecard
	// is shown at its end.
	interviewer bool
	// stacked: grades follow one another, a blank line apart (check),
	// instead of each replacing the last on a terminal (watch, interview).
	stacked bool
	built   func() // ends the progress line of the build under way
}

func (t *terminal) show(e session.Event) {
	out := t.env.Stdout
	switch e := e.(type) {
	case session.Building:
		t.built = buildNotice(t.env, e.Kata, e.Race).start()
	case session.Built:
		t.endBuild()
	case session.Warning:
		fmt.Fprintf(t.env.Stderr, "checker: %s\n", e.Text)
	case session.Graded:
		t.graded(e)
	case session.Watching:
		t.watching(e)
	case session.CatchProgress:
		t.catchProgress(e)
	case session.Caught:
		t.caught(e)
	case session.Replacing:
		t.replacing(e)
	case session.Checked, session.Warming, session.Warmed, session.Ready:
		t.doctor(e)
	case session.Stopped:
		fmt.Fprintln(out, "\nStopped.")
	default:
		t.interview(e)
	}
}

// endBuild ends the progress line of the build under way, if any.
func (t *terminal) endBuild() {
	if t.built != nil {
		t.built()
		t.built = nil
	}
}

// graded draws a grade, and a bug hunt's verdict under it; with Timed,
// under the time left.
func (t *terminal) graded(e session.Graded) {
	out := t.env.Stdout
	switch {
	case t.stacked:
		if t.drawn > 0 {
			fmt.Fprintln(out)
		}
	case t.env.IsTerminal:
		fmt.Fprint(out, "\x1b[H\x1b[2J")
	case t.drawn > 0:
		fmt.Fprintf(out, "\n%s\n\n", strings.Repeat("─", 72))
	}
	t.drawn++
	if e.Timed {
		fmt.Fprintf(out, "Interview · %s · %s left\n\n", e.Result.Kata.Slug, session.ClockText(e.Left))
	}
	report.Text(out, e.Result, t.style)
	huntVerdict(out, e.Result.Kata, e.Hunt, e.Result.Passed(), e.Timed)
}

// watching is the footer under a grade in watch: what to do next.
func (t *terminal) watching(e session.Watching) {
	switch {
	case !e.Passed:
		fmt.Fprintf(t.env.Stdout, "\nWatching %s: save to grade again; Ctrl-C to stop.\n", e.Exercise)
	case e.Next == "":
		fmt.Fprintln(t.env.Stdout, "\nEvery kata passes. Ctrl-C to stop.")
	default:
		fmt.Fprintf(t.env.Stdout, "\n%s passes. Press Enter to go on to %s; Ctrl-C to stop.\n", e.Kata, e.Next)
	}
}

// interview draws the events only an interview has.
func (t *terminal) interview(e session.Event) {
	w := t.env.Stdout
	switch e := e.(type) {
	case session.InterviewStarted:
		fmt.Fprintf(w, "Interview · %s · %s\n%d minutes; the clock is running.\n\n%s\n\n", e.ID, e.Title, e.Minutes, e.Story)
		fmt.Fprintln(w, "Before you write any code: what would you ask? Ask your interviewer now.")
		fmt.Fprintln(w, "Press Enter when they have answered, to see the decisions the tests assume.")
	case session.Briefed:
		briefed(t.env, e)
	case session.Countdown:
		fmt.Fprintf(w, "\n%s left.\n", session.ClockText(e.Left))
	case session.HintShown:
		fmt.Fprintf(w, "\nHint %d of %d (helps with %s)\n\n%s\n", e.N, e.Of, strings.Join(e.Covers, ", "), e.Text)
	case session.NoHints:
		fmt.Fprintln(w, "This kata has no hints.")
	case session.UnknownCommand:
		fmt.Fprintln(w, "Type hint for a hint, or done to finish.")
	case session.FinalGrading:
		fmt.Fprintf(w, "\n%s\n\nGrading your last code once more, every test %d times", e.Ending, e.Repeat)
		if e.CPU != "" {
			fmt.Fprintf(w, " at GOMAXPROCS %s", e.CPU)
		}
		fmt.Fprintln(w, "…")
	case session.Finished:
		t.finished(e)
	}
}

// finished is the end of an interview: the candidate sees the score and
// where the record went; the scorecard, with the follow-up questions and
// their answers, only the interviewer (--interviewer, or checker
// scorecard RECORD later).
func (t *terminal) finished(e session.Finished) {
	w := t.env.Stdout
	if e.Runs == 0 { // else FinalGrading said how it ended
		fmt.Fprintf(w, "\n%s\n", e.Ending)
	}
	fmt.Fprintf(w, "\nScore: %d/%d required", e.Required, e.Total)
	if e.BonusOf > 0 {
		fmt.Fprintf(w, " · bonus %d/%d", e.Bonus, e.BonusOf)
	}
	switch {
	case e.Runs > 1:
		fmt.Fprintf(w, " (every test ran %d times; a requirement counts only if it passed every run)\n", e.Runs)
	case e.Runs == 1:
		fmt.Fprintf(w, " (the final grade, one run)\n")
	default:
		fmt.Fprintf(w, " (the last grade)\n")
	}
	if e.NoRace != "" {
		fmt.Fprintf(w, "Not a pass: the race detector did not run (%s), and an interview's final grade needs it. Regrade the final code where cgo works.\n", e.NoRace)
	}
	if t.interviewer {
		fmt.Fprintf(w, "\n%s", e.Scorecard)
	}
	fmt.Fprintf(w, "\nThe record of this interview is in %s, its scorecard in %s.\n", e.Record, e.Saved)
}

// briefed shows what the ask-first pause reveals.
func briefed(env Env, e session.Briefed) {
	w := env.Stdout
	fmt.Fprintf(w, "\nDecisions\n\n")
	for _, d := range e.Decisions {
		fmt.Fprintf(w, "- %s\n", d)
	}
	fmt.Fprintf(w, "\nRequirements\n\n")
	for _, it := range e.Requirements {
		fmt.Fprintf(w, "- %s %s\n", it.ID, it.Text)
	}
	if len(e.Bonus) > 0 {
		fmt.Fprintf(w, "\nBonus, if there is time\n\n")
		for _, it := range e.Bonus {
			fmt.Fprintf(w, "- %s %s\n", it.ID, it.Text)
		}
	}
	fmt.Fprintf(w, "\nWrite your code in %s (the doc comments state the contract).\n", e.Exercise)
	fmt.Fprintln(w, "Every save is graded. Type hint and Enter for a hint, done and Enter to finish.")
}
