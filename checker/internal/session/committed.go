package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/integrity"
)

// GradeAsCommitted refuses to grade a learner when the grader's own files (the
// harness, go.mod, go.sum, the kata's hidden tests and reveal.json) differ
// from what is committed: grading with them would not be grading.
// Maintainers grade the working tree with verify. Without git history
// there is nothing to compare with; the check after every run still
// applies.
func GradeAsCommitted(ctx context.Context, root string, vars []string, k catalog.Kata) error {
	paths := []string{"internal", "go.mod", "go.sum"}
	if sol := rel(root, k.Solution); !filepath.IsAbs(sol) { // in the checkout, as in the repository
		paths = append(paths, filepath.ToSlash(sol)+"/*_test.go", filepath.ToSlash(sol)+"/"+catalog.RevealFile)
	}
	if ex := rel(root, k.Exercise); !filepath.IsAbs(ex) {
		paths = append(paths, filepath.ToSlash(ex)+"/kata.json") // its "imports" widen the gate
	}
	return committed(ctx, root, vars, paths, "not graded",
		fmt.Sprintf("%s is graded only with the harness (internal/), go.mod, go.sum and hidden tests as committed", k.Slug))
}

// RevealAsCommitted refuses to show a kata's hints or decisions when its
// reveal.json differs from what is committed: like the hidden tests, it is
// the grader's file. A kit's come from its checker.
func RevealAsCommitted(ctx context.Context, root string, vars []string, k catalog.Kata) error {
	sol := rel(root, k.Solution)
	if filepath.IsAbs(sol) {
		return nil
	}
	return committed(ctx, root, vars, []string{filepath.ToSlash(sol) + "/" + catalog.RevealFile}, "not shown",
		fmt.Sprintf("the hints and decisions of %s are shown only as committed", k.Slug))
}

// committed returns a usage error, "refused: the grader's own files were
// changed, and why:" and the files, when any file under paths (relative
// to root) differs from its committed version.
func committed(ctx context.Context, root string, vars []string, paths []string, refused, why string) error {
	changed, ok, err := integrity.Uncommitted(ctx, vars, root, paths)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &UsageError{Msg: fmt.Sprintf("%s: cannot compare the grader's files with git: %v", refused, err), Try: "git status"}
	}
	if !ok || len(changed) == 0 {
		return nil
	}
	var lines, restore, remove []string
	unflag := map[string][]string{}
	for _, c := range changed {
		what := "differs from the committed version"
		switch {
		case c.New:
			what = "not committed"
			remove = append(remove, c.Path)
		case c.Differs:
			restore = append(restore, c.Path)
		}
		if c.Flag != "" {
			unflag[c.Flag] = append(unflag[c.Flag], c.Path)
			what = fmt.Sprintf("marked %s in git's index, so git status overlooks its edits", c.Flag)
			if c.Differs {
				what += ", and it differs from the committed version"
			}
		}
		lines = append(lines, "  "+c.Path+" ("+what+")")
	}
	var try []string
	for _, flag := range []string{"skip-worktree", "assume-unchanged"} {
		if len(unflag[flag]) > 0 {
			try = append(try, "git update-index --no-"+flag+" "+strings.Join(unflag[flag], " "))
		}
	}
	if len(restore) > 0 {
		try = append(try, "git checkout HEAD -- "+strings.Join(restore, " "))
	}
	if len(remove) > 0 {
		try = append(try, "rm "+strings.Join(remove, " "))
	}
	return &UsageError{Msg: fmt.Sprintf("%s: the grader's own files were changed, and %s:\n%s",
		refused, why, strings.Join(lines, "\n")), Try: strings.Join(try, "; then ")}
}

// CatchAsCommitted refuses to run catch when what it grades with (the
// harness, go.mod, go.sum, the kata's reference and mutants) differs from
// what is committed.
func CatchAsCommitted(ctx context.Context, root string, vars []string, k catalog.Kata) error {
	paths := []string{"internal", "go.mod", "go.sum"}
	if sol := rel(root, k.Solution); !filepath.IsAbs(sol) {
		sol = filepath.ToSlash(sol)
		paths = append(paths, sol+"/*.go", sol+"/testdata/mutants")
	}
	return committed(ctx, root, vars, paths, "not run",
		fmt.Sprintf("catch runs your tests only against %s's reference and mutants as committed", k.Slug))
}
