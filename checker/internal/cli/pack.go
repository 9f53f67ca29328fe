package cli

import (
	"context"
	"errors"
	"fmt"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/pack"
	"gokata/checker/internal/pristine"
)

// packVerb builds a candidate kit (package pack) in --out: every kata, or
// the ones named.
func packVerb(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("pack")
	out := fs.String("out", "", "")
	interview := fs.Bool("interview", false, "")
	if err := parse(fs, reorder(fs, args)); err != nil {
		return 0, err
	}
	if *out == "" {
		return 0, &usageError{"pack needs --out DIR, the kit's directory", "checker pack --out ../kit"}
	}
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	if hasPacked() {
		return 0, &usageError{"this is a candidate kit already: pack from the repository", "cd to the kata repository"}
	}
	katas, err := named(cat, fs.Args())
	if err != nil {
		return 0, err
	}
	tc, err := grade.Detect(ctx, env.Vars)
	if err != nil {
		return 0, err
	}
	dst := absPath(env.Dir, *out)
	fmt.Fprintf(env.Stderr, "checker: packing %d katas and building the kit's checker…\n", len(katas))
	err = pack.Build(ctx, pack.Kit{Root: cat.Root, Out: dst, Katas: katas, Env: tc.Env, Interview: *interview})
	if errors.Is(err, pack.ErrNotEmpty) {
		return 0, &usageError{err.Error() + "; pack never overwrites", "checker pack --out DIR, with a new or empty DIR"}
	}
	if errors.Is(err, pristine.ErrNoHistory) {
		return 0, &usageError{err.Error(), "checker pack --out DIR 01 02 (only committed katas)"}
	}
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "Kit ready in %s: %d katas, bin/checker with their hidden tests inside.\n", dst, len(katas))
	fmt.Fprintln(env.Stdout, "It needs Go and gcc on the candidate's machine, for the same OS and CPU as this one;")
	fmt.Fprintln(env.Stdout, "the hidden tests are out of sight in the binary, not secret.")
	if *interview {
		fmt.Fprintln(env.Stdout, "An interview kit: the READMEs keep the Decisions back; interview and decisions NN show them.")
	}
	return ExitPass, nil
}

// hasPacked reports whether this checker carries hidden tests: it is a kit's.
func hasPacked() bool {
	files, err := bundle.Files()
	return err != nil || len(files) > 0
}
