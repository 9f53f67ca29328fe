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

// asCommitted refuses to grade a learner when the grader's own files (the
// harness, go.mod, go.sum, the kata's hidden tests) differ from what is
// committed: grading with them would not be grading. Maintainers grade
// the working tree with verify. Without git history there is nothing to
// compare with; the check after every run still applies.
func asCommitted(ctx context.Context, root string, k catalog.Kata, env Env) error {
	paths := []string{"internal", "go.mod", "go.sum"}
	if sol := rel(root, k.Solution); !filepath.IsAbs(sol) { // in the checkout, as in the repository
		paths = append(paths, filepath.ToSlash(sol)+"/*_test.go")
	}
	if ex := rel(root, k.Exercise); !filepath.IsAbs(ex) {
		paths = append(paths, filepath.ToSlash(ex)+"/kata.json") // its "imports" widen the gate
	}
	changed, ok, err := integrity.Uncommitted(ctx, env.Vars, root, paths)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &usageError{fmt.Sprintf("not graded: cannot compare the grader's files with git: %v", err), "git status"}
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
	return &usageError{fmt.Sprintf("not graded: the grader's own files were changed, and %s is graded only with the harness (internal/), go.mod, go.sum and hidden tests as committed:\n%s",
		k.Slug, strings.Join(lines, "\n")), strings.Join(try, "; then ")}
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
