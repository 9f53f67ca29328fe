package cli

import (
	"context"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// grader grades the learner's code in the checkout at root, its events
// drawn by t. In the repository it first refuses a changed harness; a kit
// grades with its own copies.
func grader(tc *grade.Toolchain, root string, opt grade.Options, env Env, t *report.Screen) *session.Grader {
	g := &session.Grader{Toolchain: tc, Root: root, Options: opt, Vars: env.Vars, Emit: t.Show, Now: env.clock().Now}
	if tc.Kit == nil {
		g.Check = func(ctx context.Context, k catalog.Kata) error {
			return session.GradeAsCommitted(ctx, root, env.Vars, k)
		}
	}
	return g
}

// clock is the command's clock: the real one unless a test injects another.
func (e Env) clock() clock.Clock {
	if e.Clock != nil {
		return e.Clock
	}
	return clock.New()
}
