package session

import (
	"context"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// Status is where a learner stands on one kata: its last grade, its bug
// hunts and the last catch score of the learner's own tests.
type Status struct {
	Kata      catalog.Kata
	Graded    bool
	Passed    bool
	Stale     bool // the files changed since that grade
	Untouched bool // graded, but still the untouched stub
	NoBuild   bool // graded, but it did not build
	Grade     state.Grade
	Solved    int          // bug hunts solved
	Hunting   bool         // a bug hunt is under way
	Catch     *state.Catch // nil: catch never ran
}

// List is every kata's status, in order.
func (c *Checkout) List(cat *catalog.Catalog) []Status {
	s := c.progress()
	var out []Status
	for _, k := range cat.Katas {
		p := s.Kata(k.Slug)
		st := statusOf(k, s)
		st.Solved, st.Hunting, st.Catch = p.HuntsSolved(), p.Hunt() != nil, p.Catch
		out = append(out, st)
	}
	return out
}

func statusOf(k catalog.Kata, s *state.State) Status {
	last := s.Kata(k.Slug).Last
	if last == nil {
		return Status{Kata: k}
	}
	st := Status{Kata: k, Graded: true, Passed: last.Passed, Grade: *last}
	if fp, err := state.Fingerprint(k.Exercise); err == nil && fp != last.Fingerprint {
		st.Stale = true
	}
	return st
}

// Next is where a learner goes next: the first kata of list (in order)
// whose last grade did not pass; ok is false when every kata passes.
func Next(list []Status) (k catalog.Kata, ok bool) {
	for _, st := range list {
		if !st.Passed {
			return st.Kata, true
		}
	}
	return catalog.Kata{}, false
}

// StatusOf is the status of a kata from grade r, just made. The untouched
// stub is Untouched whatever it scores (07's stub passes some
// requirements).
func (c *Checkout) StatusOf(ctx context.Context, r *grade.Result) Status {
	req, total, bonus, btotal := r.Score()
	return Status{
		Kata:      r.Kata,
		Graded:    true,
		Passed:    r.Passed(),
		NoBuild:   r.Build != nil,
		Untouched: r.Build == nil && !r.Passed() && c.Untouched(ctx, r.Kata),
		Grade:     state.Grade{Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal},
	}
}

// Watched is the kata a watch starts with when none is named: the first
// one whose last grade did not pass, else the first (NextKata). ok is
// false when there are no katas.
func (c *Checkout) Watched(cat *catalog.Catalog) (catalog.Kata, bool) {
	return NextKata(cat, c.progress(), "")
}
