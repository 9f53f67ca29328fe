package report

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catch"
)

// Catch writes a catch report for a person: what the gate found in the
// tests, the false alarms on the reference, each mutant caught (with its
// mistake) or missed (with only its symptom, a hint of what to test
// next), and the score.
func Catch(w io.Writer, r *catch.Report, s Style) {
	k := r.Kata
	fmt.Fprintf(w, "%s · catch · your tests against the reference and %s\n", k.Slug, plural(r.Known, "known mistake"))
	if !r.Race && r.NoRace != "" {
		fmt.Fprintf(w, "\n%s\n", s.dim("run without the race detector: "+r.NoRace))
	}
	catchRefusals(w, r, s)
	if !r.Ran() {
		fmt.Fprintf(w, "\nNot run. Next: fix the lines above, then make catch EX=%s again.\n", k.ID())
		return
	}
	if r.Runs > 1 {
		fmt.Fprintf(w, "\nEach of your %d tests ran %d times, shuffled, on every version: a test must give the same answer every time.\n", len(r.Tests), r.Runs)
	}
	catchAlarms(w, r, s)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "\nSkipped: these tests catch nothing\n")
	}
	for _, t := range r.Skipped {
		fmt.Fprintf(w, "  %s %s\n", s.none(), t)
	}
	var caught, missed []catch.Verdict
	for _, v := range r.Mutants {
		if v.Caught {
			caught = append(caught, v)
		} else {
			missed = append(missed, v)
		}
	}
	catchCaught(w, caught, s)
	catchMissed(w, missed, r.Runs, s)
	fmt.Fprintf(w, "\ncaught %d of %d, false alarms %d\n", r.Caught(), len(r.Mutants), len(r.Alarms))
	fmt.Fprintf(w, "Next: %s\n", catchNext(r))
}

// catchRefusals writes why the tests could not run: what the gate found
// in them, and their compiler errors.
func catchRefusals(w io.Writer, r *catch.Report, s Style) {
	if len(r.Gate) > 0 || r.Build != nil {
		fmt.Fprintln(w)
	}
	if len(r.Gate) > 0 {
		fmt.Fprintf(w, "  %s gate: your tests use what the grader does not allow\n", s.bad())
		allowed := ""
		for _, f := range r.Gate {
			fmt.Fprintf(w, "      %s\n", f)
			allowed = cmp.Or(allowed, f.Allowed)
		}
		if allowed != "" {
			fmt.Fprintf(w, "      %s\n", s.dim(allowed))
		}
	}
	if r.Build != nil {
		fmt.Fprintf(w, "  %s your tests do not compile\n", s.bad())
		for _, l := range r.Build.Lines {
			fmt.Fprintf(w, "      %s\n", l)
		}
	}
}

// catchAlarms writes the tests that fail on the reference, each with why.
func catchAlarms(w io.Writer, r *catch.Report, s Style) {
	if len(r.Alarms) == 0 {
		return
	}
	fmt.Fprintf(w, "\nFalse alarms: these tests fail on the correct code\n")
	for _, a := range r.Alarms {
		msg := a.Message
		if l := kindLabel[a.Kind]; l != "" && !strings.HasPrefix(msg, l) {
			msg = l + ": " + msg
		}
		if a.Flaky {
			fmt.Fprintf(w, "  %s %s is flaky: it passed some runs and failed others\n", s.bad(), a.Test)
		} else {
			fmt.Fprintf(w, "  %s %s\n", s.bad(), a.Test)
		}
		fmt.Fprintf(w, "        %s\n", msg)
		for _, d := range a.Detail {
			fmt.Fprintf(w, "        %s\n", s.dim(d))
		}
	}
}

// catchCaught writes the mutants the tests caught: the mistake each made,
// and the tests that caught it.
func catchCaught(w io.Writer, caught []catch.Verdict, s Style) {
	if len(caught) == 0 {
		return
	}
	fmt.Fprintf(w, "\nCaught: the mistake each one made\n")
	for _, v := range caught {
		fmt.Fprintf(w, "  %s %s\n", s.ok(), v.Mistake)
		fmt.Fprintf(w, "        %s\n", s.dim("by "+names(v.By)))
	}
}

// catchMissed writes the mutants the tests missed: only the symptom of
// each, and why it was missed when the tests could not judge it.
func catchMissed(w io.Writer, missed []catch.Verdict, runs int, s Style) {
	if len(missed) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNot caught: what a user of such code would notice; write a test for it\n")
	for _, v := range missed {
		fmt.Fprintf(w, "  %s %s\n", s.bad(), symptom(v))
		switch {
		case v.NoBuild:
			fmt.Fprintf(w, "        %s\n", s.dim("your tests do not compile against this version: they use something of the reference's that it changes"))
		case v.Stale:
			fmt.Fprintf(w, "        %s\n", s.dim("this mutant no longer applies to the reference"+bundle.KitOr("", " (make verify says more)")))
		case len(v.Sometimes) > 0:
			fmt.Fprintf(w, "        %s\n", fmt.Sprintf("%s failed on it in only some of %d runs: luck, not a catch; make the test deterministic", strings.Join(v.Sometimes, ", "), runs))
		}
	}
}

// symptom is what a missed mutant shows: its bug report, or where the
// hidden tests catch it when it has none.
func symptom(v catch.Verdict) string {
	if v.Symptom != "" {
		return v.Symptom
	}
	return fmt.Sprintf("not caught (a mistake in %s)", strings.Join(v.Fails, " "))
}

func catchNext(r *catch.Report) string {
	switch {
	case len(r.Alarms) > 0:
		return "fix the false alarms first: a test that fails on correct code proves nothing about the mistakes."
	case r.Passed():
		return "every mistake caught, no false alarm: your tests would have stopped each of them."
	}
	return "pick a symptom above, write a test that fails on it and passes on correct code, then make catch EX=" + r.Kata.ID() + " again."
}

// names lists tests, the first three by name.
func names(ts []string) string {
	if len(ts) <= 3 {
		return strings.Join(ts, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ts[:3], ", "), len(ts)-3)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
