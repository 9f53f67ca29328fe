package catch

import (
	"slices"
	"strings"

	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
)

// Outcome is how one test went on one version of the code, over all its
// runs.
type Outcome string

const (
	Pass  Outcome = "pass"  // passed every run
	Fail  Outcome = "fail"  // failed (or crashed, or hung) and never passed
	Flaky Outcome = "flaky" // passed some runs and failed others
	Skip  Outcome = "skip"  // skipped itself in every run
)

// OutcomeOf reads a test's verdict and its per-run results.
func OutcomeOf(t grade.TestResult) Outcome {
	switch {
	case t.Passed():
		return Pass
	case len(t.Results) > 0 && !slices.ContainsFunc(t.Results, func(r string) bool { return r != "skip" }):
		return Skip
	case slices.Contains(t.Results, "pass"):
		return Flaky
	}
	return Fail
}

// Alarm is a test that does not pass on the reference, which is correct:
// a false alarm, flaky or not.
type Alarm struct {
	Test  string
	Flaky bool // it passed some runs
	grade.Verdict
}

// Alarms reads the reference's result: the tests that did not pass there
// (false alarms), the tests that skipped themselves, and the tests that
// passed every run, the only ones whose failures on a mutant count.
func Alarms(ref *grade.Result) (alarms []Alarm, skipped []string, trusted map[string]bool) {
	trusted = map[string]bool{}
	for _, t := range ref.Tests {
		switch o := OutcomeOf(t); o {
		case Pass:
			trusted[t.Name] = true
		case Skip:
			skipped = append(skipped, t.Name)
		default:
			alarms = append(alarms, Alarm{Test: t.Name, Flaky: o == Flaky, Verdict: t.Verdict})
		}
	}
	return alarms, skipped, trusted
}

// Verdict is what the tests did to one mutant.
type Verdict struct {
	Name    string
	Mistake string   // the header's Mistake: line, shown once caught
	Symptom string   // the header's Symptom: line, a hint while missed ("" if it has none)
	Fails   []string // the requirements the hidden tests fail on it
	Caught  bool     // a test that passes on the reference failed on it in every run
	By      []string // those tests
	// Sometimes lists the trusted tests that failed on it in some runs
	// only: luck, not a catch.
	Sometimes []string
	How       grade.Verdict // how the first test in By failed
	// NoBuild: the tests did not compile against it (they use something
	// of the reference's that it changed).
	NoBuild bool
	// Stale: its patch no longer applies to the reference (verify says so).
	Stale bool
}

// Judge reads mutant m's result r under the trusted tests (Alarms).
func Judge(m *mutant.Mutant, trusted map[string]bool, r *grade.Result) Verdict {
	v := header(m)
	if r.Build != nil {
		v.NoBuild = true
		return v
	}
	for _, t := range r.Tests {
		if !trusted[t.Name] {
			continue
		}
		switch OutcomeOf(t) {
		case Fail:
			if len(v.By) == 0 {
				v.How = t.Verdict
			}
			v.By = append(v.By, t.Name)
		case Flaky:
			v.Sometimes = append(v.Sometimes, t.Name)
		}
	}
	v.Caught = len(v.By) > 0
	return v
}

// header reads what a mutant's header says of it.
func header(m *mutant.Mutant) Verdict {
	h := m.Fields()
	return Verdict{Name: m.Name, Mistake: h["Mistake"], Symptom: h["Symptom"], Fails: strings.Fields(h["Fails"])}
}
