package session

import (
	"context"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// Status is where a learner stands on one kata: the code in its exercise
// as last graded, how the kata passed (alone, or after its solution was
// shown), its bug hunts and the last catch score of the learner's own
// tests. list and the summary of a check both show it.
type Status struct {
	Kata catalog.Kata
	// The code in the exercise, as last graded.
	Graded    bool
	Passed    bool // the last grade passed
	Stale     bool // the files changed since that grade
	Untouched bool // graded, but still the untouched stub
	NoBuild   bool // graded, but it did not build
	Grade     state.Grade
	// What the learner earned.
	Pass         state.Pass // how the kata passed since its last reset
	GaveUp       bool       // the solution was shown before any pass
	PassedBefore state.Pass // how it passed before its last reset
	// Bug hunts.
	Solved  int          // bug hunts solved
	GivenUp int          // bug hunts given up: the answer was shown
	Hunting bool         // a bug hunt is under way
	Catch   *state.Catch // nil: catch never ran
}

// Own reports whether the last grade is one of the learner's own code:
// not the untouched stub, and not a bug hunt's planted code.
func (st Status) Own() bool {
	return st.Graded && !st.Untouched && !st.Grade.Hunt && !st.Hunting
}

// Done reports whether the kata passed since its last reset, alone or
// after its solution was shown.
func (st Status) Done() bool { return st.Pass != state.NotPassed }

// List is every kata's status, in order.
func (c *Checkout) List(cat *catalog.Catalog) []Status {
	s := c.progress()
	var out []Status
	for _, k := range cat.Katas {
		p := s.Kata(k.Slug)
		out = append(out, standing(k, p, p.Last))
	}
	return out
}

// standing is the one place a status is made: kata k's progress p, and
// g, the last grade of its code (nil for none).
func standing(k catalog.Kata, p *state.Kata, g *state.Grade) Status {
	st := Status{
		Kata: k, Pass: p.Pass(), GaveUp: p.GaveUp, PassedBefore: p.PassedBeforeReset,
		Solved: p.HuntsSolved(), GivenUp: p.HuntsGivenUp(), Hunting: p.Hunt() != nil, Catch: p.Catch,
	}
	if g == nil {
		return st
	}
	st.Graded, st.Passed, st.Grade = true, g.Passed, *g
	st.NoBuild, st.Untouched = g.NoBuild, g.Stub && !g.Passed
	if fp, err := state.Fingerprint(k.Exercise); err == nil && fp != g.Fingerprint {
		st.Stale = true
	}
	return st
}

// Next is where a learner goes next: the first kata of list (in order)
// that has not passed since its last reset; ok is false when every kata
// has.
func Next(list []Status) (k catalog.Kata, ok bool) {
	for _, st := range list {
		if !st.Done() {
			return st.Kata, true
		}
	}
	return catalog.Kata{}, false
}

// StatusOf is the status of a kata from grade r, just made, as list
// shows it: the grade as recorded in the state file, which knows whether
// it graded the stub or a bug hunt's code. A grade that could not be
// recorded is read from r, the stub told from git history.
func (c *Checkout) StatusOf(ctx context.Context, r *grade.Result) Status {
	p := c.progress().Kata(r.Kata.Slug)
	req, total, bonus, btotal := r.Score()
	g := &state.Grade{Passed: r.Passed(), Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal,
		Runs: r.Runs, NoBuild: r.Build != nil}
	if l := p.Last; l != nil && l.Passed == g.Passed && l.NoBuild == g.NoBuild &&
		l.Required == g.Required && l.RequiredTotal == g.RequiredTotal && l.Bonus == g.Bonus {
		g = l
	} else {
		g.Stub = untouchedStub(ctx, r, c.Vars)
		if fp, err := state.Fingerprint(r.Kata.Exercise); err == nil {
			g.Fingerprint = fp
		}
	}
	return standing(r.Kata, p, g)
}

// Watched is the kata a watch starts with when none is named: the first
// one whose last grade did not pass, else the first (NextKata). ok is
// false when there are no katas.
func (c *Checkout) Watched(cat *catalog.Catalog) (catalog.Kata, bool) {
	return NextKata(cat, c.progress(), "")
}
