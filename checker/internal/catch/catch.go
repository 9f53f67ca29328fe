// Package catch grades tests by the mistakes they catch: a learner's own
// tests for a kata (exercises/NN-slug/*_test.go), or the kata's hidden
// tests, are run against the reference, where every test must pass (a
// test that fails there is a false alarm), and against every mutant (the
// reference with one known mistake, see package mutant), which a test
// that passes on the reference and fails on the mutant catches.
//
// It is the one engine for both uses: `checker catch` grades a learner's
// tests with it, and `checker verify` runs the hidden tests through it, so
// that proving the mutants caught is also the self-check of catch.
//
// Each run is a grade (package grade): the tests are laid over the
// exercise's directory with the reference's files, or the mutant's, in
// place of the learner's code, built once under -race and run with a time
// limit, so a panic, hang or leak in a test is a verdict on that test. The
// learner's own tests first pass the gate, as the learner's code does
// (CheckTests). With grade.Options.Repeat each test runs several times,
// shuffled: one that passes and fails on the same code is flaky, a false
// alarm on the reference and no catch on a mutant.
//
// The reference and the mutants are read from the kata's solution
// directory: solutions/NN-slug in the repository, and in a candidate kit
// the temporary directory where the kit's checker unpacked what it
// carries (package bundle). Either way they are copied to a temporary
// directory and laid over the exercise, never written into it.
package catch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
)

// ErrNoTests is returned by Learner when the exercise has no test files.
var ErrNoTests = errors.New("no tests of your own")

// Suite is the tests run against the reference and the mutants.
type Suite struct {
	Kata  catalog.Kata
	Files []string // the test files, as they are on disk
	Own   bool     // the learner's own tests (else the kata's hidden tests)
}

// Learner is the learner's own tests of kata k: every _test.go file of
// its exercise directory. None is ErrNoTests.
func Learner(k catalog.Kata) (*Suite, error) {
	fs, err := gofiles.Regular(k.Exercise, true)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, ErrNoTests
	}
	return &Suite{Kata: k, Files: fs, Own: true}, nil
}

// Hidden is the kata's hidden tests, run as if a learner had written them.
func Hidden(k catalog.Kata) (*Suite, error) {
	fs, err := grade.HiddenFiles(k)
	if err != nil {
		return nil, err
	}
	return &Suite{Kata: k, Files: fs}, nil
}

// mainFile is the TestMain laid beside a learner's tests: the harness's,
// so that a run proves it ended (package receipt).
const mainFile = "zz_catch_main_test.go"

// target lays the suite and the code under test (file name in the
// reference → path of its content) over the exercise directory: the
// learner's code is left out, and so are the learner's tests unless they
// are the suite. Nothing on disk changes; tmp holds generated files.
func (s *Suite) target(code map[string]string, tmp string) (grade.Target, error) {
	k := s.Kata
	t := grade.Target{Kata: k, Dir: k.Exercise, Overlay: map[string]string{},
		Suite: &grade.Suite{Files: s.Files, Own: s.Own}}
	for _, tests := range []bool{false, true} {
		d, err := gofiles.List(k.Exercise, tests)
		if err != nil {
			return t, err
		}
		if !tests || !s.Own {
			for _, f := range d.Files {
				t.Overlay[f] = ""
			}
		}
		for _, f := range d.Dangling {
			t.Overlay[f] = ""
		}
		for _, o := range d.Odd {
			t.Overlay[o.Path] = ""
		}
	}
	for name, src := range code {
		t.Overlay[filepath.Join(k.Exercise, name)] = src
	}
	if !s.Own {
		for _, f := range s.Files {
			t.Overlay[filepath.Join(k.Exercise, filepath.Base(f))] = f
		}
		return t, nil
	}
	main := filepath.Join(tmp, mainFile)
	src := fmt.Sprintf("package %s\n\nimport (\n\t\"testing\"\n\n\t\"gokata/internal/katatest\"\n)\n\nfunc TestMain(m *testing.M) { katatest.Main(m) }\n", k.Package)
	if err := os.WriteFile(main, []byte(src), 0o600); err != nil {
		return t, err
	}
	t.Overlay[filepath.Join(k.Exercise, mainFile)] = main
	return t, nil
}

// write puts the code under test into tmp: the reference's files, with
// the mutant's in place of those it changes. It returns file name → path.
func write(tmp string, srcs ...[]mutant.Source) (map[string]string, error) {
	code := map[string]string{}
	for _, ss := range srcs {
		for _, src := range ss {
			p := filepath.Join(tmp, src.Name)
			if err := os.WriteFile(p, src.Data, 0o600); err != nil {
				return nil, err
			}
			code[src.Name] = p
		}
	}
	return code, nil
}

// Reference runs the suite against the reference. In a kit, the
// reference is what the checker carries (package bundle), unpacked into
// a temporary directory; only there is it compiled from.
func (s *Suite) Reference(ctx context.Context, tc *grade.Toolchain, root string, opt grade.Options) (*grade.Result, error) {
	return s.grade(ctx, tc, root, nil, opt)
}

// Mutant runs the suite against mutant m: the reference with m's patch
// applied. A patch that no longer applies is a *StaleError.
func (s *Suite) Mutant(ctx context.Context, tc *grade.Toolchain, root string, m *mutant.Mutant, opt grade.Options) (*grade.Result, error) {
	return s.grade(ctx, tc, root, m, opt)
}

// StaleError is a mutant whose patch no longer applies to the reference.
type StaleError struct{ Err error }

func (e *StaleError) Error() string { return e.Err.Error() }
func (e *StaleError) Unwrap() error { return e.Err }

// grade runs the suite against the reference, or mutant m if not nil.
func (s *Suite) grade(ctx context.Context, tc *grade.Toolchain, root string, m *mutant.Mutant, opt grade.Options) (*grade.Result, error) {
	ref, err := mutant.Reference(s.Kata.Solution)
	if err != nil {
		return nil, fmt.Errorf("kata %s: %w", s.Kata.Slug, err)
	}
	var patched []mutant.Source
	if m != nil {
		if patched, err = m.Apply(s.Kata.Solution); err != nil {
			return nil, &StaleError{err}
		}
	}
	tmp, err := os.MkdirTemp(tc.TempDir, "catch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	code, err := write(tmp, ref, patched)
	if err != nil {
		return nil, err
	}
	t, err := s.target(code, tmp)
	if err != nil {
		return nil, err
	}
	return grade.Grade(ctx, tc, root, t, opt)
}

// Mutants reads kata k's mutants, sorted by name.
func Mutants(k catalog.Kata) ([]*mutant.Mutant, error) { return mutant.All(k.Solution) }
