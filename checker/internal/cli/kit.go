package cli

import (
	"context"

	"gokata/checker/internal/grade"
	"gokata/checker/internal/pack"
)

// interviewKit reports whether this is a kit packed with --interview,
// whose READMEs keep the decisions back.
func (e Env) interviewKit() bool { return e.scratch.Interview() }

// detect finds the go command; in a kit, the build then uses the grader's
// own copies of the harness, go.mod and go.sum (pack.Scratch.Detect).
func detect(ctx context.Context, env Env) (*grade.Toolchain, error) {
	return env.scratch.Detect(ctx, env.Vars)
}

// hasPacked reports whether this checker carries hidden tests: it is a kit's.
func hasPacked() bool { return pack.Packed() }
