package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catalog"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/session"
)

// Screen draws a session's events: grades over the last ones on a
// terminal (below a rule otherwise), progress lines for slow builds on
// stderr, the interview's texts and the watch's footer on stdout.
type Screen struct {
	Out, Err    io.Writer
	OutTerminal bool // Out is a terminal: a grade replaces the last one
	// ErrTerminal: Err is a terminal that can redraw a line in place
	// (not TERM=dumb), for progress lines.
	ErrTerminal bool
	Clock       clock.Clock
	Style       Style
	// Interviewer: the interviewer runs the session, so the scorecard is
	// shown at its end.
	Interviewer bool
	// Stacked: grades follow one another, a blank line apart (check),
	// instead of each replacing the last on a terminal (watch, interview).
	Stacked bool

	drawn int    // reports drawn so far
	built func() // ends the progress line of the build under way
}

// Show draws one event of a session: a build's progress line, a grade, a
// notice or a prompt, worded for the screen's Style.
func (t *Screen) Show(e session.Event) {
	out := t.Out
	switch e := e.(type) {
	case session.Building:
		t.built = t.buildNotice(e.Kata, e.Race).start()
	case session.Built:
		t.endBuild()
	case session.Warning:
		fmt.Fprintf(t.Err, "checker: %s\n", e.Text)
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
	case session.CheckingAgain:
		fmt.Fprintf(out, "Every requirement passes: checking your fix %d more times…\n", e.Repeat)
	case session.Checked, session.Warming, session.Warmed, session.Ready:
		t.doctor(e)
	case session.Stopped:
		fmt.Fprintln(out, "\nStopped.")
	default:
		t.interview(e)
	}
}

// endBuild ends the progress line of the build under way, if any.
func (t *Screen) endBuild() {
	if t.built != nil {
		t.built()
		t.built = nil
	}
}

// graded draws a grade, and a bug hunt's verdict under it; with Timed,
// under the time left.
func (t *Screen) graded(e session.Graded) {
	out := t.Out
	switch {
	case t.Stacked:
		if t.drawn > 0 {
			fmt.Fprintln(out)
		}
	case t.OutTerminal:
		fmt.Fprint(out, "\x1b[H\x1b[2J")
	case t.drawn > 0:
		fmt.Fprintf(out, "\n%s\n\n", strings.Repeat("─", 72))
	}
	t.drawn++
	if e.Timed {
		fmt.Fprintf(out, "Interview · %s · %s left\n\n", e.Result.Kata.Slug, session.ClockText(e.Left))
	}
	Text(out, e.Result, t.Style)
	huntVerdict(out, e.Result.Kata, e.Hunt, e.Result.Passed(), e.Timed)
}

// watching is the footer under a grade in watch: what to do next.
func (t *Screen) watching(e session.Watching) {
	switch {
	case !e.Passed:
		fmt.Fprintf(t.Out, "\nWatching %s: save to grade again; Ctrl-C to stop.\n", e.Exercise)
	case e.Next == "":
		fmt.Fprintln(t.Out, "\nEvery kata passes. Ctrl-C to stop.")
	default:
		fmt.Fprintf(t.Out, "\n%s passes. Press Enter to go on to %s; Ctrl-C to stop.\n", e.Kata, e.Next)
	}
}

// interview draws the events only an interview has.
func (t *Screen) interview(e session.Event) {
	w := t.Out
	switch e := e.(type) {
	case session.InterviewStarted:
		fmt.Fprintf(w, "Interview · %s · %s\n%d minutes; the clock is running.\n\n%s\n\n", e.ID, e.Title, e.Minutes, e.Story)
		fmt.Fprintln(w, "Before you write any code: what would you ask? Ask your interviewer now.")
		fmt.Fprintln(w, "Press Enter when they have answered, to see the decisions the tests assume.")
	case session.Briefed:
		t.briefed(e)
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
func (t *Screen) finished(e session.Finished) {
	w := t.Out
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
	if t.Interviewer {
		fmt.Fprintf(w, "\n%s", e.Scorecard)
	}
	fmt.Fprintf(w, "\nThe record of this interview is in %s, its scorecard in %s.\n", e.Record, e.Saved)
	if e.Witness != "" {
		fmt.Fprintf(w, "The witness has it too: %s.\n", e.Witness)
	}
}

// briefed shows what the ask-first pause reveals.
func (t *Screen) briefed(e session.Briefed) {
	w := t.Out
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

// replacing draws what a verb is about to replace in an exercise: what
// it writes, what it removes, where the learner's files go.
func (t *Screen) replacing(e session.Replacing) {
	w, verb := t.Out, "restore"
	if e.Reset && e.Planted {
		fmt.Fprintf(w, "Reset %s to its starting code, the bug hunt planted when this kit was packed:\n", e.Kata)
	} else if e.Reset {
		fmt.Fprintf(w, "Reset %s to its stub:\n", e.Kata)
	} else {
		verb = "write"
		fmt.Fprintf(w, "Bug hunt in %s: a working solution with one real mistake planted in it\nreplaces your code.\n", e.Kata)
	}
	if e.GivesUp {
		fmt.Fprintf(w, bundle.KitOr(
			"You have not passed %s yet: apart from the mistake, this is its\nsolution, so going ahead counts as giving up on it. To solve it\nyourself first: make check EX=%s\n",
			"You have not passed %s yet: apart from the mistake, this is its\nsolution, so going ahead counts as giving up on it (as solution --give-up\ndoes). To solve it yourself first: make check EX=%s\n"),
			e.Kata, e.ID)
	}
	for _, n := range e.Write {
		fmt.Fprintf(w, "  %-7s %s\n", verb, n)
	}
	for _, n := range e.Remove {
		fmt.Fprintf(w, "  remove  %s (yours)\n", n)
	}
	for _, n := range e.Keep {
		fmt.Fprintf(w, "  keep    %s (your test)\n", n)
	}
	if len(e.Forget) > 0 {
		fmt.Fprintf(w, "  forget  %s\n", strings.Join(e.Forget, ", "))
	}
	if len(e.Listed) > 0 {
		fmt.Fprintf(w, "  list still shows %s\n", strings.Join(e.Listed, " and "))
	}
	for _, f := range e.Stale {
		fmt.Fprintf(w, "  remove  %s (an earlier hunt's code, kept by an older checker)\n", f)
	}
	if e.Backup != "" {
		fmt.Fprintf(w, "A copy of your .go files goes to %s/%s.\n", e.Backup, e.Named)
	}
	if len(e.HuntCode) > 0 {
		fmt.Fprintf(w, "The previous hunt's code is not kept (%s): it is not your work, and a copy\nwould show what was planted.\n", strings.Join(e.HuntCode, ", "))
	}
}

// huntVerdict follows a grade of a kata with a bug hunt under way: once
// fixed, the planted mistake and why it matters. In a timed interview
// (timed) it names no verb: the candidate neither gives up nor starts
// another hunt there.
func huntVerdict(w io.Writer, k catalog.Kata, h *session.Hunt, passed, timed bool) {
	switch {
	case h == nil:
	case h.Fixed:
		if a := h.Again; a != nil {
			fmt.Fprintf(w, "\nChecked your fix %d more times: it passed all %d runs.\n", session.HuntRepeat, a.Runs)
		}
		if h.Packed { // the kit does not know what was planted
			fmt.Fprintf(w, "\nBug hunt solved: you found and fixed the planted mistake.\n")
			return
		}
		fmt.Fprintf(w, "\nBug hunt solved: you found and fixed the planted mistake (%s).\n  The mistake: %s\n", h.Mutant, h.Mistake)
		if h.Why != "" {
			fmt.Fprintf(w, "\nWhy it matters, from WHY.md:\n\n%s\n", h.Why)
		}
		if !timed {
			fmt.Fprintf(w, "\nAnother hunt: make bughunt EX=%s%s\n", k.ID(), bundle.KitOr("", " · all of WHY.md and the reference: make solution EX="+k.ID()))
		}
	case h.Again != nil:
		a := h.Again
		fmt.Fprintf(w, "\nBug hunt not solved yet: checked %d more times, your fix failed %s in %d of %d runs:\n  %s\n",
			session.HuntRepeat, a.Item, a.Failed, a.Runs, a.Message)
		fmt.Fprintf(w, "A fix must hold on every schedule and every scenario; make check EX=%s REPEAT=%d shows the runs.\n", k.ID(), session.HuntRepeat)
		if !timed {
			fmt.Fprintf(w, "To give up: make bughunt EX=%s GIVEUP=1\n", k.ID())
		}
	case passed:
		fmt.Fprintf(w, "\nBug hunt: every requirement passes, but the planted mistake also breaks %s: fix that too.\n", strings.Join(h.Bonus, ", "))
	case timed:
		fmt.Fprintf(w, "\nBug hunt under way in %s: the planted mistake is still there.\n", k.Slug)
	default:
		fmt.Fprintf(w, "\nBug hunt under way in %s; to give up: make bughunt EX=%s GIVEUP=1\n", k.Slug, k.ID())
	}
}

// CatchLogBatch is how many mutants a catch run tests between two of
// its progress lines in a log: about one line a minute.
const CatchLogBatch = 5

// catchProgress draws how far a catch run is: on a terminal one line,
// redrawn in place; in a log a plain line when the reference starts, then
// one per batch of mutants, so a log shows the run is alive.
func (t *Screen) catchProgress(e session.CatchProgress) {
	if !t.ErrTerminal {
		mutants := e.Done - 1
		switch {
		case e.Done == 0:
			fmt.Fprintf(t.Err, "checker: catch %s: testing the reference, then %s…\n", e.Kata, plural(e.Of-1, "known mistake"))
		case mutants > 0 && (mutants%CatchLogBatch == 0 || e.Done == e.Of):
			fmt.Fprintf(t.Err, "checker: catch %s: tested %d of %s\n", e.Kata, mutants, plural(e.Of-1, "known mistake"))
		}
		return
	}
	if e.Done == e.Of {
		fmt.Fprint(t.Err, "\r\x1b[K")
		return
	}
	what := "the reference"
	if e.Done > 0 {
		what = fmt.Sprintf("mistake %d of %d", e.Done, e.Of-1)
	}
	fmt.Fprintf(t.Err, "\r\x1b[Kchecker: catch %s: testing %s…", e.Kata, what)
}

// caught draws a catch report.
func (t *Screen) caught(e session.Caught) {
	Catch(t.Out, e.Report, t.Style)
}

// doctor draws doctor's events: each finding behind a mark, with how to
// fix a failed one, and a progress line while the race build warms.
func (t *Screen) doctor(e session.Event) {
	w, style := t.Out, t.Style
	switch e := e.(type) {
	case session.Checked:
		mark := style.Good("✔")
		if !e.OK {
			mark = style.Bad("✘")
		}
		fmt.Fprintf(w, "  %s %s\n", mark, e.Text)
		for _, f := range e.Fix {
			fmt.Fprintf(w, "      %s\n", style.Dim(f))
		}
	case session.Warming:
		t.built = progressLine{w: w, terminal: t.OutTerminal, clk: t.clock(), dim: style.Dim,
			text: "  … warming the race build: grading " + e.Kata + " (about a minute on a new machine)"}.start()
	case session.Warmed:
		t.endBuild()
	case session.Ready:
		fmt.Fprintf(w, "Ready: a check now takes about a second. Start with make check EX=%s\n", e.ID)
	}
}

// BugReport is what the learner starts from: the kata, its API and the
// symptom in a user's words (exercise is the folder to fix, as shown); the commands to go on with are the caller's
// (an interview grades every save, and nobody gives up there).
func BugReport(w io.Writer, exercise string, k catalog.Kata, h *session.Planted) {
	fmt.Fprintf(w, "\nBug report · %s · %s\n\n", k.Slug, k.Title)
	level := fmt.Sprintf("Level: %s (%s).", h.Level, h.Level.Means())
	if h.Next {
		level += fmt.Sprintf(" The lowest level you have not solved a hunt at in %s; LEVEL=%s picks one.",
			k.Slug, hunt.LevelNames("or"))
	}
	fmt.Fprintf(w, "%s\n\n", wrap(level, 72))
	fmt.Fprintf(w, "The code: %s in %s\n(the contract: its doc comments, and README.md).\n\n",
		strings.Join(h.API, ", "), exercise)
	fmt.Fprintf(w, "What a user saw:\n\n%s\n\n", indent(wrap(h.Symptom, 72), "    "))
	fmt.Fprintf(w, "Find the mistake and fix it; the hidden tests know the bug. A fix counts\nonce it also passes %d more runs of them.\n", session.HuntRepeat)
}

// wrap breaks text into lines of at most width characters, between words.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		l := utf8.RuneCountInString(word)
		switch {
		case n == 0:
		case n+1+l > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}

// indent puts prefix before every line of text.
func indent(text, prefix string) string {
	return prefix + strings.ReplaceAll(text, "\n", "\n"+prefix)
}

// clock is the screen's clock: the real one unless Clock is set.
func (t *Screen) clock() clock.Clock {
	if t.Clock != nil {
		return t.Clock
	}
	return clock.New()
}
