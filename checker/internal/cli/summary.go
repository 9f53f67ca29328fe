package cli

import (
	"context"
	"fmt"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/state"
)

// summary ends a check of several katas, below their full reports: one
// line per kata (passed, k of n, bonus, not started, did not build) and
// the next step, as list gives it.
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
	fmt.Fprintf(w, "\nSummary: %d of %d passed\n", passed, len(results))
	for _, r := range results {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.Kata.Slug, resultStatus(ctx, env, r).text(style))
	}
	fmt.Fprintln(w, nextStep(cat, progress(cat.Root, env)))
}

// resultStatus is the status of a kata from the grade just made. The
// untouched stub is "not started" whatever it scores (07's stub passes
// some requirements).
func resultStatus(ctx context.Context, env Env, r *grade.Result) status {
	req, total, bonus, btotal := r.Score()
	return status{
		graded:    true,
		passed:    r.Passed(),
		noBuild:   r.Build != nil,
		untouched: r.Build == nil && !r.Passed() && checkout(env.Dir, env).Untouched(ctx, r.Kata),
		g:         state.Grade{Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal},
	}
}
