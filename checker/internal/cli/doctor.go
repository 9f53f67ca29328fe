package cli

import (
	"context"
	"flag"
	"fmt"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// doctor checks that this machine can grade (session.Doctor).
// Facilitators run it before a workshop.
var doctorVerb = verb{
	name: "doctor", section: workshops, needs: needCatalog, inOrder: true,
	summary: "check Go, gcc and the modules, and warm the race build",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		colorFlag(fs)
		return func(c *call) (int, error) { return doctor(c.ctx, c.cat, c.style, c.env) }
	},
}

func doctor(ctx context.Context, cat *catalog.Catalog, style report.Style, env Env) (int, error) {
	fmt.Fprintln(env.Stdout, "Checking this machine for the katas")
	t := screen(env, style)
	d := &session.Doctor{Catalog: cat, Kit: hasPacked(), Now: env.clock().Now, Emit: t.Show,
		Detect: func(ctx context.Context) (*grade.Toolchain, error) { return detect(ctx, env) }}
	ok, err := d.Run(ctx)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return ExitFail, nil
	}
	return ExitPass, nil
}
