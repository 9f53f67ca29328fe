package cli

import (
	"context"
	"fmt"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// gradeLearner grades the learner's code for kata k and records the grade
// in the state file. The fingerprint is taken before grading, so a file
// saved while the grade runs makes the recorded grade stale, not wrong.
// A state file that cannot be written costs a warning, never the grade.
func gradeLearner(ctx context.Context, tc *grade.Toolchain, root string, k catalog.Kata, opt grade.Options, env Env) (*grade.Result, error) {
	fp, fpErr := state.Fingerprint(k.Exercise)
	t, err := grade.Learner(k)
	if err != nil {
		return nil, err
	}
	r, err := grade.Grade(ctx, tc, root, t, opt)
	if err != nil {
		return nil, err
	}
	if fpErr == nil {
		req, total, bonus, btotal := r.Score()
		fpErr = state.Update(root, func(s *state.State) error {
			s.Record(k.Slug, state.Grade{Fingerprint: fp, Passed: r.Passed(),
				Required: req, RequiredTotal: total, Bonus: bonus, BonusTotal: btotal})
			return nil
		})
	}
	if fpErr != nil {
		fmt.Fprintf(env.Stderr, "checker: progress not saved: %v\n", fpErr)
	}
	return r, nil
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
