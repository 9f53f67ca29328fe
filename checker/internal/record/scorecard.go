package record

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/tokensim"
	"gokata/internal/failure"
)

// DateFormat shows a moment on the scorecard, with its zone.
const DateFormat = "2006-01-02 15:04 -07:00"

// Scorecard renders r for the interviewer in Markdown: what its hash
// chain says and that no witness saw the interview, what to check first
// (the integrity facts, and the measures of the code, against ref, the
// kata's reference, when it is not nil), the facts, the timeline, the
// requirements with their final verdicts, the code's diff from the stub,
// the questions to tick, the follow-ups and the rubric. It is the one
// place a scorecard is made: the interview writes it, the scorecard verb
// prints it again.
//
// Anyone can write a record, so everything it says is escaped (package
// escape): no control character reaches the terminal that shows the
// scorecard, and nothing in it becomes HTML, a link or an image.
func Scorecard(r *Record, ref Reference) string {
	flags := Flags(r, ref) // of the code as it was: escaping changes it
	r = r.checked()
	var b strings.Builder
	id, _, _ := strings.Cut(r.Kata, "-")
	fmt.Fprintf(&b, "# Interview scorecard · %s · %s\n\n", escape.Inline(id), escape.Inline(r.Title))
	writeChain(&b, r)
	writeFlags(&b, r, flags, compared(r, ref))
	writeFacts(&b, r, id)
	writeTimeline(&b, r)
	final := r.last()
	if final != nil {
		itemTable(&b, r, final, "Requirements", false)
		if final.BonusTotal > 0 {
			itemTable(&b, r, final, "Bonus", true)
		}
		writeCode(&b, r, final)
	}
	writeAsked(&b, r)
	fmt.Fprintf(&b, "\n## Follow-up questions\n\n")
	if r.FollowUps != "" {
		fmt.Fprintf(&b, "%s\n", escape.Markdown(r.FollowUps))
	} else {
		fmt.Fprintf(&b, "This copy has no solutions/%s/WHY.md.\n", escape.Inline(r.Kata))
	}
	writeRubric(&b, r)
	return b.String()
}

// checked is the copy of r that the scorecard and replay show: its
// strings escaped (escaped), its chain's verdict that of r.
func (r *Record) checked() *Record {
	c := r.Chain()
	r = r.escaped(escape.Terminal)
	r.chain = &c
	return r
}

// writeChain is the scorecard's first word: what the hash chain says,
// and what the witness does.
func writeChain(b *strings.Builder, r *Record) {
	c := r.Chain()
	switch c.State {
	case ChainIntact:
		fmt.Fprintf(b, "**Record:** %s; only a witness can vouch for it (the chain has no secret: it shows an edit by hand, not a forgery that computes every hash again).\n\n", escape.Inline(c.String()))
	case ChainChanged:
		fmt.Fprintf(b, "**Record:** ✘ %s.\n\n", escape.Inline(c.String()))
	default:
		fmt.Fprintf(b, "**Record:** %s.\n\n", escape.Inline(c.String()))
	}
	w, got := r.Witness, r.Witnessed
	switch {
	case got != nil && len(got.Differences) > 0:
		fmt.Fprintf(b, "**Witness:** ✘ the record differs from the copy the witness kept as it happened:\n\n")
		for _, d := range got.Differences {
			fmt.Fprintf(b, "- %s\n", escape.Inline(d))
		}
		fmt.Fprintln(b)
	case got != nil:
		fmt.Fprintf(b, "**Witness:** ✔ the record matches the copy the witness kept as it happened: its %s, and the record it got at the end.\n\n", count(got.Events, "event"))
	case w != nil:
		fmt.Fprintf(b, "**Witness:** room %s at %s kept a copy as it happened; compare with it: `checker scorecard RECORD --witness %s`.\n\n", escape.Inline(w.Room), escape.Inline(w.URL), escape.Inline(w.URL))
	default:
		fmt.Fprintf(b, "**Witness:** none saw this interview.\n\n")
	}
}

// writeAsked is the Ask-first questions, ticked as the interviewer ticked
// them during the interview (the asked verb), each with its time and
// whether it came before the decisions were shown, then the other
// questions noted; unticked, for the interviewer to tick, when none was.
func writeAsked(b *strings.Builder, r *Record) {
	fmt.Fprintf(b, "\n## Did the candidate ask first?\n\n")
	asked := r.events(KindAsked)
	if len(asked) == 0 {
		fmt.Fprintf(b, "Tick what they asked before coding (or found out by asking later):\n\n")
	} else {
		id, _, _ := strings.Cut(r.Kata, "-")
		fmt.Fprintf(b, "As ticked during the interview with `asked %s`:\n\n", escape.Inline(id))
	}
	answered := time.Time{}
	if as := r.events(KindAnswered); len(as) > 0 {
		answered = as[0].At
	}
	when := func(e Event) string {
		s := "at " + ClockText(e.At.Sub(r.Start))
		switch {
		case answered.IsZero():
		case e.At.Before(answered):
			s += ", before the decisions were shown"
		default:
			s += ", after the decisions were shown"
		}
		return s
	}
	for i, q := range r.Ask {
		j := slices.IndexFunc(asked, func(e Event) bool { return e.Question == i+1 })
		if j < 0 {
			fmt.Fprintf(b, "- [ ] %s\n", escape.Inline(q))
			continue
		}
		fmt.Fprintf(b, "- [x] %s (%s)\n", escape.Inline(q), when(asked[j]))
	}
	for _, e := range asked {
		if e.Question == 0 {
			fmt.Fprintf(b, "- [x] Also asked: %s (%s)\n", escape.Inline(e.Note), when(e))
		}
	}
}

// last is the grade the scorecard judges: the final repeated one, else
// the last of the session; nil when nothing was graded.
func (r *Record) last() *Grade {
	if r.Final != nil {
		return r.Final
	}
	gs := r.Grades()
	if len(gs) == 0 {
		return nil
	}
	return gs[len(gs)-1].Grade
}

// Flags are the facts that bear on whether the grade is the candidate's
// own work, in the words the scorecard puts them, then what the measures
// of the code find (a grade close to ref, the reference, when it is not
// nil; many lines or a jump to a pass in one save; a bug hunt with the
// reference on disk); none: nothing to flag.
func Flags(r *Record, ref Reference) []string {
	var flags []string
	if c := r.Chain(); c.Changed() {
		flags = append(flags, fmt.Sprintf("The record is not as the interview wrote it: %s. This scorecard shows it as it is now; regrade the candidate's files to know their score.", c))
	}
	if w := r.Witnessed; w != nil && len(w.Differences) > 0 {
		flags = append(flags, fmt.Sprintf("The record differs from its witness's copy (%s): trust the witness's copy, not this scorecard.", count(len(w.Differences), "difference")))
	}
	id, _, _ := strings.Cut(r.Kata, "-")
	var before []string
	for _, e := range r.Events {
		switch e.Kind {
		case KindGaveUp:
			if e.Via == "bughunt" {
				flags = append(flags, fmt.Sprintf("A bug hunt was planted with `bughunt %s` %s, before the kata was passed: apart from its mistake, that code is the reference solution.", id, r.when(e.At)))
			} else {
				flags = append(flags, fmt.Sprintf("Gave up with `solution %s --give-up` %s: the reference solution was shown.", id, r.when(e.At)))
			}
		case KindHuntGaveUp:
			if e.Via == "packed" {
				flags = append(flags, fmt.Sprintf("Gave up the bug hunt with `bughunt %s --give-up` %s (planted when the kit was packed: nothing was shown).", id, r.when(e.At)))
			} else {
				flags = append(flags, fmt.Sprintf("Gave up the bug hunt with `bughunt %s --give-up` %s: the planted change and its fix were shown.", id, r.when(e.At)))
			}
		case KindSolution:
			flags = append(flags, fmt.Sprintf("The reference solution was shown (`solution %s`) %s.", id, r.when(e.At)))
		case KindGrade:
			if e.Via == "plant" {
				flags = append(flags, fmt.Sprintf("A bug hunt was planted with `bughunt %s` %s: the grade then is of the planted code, not of a save of the candidate's.", id, r.when(e.At)))
			}
		case KindHint:
			if e.At.Before(r.Start) {
				before = append(before, fmt.Sprintf("hint %d at %s", e.Hint, e.At.Format(DateFormat)))
			}
		case KindStateChanged:
			flags = append(flags, fmt.Sprintf("The progress state (`.kata/state.json`) was %s during the interview, found at %s: a give-up or a hint recorded there may be hidden.", stateChangeText[e.Via], ClockText(e.At.Sub(r.Start))))
		case KindDecisions:
			if r.KeptBack && e.At.Before(r.answered()) {
				flags = append(flags, fmt.Sprintf("The decisions were read with `decisions %s` at %s, before the interview showed them.", id, e.At.Format(DateFormat)))
			}
		}
	}
	if len(before) > 0 {
		flags = append(flags, fmt.Sprintf("%s read before the interview began (%s); the interview's hints continue from there.", count(len(before), "hint"), strings.Join(before, ", ")))
	}
	switch r.StartCode {
	case StartChanged:
		what := ""
		if gs := r.Grades(); len(gs) > 0 {
			what = fmt.Sprintf(", graded at once: %s", score(gs[0].Grade))
		}
		flags = append(flags, fmt.Sprintf("Code was already written when the interview began (not the %s%s).", r.startName(true), what))
	case StartUnknown:
		flags = append(flags, fmt.Sprintf("Whether the code at the start was the %s is not known (no git history to compare with).", r.startName(true)))
	}
	if !r.Race {
		what := "a data race went unseen"
		if r.Final != nil {
			what += ", so the final grade is no pass"
		}
		flags = append(flags, fmt.Sprintf("The race check did not run (%s): %s. Regrade the final code where cgo works.", r.NoRace, what))
	}
	if r.Ending == Stopped {
		flags = append(flags, "Stopped with Ctrl-C: no final repeated grade was made; the last grade of the session stands.")
	}
	flags = append(flags, referenceFlags(r, ref)...)
	flags = append(flags, pasteFlags(r)...)
	flags = append(flags, jumpFlags(r)...)
	return append(flags, solutionsFlag(r)...)
}

// startName is what the candidate started from: the stub, or in a bug
// hunt the planted code; untouched says that it was not changed.
func (r *Record) startName(untouched bool) string {
	switch {
	case r.Hunt != nil && untouched:
		return "untouched planted code"
	case r.Hunt != nil:
		return "planted code"
	case untouched:
		return "untouched stub"
	}
	return "stub"
}

// writeFlags writes "Check first": the flags, or what was checked when
// there is none; compared: the code was measured against the reference.
func writeFlags(b *strings.Builder, r *Record, flags []string, compared bool) {
	if len(flags) == 0 {
		near := ""
		if compared {
			near = fmt.Sprintf(", no grade %d%% or more similar in tokens to the reference", tokensim.Percent(CloseToReference))
		}
		fmt.Fprintf(b, "**Check first:** nothing to flag (no give-up, no reference shown, no hint before the start, started from the %s, race check on, no save of %d lines or more, no jump from a third of the requirements to all%s).\n\n", r.startName(false), ManyLines, near)
	} else {
		fmt.Fprintf(b, "**Check first:**\n\n")
		for _, f := range flags {
			fmt.Fprintf(b, "- ⚠ %s\n", escape.Inline(f))
		}
		fmt.Fprintln(b)
	}
	if !compared && r.Hunt == nil && r.last() != nil {
		fmt.Fprintf(b, "The code was not compared with the reference: this copy has none (`checker scorecard RECORD` in a clone of the repository compares it).\n\n")
	}
}

func writeFacts(b *strings.Builder, r *Record, id string) {
	limit := time.Duration(r.Minutes) * time.Minute
	if r.Candidate != "" {
		fmt.Fprintf(b, "- **Candidate:** %s\n", escape.Inline(r.Candidate))
	}
	fmt.Fprintf(b, "- **Date:** %s\n", r.Start.Format(DateFormat))
	asked := "not answered"
	for _, e := range r.Events {
		if e.Kind == KindAnswered {
			asked = ClockText(e.At.Sub(r.Start))
		}
	}
	fmt.Fprintf(b, "- **Time used:** %s of %s (asking first: %s) · **ended:** %s\n",
		ClockText(min(r.End.Sub(r.Start), limit)), ClockText(limit), asked, endingText[r.Ending])
	if g := r.last(); g != nil {
		fmt.Fprintf(b, "- **Requirements passed:** %d of %d", g.Required, g.RequiredTotal)
		if g.BonusTotal > 0 {
			fmt.Fprintf(b, " · **bonus:** %d of %d", g.Bonus, g.BonusTotal)
		}
		if r.Final != nil {
			fmt.Fprintf(b, " (final grade: %s)", escape.Inline(runsText(r.Final)))
		} else {
			fmt.Fprintf(b, " (the last grade, one run)")
		}
		fmt.Fprintln(b)
	}
	var hints []string
	for _, e := range r.Events {
		if e.Kind == KindHint && !e.At.Before(r.Start) {
			hints = append(hints, fmt.Sprintf("hint %d at %s, %s", e.Hint, ClockText(e.At.Sub(r.Start)), viaText[e.Via]))
		}
	}
	fmt.Fprintf(b, "- **Hints used in the interview:** %d of %d", len(hints), r.Hints)
	if len(hints) > 0 {
		fmt.Fprintf(b, " (%s)", strings.Join(hints, "; "))
	}
	fmt.Fprintln(b)
	fmt.Fprintf(b, "- **Decisions read before the interview showed them:** %s\n", escape.Inline(decisionsEarly(r, id)))
	if h := r.Hunt; h != nil {
		fixed := "not fixed"
		if h.Fixed != nil {
			fixed = "fixed after " + ClockText(*h.Fixed)
		}
		if h.Mutant == "" { // planted when its kit was packed: the kit does not know
			fmt.Fprintf(b, "- **Bug hunt:** %s · planted when the kit was packed (the mistake and its fix: the answers file written beside the kit)\n  Bug report given: %s\n", fixed, escape.Inline(h.Symptom))
		} else {
			fmt.Fprintf(b, "- **Bug hunt:** %s · planted mistake (%s): %s\n  Bug report given: %s\n", fixed, escape.Code(h.Mutant), escape.Inline(h.Mistake), escape.Inline(h.Symptom))
		}
	}
	fmt.Fprintf(b, "- **Grades:** %s\n", gradesText(r))
	if g := r.last(); g != nil {
		fmt.Fprintf(b, "- **Fingerprints:** code %s · hidden tests %s\n", escape.Code(short(g.Fingerprint.Code)), escape.Code(short(g.Fingerprint.Tests)))
	}
}

var endingText = map[string]string{Done: "done typed", TimeUp: "time up", Stopped: "stopped with Ctrl-C"}

var viaText = map[string]string{"interview": "typed in the interview", "hint": "read with the hint verb, outside the interview's screen"}

// answered is when the decisions were shown; the end when they never were.
func (r *Record) answered() time.Time {
	for _, e := range r.Events {
		if e.Kind == KindAnswered {
			return e.At
		}
	}
	return r.End
}

// decisionsEarly says whether the candidate read the decisions before the
// interview revealed them.
func decisionsEarly(r *Record, id string) string {
	for _, e := range r.Events {
		if e.Kind == KindDecisions && e.At.Before(r.answered()) {
			return fmt.Sprintf("yes, with `decisions %s` (first at %s)", id, e.At.Format(DateFormat))
		}
	}
	if r.KeptBack {
		return "no"
	}
	return "not with `decisions`; in this copy the task README shows them too (an interview kit keeps them back)"
}

// gradesText counts the grades by what made them.
func gradesText(r *Record) string {
	n := map[string]int{}
	gs := r.Grades()
	for _, g := range gs {
		n[g.Via]++
	}
	var parts []string
	if n["start"] > 0 {
		parts = append(parts, "1 at the start")
	}
	if n["save"] > 0 {
		parts = append(parts, fmt.Sprintf("%s after saves", count(n["save"], "")))
	}
	if n["end"] > 0 {
		parts = append(parts, "1 of an edit not yet graded at the end")
	}
	if n["plant"] > 0 {
		parts = append(parts, fmt.Sprintf("%s of a bug hunt's planted code", count(n["plant"], "")))
	}
	s := fmt.Sprintf("%d", len(gs))
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if r.Final != nil {
		s += ", then the final grade"
	}
	return s
}

// runsText says how the final grade was run and how often it passed.
func runsText(g *Grade) string {
	if g.Runs <= 1 {
		return "one run"
	}
	s := fmt.Sprintf("%d runs", g.Runs)
	if g.CPU != "" {
		s = fmt.Sprintf("%d runs: %d × GOMAXPROCS %s", g.Runs, g.Runs/max(1, strings.Count(g.CPU, ",")+1), g.CPU)
	}
	every := 0
	for _, v := range g.Items {
		if v.Passed {
			every++
		}
	}
	return s + fmt.Sprintf(", %d of %d items passed every run", every, len(g.Items))
}

// score is a grade in a few words.
func score(g *Grade) string {
	switch {
	case len(g.Build) > 0:
		return "does not compile: " + g.Build[0]
	case len(g.Gate) > 0 && g.Required == 0:
		return "refused by the gate: " + g.Gate[0]
	}
	s := fmt.Sprintf("%d of %d", g.Required, g.RequiredTotal)
	var failing []string
	for _, v := range g.Items {
		if !v.Passed && !strings.HasPrefix(v.ID, "B") {
			failing = append(failing, v.ID)
		}
	}
	if len(failing) > 0 && len(failing) < g.RequiredTotal {
		s += " (" + strings.Join(failing, ", ") + " ✘)"
	}
	if len(g.Gate) > 0 {
		s += "; gate: " + g.Gate[0]
	}
	return s
}

// when says when a fact happened: before the interview (with its date) or
// at a time into it.
func (r *Record) when(t time.Time) string {
	if t.Before(r.Start) {
		return "before the interview, at " + t.Format(DateFormat)
	}
	return "during the interview, at " + ClockText(t.Sub(r.Start))
}

func writeTimeline(b *strings.Builder, r *Record) {
	fmt.Fprintf(b, "\n## Timeline\n\n| at | what |\n| --- | --- |\n")
	for _, e := range r.Events {
		at := ClockText(e.At.Sub(r.Start))
		if e.At.Before(r.Start) {
			at = e.At.Format("01-02 15:04")
		}
		fmt.Fprintf(b, "| %s | %s |\n", at, escape.Cell(eventText(r, e)))
	}
	spans := Spans(r)
	if len(spans) == 0 {
		return
	}
	fmt.Fprintf(b, "\nEach requirement from grade to grade (✔ passing, ✘ failing):\n\n")
	for _, s := range spans {
		fmt.Fprintf(b, "- %s\n", s)
	}
}

// eventText is an event in a few words.
func eventText(r *Record, e Event) string {
	id, _, _ := strings.Cut(r.Kata, "-")
	switch e.Kind {
	case KindStart:
		return "started: the story shown, the clock running"
	case KindAnswered:
		return "questions answered: the decisions shown"
	case KindGrade:
		if e.Via == "plant" {
			return fmt.Sprintf("a bug hunt planted with `bughunt %s`, not a save: %s", id, score(e.Grade))
		}
		return gradeVia[e.Via] + ": " + score(e.Grade)
	case KindHint:
		return fmt.Sprintf("hint %d of %d, %s", e.Hint, r.Hints, viaText[e.Via])
	case KindDecisions:
		return fmt.Sprintf("decisions read with `decisions %s`", id)
	case KindGaveUp:
		if e.Via == "bughunt" {
			return fmt.Sprintf("gave up: a bug hunt planted with `bughunt %s` before a pass", id)
		}
		return fmt.Sprintf("gave up: `solution %s --give-up`", id)
	case KindHuntGaveUp:
		return fmt.Sprintf("gave up the bug hunt: `bughunt %s --give-up`", id)
	case KindSolution:
		return fmt.Sprintf("the reference shown by `solution %s`", id)
	case KindNote:
		return "the interviewer noted: " + e.Note
	case KindAsked:
		if e.Question > 0 && e.Question <= len(r.Ask) {
			return fmt.Sprintf("the candidate asked Ask-first question %d: %s", e.Question, r.Ask[e.Question-1])
		}
		return "the candidate asked: " + e.Note
	case KindSave:
		return "saved, not graded: a later save came before its grade"
	case KindStateChanged:
		if e.Via == StateRemoved {
			return "progress state `.kata/state.json` found removed"
		}
		return "progress state `.kata/state.json` found rewritten"
	case KindEnd:
		return "ended: " + endingText[e.Via]
	case KindFinal:
		if r.Final != nil {
			return "final grade: " + score(r.Final) + "; " + runsText(r.Final)
		}
	}
	return e.Kind
}

var stateChangeText = map[string]string{
	StateRemoved:   "removed",
	StateRewritten: "rewritten (edited by hand, put back from a copy, or reset)",
}

var gradeVia = map[string]string{"start": "graded at the start", "save": "saved", "end": "graded the unsaved edit at the end"}

// Spans are each item's passing and failing spans over the session's
// grades, one line per item that was graded: "**R3** ✘ 0:39–1:02, ✔ from
// 1:02". A span ends where the next begins; the last runs to the end. A
// pass that later broke is named.
func Spans(r *Record) []string {
	gs := r.Grades()
	if len(gs) == 0 {
		return nil
	}
	var out []string
	for _, it := range r.Items {
		type span struct {
			passed bool
			from   time.Duration
		}
		var spans []span
		for _, g := range gs {
			passed, found := false, false
			for _, v := range g.Grade.Items {
				if v.ID == it.ID {
					passed, found = v.Passed, true
				}
			}
			if !found {
				continue
			}
			if len(spans) == 0 || spans[len(spans)-1].passed != passed {
				spans = append(spans, span{passed, g.At.Sub(r.Start)})
			}
		}
		if len(spans) == 0 {
			continue
		}
		var parts []string
		broke := false
		for i, s := range spans {
			mark := "✘"
			if s.passed {
				mark = "✔"
			} else if i > 0 {
				broke = true
			}
			if i == len(spans)-1 {
				parts = append(parts, fmt.Sprintf("%s from %s", mark, ClockText(s.from)))
			} else {
				parts = append(parts, fmt.Sprintf("%s %s–%s", mark, ClockText(s.from), ClockText(spans[i+1].from)))
			}
		}
		line := fmt.Sprintf("**%s** %s", escape.Inline(it.ID), strings.Join(parts, ", "))
		if broke {
			line += " (passed, then broke)"
		}
		out = append(out, line)
	}
	return out
}

// itemTable is the scorecard's table of the required or the bonus items
// under the final grade g.
func itemTable(b *strings.Builder, r *Record, g *Grade, title string, bonus bool) {
	fmt.Fprintf(b, "\n## %s\n\n| | | first passed at | runs passed | verdict |\n| --- | --- | --- | --- | --- |\n", title)
	first := firstPass(r)
	for _, it := range r.Items {
		if it.Bonus != bonus {
			continue
		}
		var v Verdict
		for _, x := range g.Items {
			if x.ID == it.ID {
				v = x
			}
		}
		mark, verdict := "✘", v.Kind
		if v.Passed {
			mark, verdict = "✔", "pass"
		} else if v.Message != "" {
			verdict += ": " + v.Message
		}
		when := ""
		if at, ok := first[it.ID]; ok {
			when = ClockText(at)
		}
		fmt.Fprintf(b, "| %s | **%s** %s | %s | %s | %s |\n", mark, escape.Cell(it.ID), escape.Cell(it.Text), when, runsCell(v, g), escape.Cell(verdict))
	}
}

// runsCell is how many runs of item v passed of those that finished, and,
// when fewer finished than g asked for, how many never ran: a run that
// hangs or crashes the test process ends the runs after it.
func runsCell(v Verdict, g *Grade) string {
	switch {
	case v.Runs > 0 && v.Runs < g.Runs:
		return fmt.Sprintf("%d of %d (%d more asked for never ran: a hang or a crash ends the runs)", v.Passes, v.Runs, g.Runs-v.Runs)
	case v.Runs > 0:
		return fmt.Sprintf("%d of %d", v.Passes, v.Runs)
	case g.Runs > 1 && runKinds[v.Kind]:
		return fmt.Sprintf("none of %d finished: a hang or a crash ends the runs", g.Runs)
	}
	return ""
}

// runKinds are the verdicts of code that ran: the others (not built,
// refused, not run) had no runs to count.
var runKinds = map[string]bool{}

func init() {
	for _, k := range []failure.Kind{failure.Assertion, failure.Panic, failure.Race, failure.Leak, failure.Deadlock,
		failure.MutexHang, failure.Timeout, failure.RealClock, failure.Exit, failure.Unproven} {
		runKinds[string(k)] = true
	}
}

// firstPass is when each item first passed in a grade of the session.
func firstPass(r *Record) map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, g := range r.Grades() {
		for _, v := range g.Grade.Items {
			if _, seen := m[v.ID]; v.Passed && !seen {
				m[v.ID] = g.At.Sub(r.Start)
			}
		}
	}
	return m
}

func writeCode(b *strings.Builder, r *Record, g *Grade) {
	fmt.Fprintf(b, "\n## Final code\n\n")
	var names []string
	for n := range g.Code {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(b, "Files: %s · fingerprint %s (the full code is in the record's JSON).\n\n", escape.Inline(strings.Join(names, ", ")), escape.Code(g.Fingerprint.Code))
	switch {
	case r.Diff != "":
		fmt.Fprintf(b, "Its diff from the %s:\n\n%s", r.startName(false), escape.Block(r.Diff, "diff"))
	case r.StartCode == StartUnknown:
		fmt.Fprintf(b, "Its diff from the %s is not known: no git history to read it from.\n", r.startName(false))
	default:
		fmt.Fprintf(b, "It is the %s.\n", r.startName(true))
	}
}

// ClockText shows a duration as m:ss, never negative.
func ClockText(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// count is "1 hint", "2 hints"; with an empty noun, the number alone.
func count(n int, noun string) string {
	switch {
	case noun == "":
		return fmt.Sprint(n)
	case n == 1:
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// short is the start of a fingerprint, enough to compare by eye.
func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	if fp == "" {
		return "unknown"
	}
	return fp
}
