package catch

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/grade"
)

// Report is the grade of a suite: the false alarms on the reference and
// the verdict on every mutant.
type Report struct {
	Kata   catalog.Kata
	Race   bool   // run under the race detector
	NoRace string // why not, when Race is false
	Runs   int    // runs of each test on each version (--repeat)
	// Known counts the kata's mutants, the known mistakes, whether or
	// not the tests ran against them.
	Known int
	Tests []string
	// Gate holds what the gate found in the tests. Any finding means
	// nothing ran: a test on the real clock cannot give the same answer
	// every time, so its score would mean nothing.
	Gate []gate.Finding
	// Build is why the tests did not compile against the reference;
	// nothing else ran then.
	Build   *grade.BuildFailure
	Alarms  []Alarm
	Skipped []string
	Mutants []Verdict
}

// Caught counts the mutants caught.
func (r *Report) Caught() int {
	n := 0
	for _, v := range r.Mutants {
		if v.Caught {
			n++
		}
	}
	return n
}

// Passed reports whether the tests ran, caught every mutant and raised no
// false alarm, with nothing found at the gate.
func (r *Report) Passed() bool {
	return r.Build == nil && len(r.Gate) == 0 && len(r.Alarms) == 0 && len(r.Mutants) > 0 && r.Caught() == len(r.Mutants)
}

// Ran reports whether the tests were run at all.
func (r *Report) Ran() bool { return r.Build == nil && len(r.Gate) == 0 }

// Progress is called as the work goes on: Done of Of versions of the
// code tested (the reference is the first).
type Progress func(done, of int)

// Run grades the suite: the gate on the learner's tests, then the
// reference, then every mutant, two at a time (each is a build and a
// run). Whatever the gate finds in the learner's tests, or a compile
// error, stops it before the reference. progress may be nil.
func Run(ctx context.Context, tc *grade.Toolchain, root string, s *Suite, opt grade.Options, progress Progress) (*Report, error) {
	k := s.Kata
	r := &Report{Kata: k, Race: tc.Race, NoRace: tc.NoRace, Runs: max(1, opt.Repeat)}
	if progress == nil {
		progress = func(int, int) {}
	}
	ms, err := Mutants(k)
	if err != nil {
		return nil, err
	}
	r.Known = len(ms)
	if s.Own {
		gs, err := CheckTests(root, s)
		if err != nil {
			return nil, err
		}
		if r.Build, r.Gate, _ = grade.Screen(gs); !r.Ran() {
			return r, nil
		}
	}
	progress(0, len(ms)+1)
	ref, err := s.Reference(ctx, tc, root, opt)
	if err != nil {
		return nil, fmt.Errorf("%s reference: %w", k.Slug, err)
	}
	for _, t := range ref.Tests {
		r.Tests = append(r.Tests, t.Name)
	}
	if ref.Build != nil {
		r.Build = ref.Build
		return r, nil
	}
	progress(1, len(ms)+1)
	var trusted map[string]bool
	r.Alarms, r.Skipped, trusted = Alarms(ref)
	r.Mutants = make([]Verdict, len(ms))
	var mu sync.Mutex
	done := 1
	var g errgroup.Group
	g.SetLimit(2)
	for i, m := range ms {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			res, err := s.Mutant(ctx, tc, root, m, opt)
			var stale *StaleError
			switch {
			case errors.As(err, &stale):
				r.Mutants[i] = header(m)
				r.Mutants[i].Stale = true
			case err != nil:
				return fmt.Errorf("%s mutant %s: %w", k.Slug, m.Name, err)
			default:
				r.Mutants[i] = Judge(m, trusted, res)
			}
			mu.Lock()
			done++
			progress(done, len(ms)+1)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return r, nil
}

// testImports are what a learner's tests may import besides what the
// kata's code may: the test framework, fake time, assertions, leak checks
// and the harness the hidden tests use.
var testImports = []string{
	"testing", "testing/synctest",
	"github.com/stretchr/testify/assert", "github.com/stretchr/testify/require",
	"go.uber.org/goleak", "gokata/internal/katatest",
}

// CheckTests is the gate on a learner's tests, as on the learner's code
// (package gate): allowed imports, the injected clock, no files the go
// command would compile that are not Go; and what catch needs of them:
// the kata's package (not an external _test package) and no TestMain of
// their own (catch runs them under the harness's).
func CheckTests(root string, s *Suite) ([]gate.Finding, error) {
	var srcs []gate.Source
	for _, f := range s.Files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, gate.Source{Name: rel(root, f), Data: data})
	}
	fs := gate.Check(srcs, gate.NewAllowlist(append(slices.Clone(s.Kata.Imports), testImports...)))
	fset := token.NewFileSet()
	for _, src := range srcs {
		f, err := parser.ParseFile(fset, src.Name, src.Data, parser.SkipObjectResolution)
		if err != nil {
			continue // the gate has said so
		}
		if f.Name.Name != s.Kata.Package {
			fs = append(fs, gate.Finding{File: src.Name, Line: fset.Position(f.Name.Pos()).Line, Rule: gate.RuleForbidden,
				Message: fmt.Sprintf("package %s: write your tests in package %s, as the kata's code, so they can use everything it declares", f.Name.Name, s.Kata.Package)})
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "TestMain" {
				fs = append(fs, gate.Finding{File: src.Name, Line: fset.Position(fd.Pos()).Line, Rule: gate.RuleForbidden,
					Message: "TestMain is not allowed: catch runs your tests under the harness's own TestMain; remove yours"})
			}
		}
	}
	entries, err := os.ReadDir(s.Kata.Exercise)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, rel(root, filepath.Join(s.Kata.Exercise, e.Name())))
		}
	}
	return append(fs, gate.Foreign(names)...), nil
}

// rel shows path relative to root when it lies inside it.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(r) {
		return r
	}
	return path
}
