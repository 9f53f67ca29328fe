package session

import (
	"context"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
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
