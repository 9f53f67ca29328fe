package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gokata/checker/internal/tokensim"
)

// The measures of how the code came about that "Check first" flags, on
// top of the facts the record states (Flags): code close to the reference,
// many lines in one save, a large jump in the score, and a bug hunt run
// where the reference was on disk.

// CloseToReference is the token similarity (tokensim.Similarity) to the
// reference from which a grade's code is flagged. Measured on the
// repository (TestAlternativesAreNotCloseToTheReference): the untouched
// stubs are at most 41% similar to their reference (kata 07's, a working
// cache that freezes; the others 8% to 26%); the 60 correct alternatives
// and versions on libraries in solutions/*/testdata at most 89%, all but
// four at most 45% (08's rwcheck at 89% and 10's semaphore at 87% are the
// reference with one mechanism swapped; 10's conc and twoconds 69% and
// 60%); the reference with one planted mistake (its 363 mutants) is 95%
// similar at the median, and three in four reach 90%.
const CloseToReference = 0.90

// ManyLines is how many lines a grade's code must add to the code graded
// before it (Added) for the grade to be flagged. Pasting a reference over its stub adds
// 74 (kata 01) to 236 (kata 08) lines, so every paste of a whole
// reference, and of half of most, reaches it; the longest function of a
// reference has 20 to 56 lines of code, so writing one long function
// between two saves can reach it too: the scorecard gives the figure, for
// the interviewer to ask about.
const ManyLines = 40

// Reference is the kata's reference solution (file name → content) that
// the scorecard compares the code with; nil when there is none where the
// scorecard is rendered (a candidate kit).
type Reference map[string]string

// compared reports whether the scorecard compares r's code with ref: a
// bug hunt starts from the reference with one mistake, so closeness to it
// says nothing there.
func compared(r *Record, ref Reference) bool {
	return len(ref) > 0 && r.Hunt == nil
}

// referenceFlags says which saved code is CloseToReference: the first
// such grade or save of the session, and the final code.
func referenceFlags(r *Record, ref Reference) []string {
	if !compared(r, ref) {
		return nil
	}
	want := tokensim.Tokens(ref)
	near := func(code map[string]string) (float64, string) {
		got := tokensim.Tokens(code)
		s := tokensim.Similarity(got, want)
		if slices.Equal(got, want) {
			return s, "100% identical"
		}
		return s, fmt.Sprintf("%d%% similar", min(tokensim.Percent(s), 99))
	}
	where := fmt.Sprintf(" in tokens to the reference (solutions/%s/)", r.Kata)
	var first *Event
	var firstSays string
	for _, e := range r.Saves() {
		if e.Via == "plant" {
			continue
		}
		if s, says := near(e.SavedCode()); s >= CloseToReference {
			first, firstSays = &e, says
			break
		}
	}
	final := r.last()
	if final == nil {
		return nil
	}
	s, says := near(final.Code)
	switch {
	case s >= CloseToReference && first != nil && maps.Equal(first.SavedCode(), final.Code):
		return []string{fmt.Sprintf("The final code, first %s, is %s%s.", r.gradedWhen(*first), says, where)}
	case s >= CloseToReference && first != nil:
		return []string{
			fmt.Sprintf("%s is %s%s, the first grade at %d%% or more.", capital(r.gradeName(*first)), firstSays, where, tokensim.Percent(CloseToReference)),
			fmt.Sprintf("The final code is %s%s.", says, where),
		}
	case s >= CloseToReference:
		return []string{fmt.Sprintf("The final code is %s%s.", says, where)}
	case first != nil:
		return []string{fmt.Sprintf("%s is %s%s (the final code: %d%%).", capital(r.gradeName(*first)), firstSays, where, tokensim.Percent(s))}
	}
	return nil
}

// pasteFlags names each grade or save whose code added ManyLines lines or
// more to the code saved before it (Added); the first is compared with the
// code the interview started from, when the record has it. A bug hunt
// planted during the session is not the candidate's: its grade is only
// what the next one is compared with.
func pasteFlags(r *Record) []string {
	var flags []string
	prev := r.StartFiles // nil: not in the record, and the first grade is not compared
	var before *Event
	for _, e := range r.Saves() {
		if prev != nil && e.Via != "plant" {
			if n := Added(prev, e.SavedCode()); n >= ManyLines {
				flags = append(flags, r.pasteText(e, n, before))
			}
		}
		prev, before = e.SavedCode(), &e
	}
	return flags
}

// pasteText is the flag of grade or save e, which added n lines to the
// code of before (nil: the code the interview started from).
func (r *Record) pasteText(e Event, n int, before *Event) string {
	if before == nil {
		return fmt.Sprintf("%s has %d lines more than the %s.", capital(r.gradeName(e)), n, r.startName(false))
	}
	what := "grade"
	if before.Kind == KindSave {
		what = "save"
	}
	return fmt.Sprintf("%s added %d lines at once (since the %s at %s).", capital(r.gradeName(e)), n, what, ClockText(before.At.Sub(r.Start)))
}

// Added counts the lines of the code now that the code before did not
// have: non-blank lines, with their leading and trailing space trimmed,
// counted as a multiset, so that moving or re-indenting lines adds none
// and a line written twice counts twice. It takes time linear in the
// code's size.
func Added(before, now map[string]string) int {
	have := map[string]int{}
	for _, c := range before {
		for _, l := range strings.Split(c, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				have[l]++
			}
		}
	}
	n := 0
	for _, c := range now {
		for _, l := range strings.Split(c, "\n") {
			l = strings.TrimSpace(l)
			switch {
			case l == "":
			case have[l] > 0:
				have[l]--
			default:
				n++
			}
		}
	}
	return n
}

// jumpFlags names each grade that went from at most a third of the
// requirements passing to all of them (Jumped), compared with the grade
// before that compiled: a save that does not compile measures nothing. A
// bug hunt planted during the session is not the candidate's: its grade
// is only what the next one is compared with.
func jumpFlags(r *Record) []string {
	var flags []string
	var prev *Event
	between := false // a grade that measured nothing since prev
	for _, e := range r.Grades() {
		if !measured(e.Grade) {
			between = true
			continue
		}
		if prev != nil && e.Via != "plant" && Jumped(prev.Grade, e.Grade) {
			from := fmt.Sprintf("%d of %d", prev.Grade.Required, prev.Grade.RequiredTotal)
			if between {
				from += fmt.Sprintf(" (at %s; the grades between did not compile)", ClockText(prev.At.Sub(r.Start)))
			}
			flags = append(flags, fmt.Sprintf("%s went from %s to %d of %d requirements.", capital(r.gradeName(e)), from, e.Grade.Required, e.Grade.RequiredTotal))
		}
		prev, between = &e, false
	}
	return flags
}

// Jumped reports whether the score went from at most a third of the
// requirements passing before to all of them now.
func Jumped(before, now *Grade) bool {
	total := now.RequiredTotal
	return total > 0 && now.Required == total && before.RequiredTotal == total && 3*before.Required <= total
}

// measured reports whether g says how many requirements pass: it
// compiled, and the gate did not refuse it.
func measured(g *Grade) bool {
	return len(g.Build) == 0 && !(len(g.Gate) > 0 && g.Required == 0)
}

// solutionsFlag is the flag of a bug hunt run in a clone of the
// repository, where solutions/ holds the reference the mistake was
// planted in.
func solutionsFlag(r *Record) []string {
	if r.Hunt == nil || r.Copy != CopyRepository {
		return nil
	}
	return []string{fmt.Sprintf("The bug hunt ran in a clone of the repository: solutions/ was on disk and readable, so the planted mistake's fix could be read there (solutions/%s/).", r.Kata)}
}

// gradeName names grade e for a flag: "the save at 12:34", "the code
// graded at the start (0:41)", "the unsaved edit graded at the end
// (14:58)".
func (r *Record) gradeName(e Event) string {
	at := ClockText(e.At.Sub(r.Start))
	switch e.Via {
	case "start":
		return fmt.Sprintf("the code graded at the start (%s)", at)
	case "end":
		return fmt.Sprintf("the unsaved edit graded at the end (%s)", at)
	}
	return "the save at " + at
}

// gradedWhen says when grade e was made, after "first": "saved at
// 12:34", "graded at the start (0:41)", "graded unsaved at the end
// (14:58)".
func (r *Record) gradedWhen(e Event) string {
	at := ClockText(e.At.Sub(r.Start))
	switch e.Via {
	case "start":
		return fmt.Sprintf("graded at the start (%s)", at)
	case "end":
		return fmt.Sprintf("graded unsaved at the end (%s)", at)
	}
	return "saved at " + at
}

// capital is s with its first letter in upper case (s is ASCII).
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
