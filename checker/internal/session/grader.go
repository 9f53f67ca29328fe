package session

import (
	"context"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/state"
)

// Grader grades a learner's code and records each grade in the state
// file. The zero value is not usable: Toolchain and Root are required.
type Grader struct {
	Toolchain *grade.Toolchain
	Root      string // the checkout
	Options   grade.Options
	Vars      []string // the environment for git, which tells an untouched stub
	// Check, if set, runs before each grade and may refuse it with an
	// error (the command line refuses a changed harness).
	Check func(ctx context.Context, k catalog.Kata) error
	// Left, if set, makes the grades timed: each Graded carries it.
	Left func() time.Duration
	// Now, if set, is the clock a solved bug hunt is dated by.
	Now  func() time.Time
	Emit func(Event)

	// gradeFunc, when set, stands in for building and running the hidden
	// tests (this package's tests set it).
	gradeFunc func(ctx context.Context, k catalog.Kata, opt grade.Options) (*grade.Result, error)
}

// Grade grades kata k: Building and Built around a build, Warning when
// the grade cannot be recorded, then Graded with the code graded and the
// fingerprints of the code and the hidden tests. The code is read
// before grading, so a file saved while the grade runs makes the recorded
// grade stale, not wrong. A state file that cannot be written costs a
// warning, never the grade.
func (g *Grader) Grade(ctx context.Context, k catalog.Kata) (*grade.Result, error) {
	if g.Check != nil {
		if err := g.Check(ctx, k); err != nil {
			return nil, err
		}
	}
	if _, err := startPacked(g.Root, k, g.now(), false); err != nil {
		g.emit(Warning{"bug hunt: " + err.Error()})
	}
	code, fp, fpErr := fingerprint.Read(k.Exercise)
	r, err := g.grade(ctx, k, g.Options)
	if err != nil {
		return nil, err
	}
	stub := untouchedStub(ctx, r, g.Vars)
	r.Untouched = stub && somePassed(r) // the report says why the stub passes those
	if fpErr == nil {
		fpErr = recordState(g.Root, k.Slug, fp, r, stub)
	}
	if fpErr != nil {
		g.emit(Warning{"progress not saved: " + fpErr.Error()})
	}
	ev := Graded{Result: r, Code: code, Fingerprint: fingerprint.Pair{Code: fp, Tests: TestsFingerprint(k)}}
	if ev.Hunt, err = g.hunt(ctx, k, r); err != nil {
		g.emit(Warning{"bug hunt: " + err.Error()})
	}
	if g.Left != nil {
		ev.Timed, ev.Left = true, g.Left()
	}
	g.emit(ev)
	return r, nil
}

// TestsFingerprint is the fingerprint of kata k's hidden tests; "" when
// they cannot be read.
func TestsFingerprint(k catalog.Kata) string {
	files, err := grade.HiddenFiles(k)
	if err != nil {
		return ""
	}
	fp, err := fingerprint.Paths(files)
	if err != nil {
		return ""
	}
	return fp
}

// grade builds and runs the hidden tests against the learner's code.
func (g *Grader) grade(ctx context.Context, k catalog.Kata, opt grade.Options) (*grade.Result, error) {
	if g.gradeFunc != nil {
		return g.gradeFunc(ctx, k, opt)
	}
	t, err := grade.Learner(k)
	if err != nil {
		return nil, err
	}
	return grade.GradeShowing(ctx, g.Toolchain, g.Root, t, opt, g.building(k))
}

// building is the hook that emits Building and Built around the build of
// kata k's test binary.
func (g *Grader) building(k catalog.Kata) func() (built func()) {
	return func() func() {
		g.emit(Building{Kata: k.Slug, Race: g.Toolchain.Race})
		return func() { g.emit(Built{Kata: k.Slug}) }
	}
}

func (g *Grader) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Grader) emit(ev Event) { emitter(g.Emit).emit(ev) }

// untouchedStub reports whether r graded the kata's untouched stub. A
// pass, a failed build or an item passed that the stub does not declare
// means the learner wrote code, so git is asked only when it can matter.
func untouchedStub(ctx context.Context, r *grade.Result, vars []string) bool {
	if r.Passed() || r.Build != nil {
		return false
	}
	declared := map[string]bool{}
	for _, p := range r.Kata.StubPasses {
		declared[p.ID] = true
	}
	for _, it := range r.Items {
		if it.Passed() && !declared[it.ID] {
			return false
		}
	}
	untouched, err := pristine.Untouched(ctx, vars, r.Kata)
	return err == nil && untouched
}

// somePassed reports whether r passed some item.
func somePassed(r *grade.Result) bool {
	for _, it := range r.Items {
		if it.Passed() {
			return true
		}
	}
	return false
}

// recordState writes grade r of the files with fingerprint fp to the
// state file; stub says that they are the untouched stub.
func recordState(root, slug, fp string, r *grade.Result, stub bool) error {
	req, total, bonus, btotal := r.Score()
	return state.Progress{Root: root}.RecordGrade(slug, state.Grade{Fingerprint: fp, Passed: r.Passed(),
		Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal, Runs: r.Runs,
		NoBuild: r.Build != nil, Stub: stub})
}

// progress reads the state file; an unreadable one is a warning and reads
// as no progress.
func progress(root string, emit emitter) *state.State {
	return ReadProgress(root, func(msg string) { emit.emit(Warning{msg}) })
}

// ReadProgress reads the progress of the checkout at root; an unreadable
// state file is passed to warn and reads as no progress, so that list and
// hint still work.
func ReadProgress(root string, warn func(msg string)) *state.State {
	s, err := state.Progress{Root: root}.Read()
	if err != nil {
		warn(err.Error())
	}
	return s
}
