package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/integrity"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/state"
)

// gradeLearner grades the learner's code for kata k and records the grade
// in the state file. A build that takes long (the first one on a machine)
// shows a progress line on stderr. The fingerprint is taken before grading, so a file
// saved while the grade runs makes the recorded grade stale, not wrong.
// A state file that cannot be written costs a warning, never the grade.
func gradeLearner(ctx context.Context, tc *grade.Toolchain, root string, k catalog.Kata, opt grade.Options, env Env) (*grade.Result, error) {
	if tc.Kit == nil { // a kit grades with its own copies
		if err := asCommitted(ctx, root, k, env); err != nil {
			return nil, err
		}
	}
	fp, fpErr := state.Fingerprint(k.Exercise)
	t, err := grade.Learner(k)
	if err != nil {
		return nil, err
	}
	opt.Building = func() func() { return buildNotice(env, k, tc.Race).start() }
	r, err := grade.Grade(ctx, tc, root, t, opt)
	if err != nil {
		return nil, err
	}
	r.Untouched = stubPassesOnly(ctx, r, env)
	if fpErr == nil {
		req, total, bonus, btotal := r.Score()
		fpErr = state.Update(root, func(s *state.State) error {
			s.Record(k.Slug, state.Grade{Fingerprint: fp, Passed: r.Passed(),
				Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal, Runs: r.Runs})
			return nil
		})
	}
	if fpErr != nil {
		fmt.Fprintf(env.Stderr, "checker: progress not saved: %v\n", fpErr)
	}
	return r, nil
}

// stubPassesOnly reports whether r passed some item, only declared stub
// passes, and the code is the untouched stub: then the report says why
// those pass. Anything else passing means the learner wrote code, so git
// is asked only when it can matter.
func stubPassesOnly(ctx context.Context, r *grade.Result, env Env) bool {
	declared := map[string]bool{}
	for _, p := range r.Kata.StubPasses {
		declared[p.ID] = true
	}
	some := false
	for _, it := range r.Items {
		if it.Passed() && !declared[it.ID] {
			return false
		}
		some = some || it.Passed()
	}
	if !some {
		return false
	}
	untouched, err := pristine.Untouched(ctx, env.Vars, r.Kata)
	return err == nil && untouched
}

// asCommitted refuses to grade a learner when the grader's own files (the
// harness, go.mod, go.sum, the kata's hidden tests and reveal.json) differ
// from what is committed: grading with them would not be grading.
// Maintainers grade the working tree with verify. Without git history
// there is nothing to compare with; the check after every run still
// applies.
func asCommitted(ctx context.Context, root string, k catalog.Kata, env Env) error {
	paths := []string{"internal", "go.mod", "go.sum"}
	if sol := rel(root, k.Solution); !filepath.IsAbs(sol) { // in the checkout, as in the repository
		paths = append(paths, filepath.ToSlash(sol)+"/*_test.go", filepath.ToSlash(sol)+"/"+catalog.RevealFile)
	}
	if ex := rel(root, k.Exercise); !filepath.IsAbs(ex) {
		paths = append(paths, filepath.ToSlash(ex)+"/kata.json") // its "imports" widen the gate
	}
	return committed(ctx, root, env, paths, "not graded",
		fmt.Sprintf("%s is graded only with the harness (internal/), go.mod, go.sum and hidden tests as committed", k.Slug))
}

// revealAsCommitted refuses to show a kata's hints or decisions when its
// reveal.json differs from what is committed: like the hidden tests, it is
// the grader's file. A kit's come from its checker.
func revealAsCommitted(ctx context.Context, root string, k catalog.Kata, env Env) error {
	sol := rel(root, k.Solution)
	if filepath.IsAbs(sol) {
		return nil
	}
	return committed(ctx, root, env, []string{filepath.ToSlash(sol) + "/" + catalog.RevealFile}, "not shown",
		fmt.Sprintf("the hints and decisions of %s are shown only as committed", k.Slug))
}

// committed returns a usage error, "refused: the grader's own files were
// changed, and why:" and the files, when any file under paths (relative
// to root) differs from its committed version.
func committed(ctx context.Context, root string, env Env, paths []string, refused, why string) error {
	changed, ok, err := integrity.Uncommitted(ctx, env.Vars, root, paths)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &usageError{fmt.Sprintf("%s: cannot compare the grader's files with git: %v", refused, err), "git status"}
	}
	if !ok || len(changed) == 0 {
		return nil
	}
	var lines, restore, remove []string
	for _, c := range changed {
		if c.New {
			lines = append(lines, "  "+c.Path+" (not committed)")
			remove = append(remove, c.Path)
		} else {
			lines = append(lines, "  "+c.Path+" (differs from the committed version)")
			restore = append(restore, c.Path)
		}
	}
	var try []string
	if len(restore) > 0 {
		try = append(try, "git checkout HEAD -- "+strings.Join(restore, " "))
	}
	if len(remove) > 0 {
		try = append(try, "rm "+strings.Join(remove, " "))
	}
	return &usageError{fmt.Sprintf("%s: the grader's own files were changed, and %s:\n%s",
		refused, why, strings.Join(lines, "\n")), strings.Join(try, "; then ")}
}

// progress reads the state file; an unreadable one is reported and read
// as no progress, so that list and hint still work.
func progress(root string, env Env) *state.State {
	s, err := state.Load(root)
	if err != nil {
		fmt.Fprintf(env.Stderr, "checker: %v\n", err)
		return &state.State{Schema: 1}
	}
	return s
}

// saveProgress applies change to the state file, warning when it cannot.
func saveProgress(root string, env Env, change func(*state.State)) {
	err := state.Update(root, func(s *state.State) error { change(s); return nil })
	if err != nil {
		fmt.Fprintf(env.Stderr, "checker: progress not saved: %v\n", err)
	}
}

// clock is the command's clock: the real one unless a test injects another.
func (e Env) clock() clock.Clock {
	if e.Clock != nil {
		return e.Clock
	}
	return clock.New()
}
