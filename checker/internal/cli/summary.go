package cli

import (
	"context"
	"fmt"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
)

// summary ends a check of several katas, below their full reports: one
// line per kata with its status as list shows it (the same text, from
// the same record) and the next step, as list gives it.
func summary(ctx context.Context, cat *catalog.Catalog, results []*grade.Result, style report.Style, env Env) {
	w := env.Stdout
	width := 0
	for _, r := range results {
		width = max(width, utf8.RuneCountInString(r.Kata.Slug))
	}
	passed := 0
	for _, r := range results {
		if r.Passed() {
			passed++
		}
	}
	co := checkout(cat.Root, env)
	fmt.Fprintf(w, "\nSummary: %d of %d passed\n", passed, len(results))
	for _, r := range results {
		st := co.StatusOf(ctx, r)
		fmt.Fprintf(w, "  %-*s  %s%s\n", width, r.Kata.Slug, statusText(st, style), hunts(st)+catchScore(st))
	}
	fmt.Fprintln(w, nextStep(co.List(cat)))
}
