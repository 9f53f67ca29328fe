package cli

import (
	"flag"
	"fmt"
	"path/filepath"

	"gokata/checker/internal/session"
)

// catchRepeat is how many times catch runs each test on each version by
// default. A test that depends on scheduling usually goes either way about
// half the time, so 5 runs show it with odds of 15 in 16; the runs cost
// milliseconds each on fake time (the build of each version costs more).
// A rarer flake needs --repeat 20.
const catchRepeat = 5

var catchVerb = verb{
	name: "catch", args: "NN", section: learning, needs: needKata | needToolchain,
	summary: "run your own tests (exercises/NN-slug/*_test.go) against the\nreference and every known mistake: caught k of n, false alarms 0",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		colorFlag(fs)
		timeoutFlag(fs)
		repeat := fs.Int("repeat", catchRepeat, "run each test `N` times on each version, shuffled: a test that\npasses and fails on the same code is flaky")
		return func(c *call) (int, error) { return catchKata(c, *repeat) }
	},
}

func catchKata(c *call, repeat int) (int, error) {
	if c.env.interviewKit() {
		return 0, &usageError{Msg: "this interview kit carries no reference and no known mistakes, so catch has nothing to run your tests against; go test runs them", Try: "go test ./" + filepath.ToSlash(rel(c.cat.Root, c.kata.Exercise))}
	}
	opt := c.opt // --repeat checked with the other flags (repeatOptions)
	opt.Repeat, opt.CPU = repeat, ""
	if c.tc.Kit == nil {
		if err := session.CatchAsCommitted(c.ctx, c.cat.Root, c.env.Vars, c.kata); err != nil {
			return 0, err
		}
	}
	t := screen(c.env, c.style)
	ct := &session.Catcher{Toolchain: c.tc, Root: c.cat.Root, Options: opt, Emit: t.Show}
	r, err := ct.Catch(c.ctx, c.kata)
	if session.NoTests(err) {
		fmt.Fprintf(c.env.Stdout, "%s has no tests of yours yet: catch runs the _test.go files you write in %s.\n", c.kata.Slug, filepath.ToSlash(rel(c.cat.Root, c.kata.Exercise)))
		fmt.Fprintf(c.env.Stdout, "Start with docs/catch.md: it shows how to test concurrent code on fake time, one worked example per tool.\n")
		return ExitFail, nil
	}
	if err != nil {
		return 0, err
	}
	if !r.Passed() {
		return ExitFail, nil
	}
	return ExitPass, nil
}
