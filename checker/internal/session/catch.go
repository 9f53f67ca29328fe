package session

import (
	"context"
	"errors"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/catch"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// Catcher runs a learner's own tests against the kata's reference and its
// mutants (package catch). The zero value is not usable: Toolchain and
// Root are required.
type Catcher struct {
	Toolchain *grade.Toolchain
	Root      string
	Options   grade.Options
	Emit      func(Event)
}

// CatchProgress says how far a catch run is: Done of Of versions of the
// code (the reference, then each mutant) tested.
type CatchProgress struct {
	Kata     string
	Done, Of int
	Race     bool
}

// Caught is the outcome of a catch run.
type Caught struct{ Report *catch.Report }

func (CatchProgress) event() {}
func (Caught) event()        {}

// Catch runs the learner's tests of kata k: CatchProgress as each version
// is tested, then Caught. Without test files it returns catch.ErrNoTests.
func (c *Catcher) Catch(ctx context.Context, k catalog.Kata) (*catch.Report, error) {
	s, err := catch.Learner(k)
	if err != nil {
		return nil, err
	}
	emit := emitter(c.Emit)
	r, err := catch.Run(ctx, c.Toolchain, c.Root, s, c.Options, func(done, of int) {
		emit.emit(CatchProgress{Kata: k.Slug, Done: done, Of: of, Race: c.Toolchain.Race})
	})
	if err != nil {
		return nil, err
	}
	if r.Ran() {
		if err := recordCatch(c.Root, k.Slug, r); err != nil {
			emit.emit(Warning{"catch score not saved: " + err.Error()})
		}
	}
	emit.emit(Caught{Report: r})
	return r, nil
}

// recordCatch writes the score of report r to the state file, for list.
func recordCatch(root, slug string, r *catch.Report) error {
	return state.Progress{Root: root}.RecordCatch(slug, state.Catch{Caught: r.Caught(), Mutants: len(r.Mutants), FalseAlarms: len(r.Alarms)})
}

// NoTests is whether err from Catch says the kata has none of the
// learner's own tests yet.
func NoTests(err error) bool { return errors.Is(err, catch.ErrNoTests) }
