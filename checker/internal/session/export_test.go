package session

import (
	"context"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/record"
	"gokata/checker/internal/state"
)

// FakeGrades makes g grade with f instead of building and running the
// hidden tests.
func FakeGrades(g *Grader, f func(ctx context.Context, k catalog.Kata) *grade.Result) {
	g.gradeFunc = func(ctx context.Context, k catalog.Kata, _ grade.Options) (*grade.Result, error) {
		return f(ctx, k), nil
	}
}

// FakeGradesWith is FakeGrades for a fake that sees the grade's options
// (the final grade's repeats).
func FakeGradesWith(g *Grader, f func(ctx context.Context, k catalog.Kata, opt grade.Options) *grade.Result) {
	g.gradeFunc = func(ctx context.Context, k catalog.Kata, opt grade.Options) (*grade.Result, error) {
		return f(ctx, k, opt), nil
	}
}

// PlantedDuring reports, for each grade of gs in turn, whether an
// interview of kata k that planted hunt itself (nil: none) takes it for
// the grade of a bug hunt planted during the session (plantedNow).
func PlantedDuring(k catalog.Kata, hunt *Planted, gs ...Graded) []bool {
	r := &interviewer{InterviewRun: InterviewRun{Kata: k}, iv: &Interview{Hunt: hunt}}
	var out []bool
	for _, g := range gs {
		out = append(out, r.plantedNow(g))
	}
	return out
}

// MergedEvents is mergedEvents: interview iv's events with the facts of
// the state file's progress p.
func MergedEvents(iv *Interview, p *state.Kata) []record.Event {
	return mergedEvents(iv, StateFacts(p))
}
