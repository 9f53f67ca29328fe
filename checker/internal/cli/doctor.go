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
	t := &terminal{env: env, style: style}
	d := &session.Doctor{Catalog: cat, Kit: hasPacked(), Now: env.clock().Now, Emit: t.show,
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

// doctor draws doctor's events: each finding behind a mark, with how to
// fix a failed one, and a progress line while the race build warms.
func (t *terminal) doctor(e session.Event) {
	w, style := t.env.Stdout, t.style
	switch e := e.(type) {
	case session.Checked:
		mark := style.Good("✔")
		if !e.OK {
			mark = style.Bad("✘")
		}
		fmt.Fprintf(w, "  %s %s\n", mark, e.Text)
		for _, f := range e.Fix {
			fmt.Fprintf(w, "      %s\n", style.Dim(f))
		}
	case session.Warming:
		t.built = progressLine{w: w, terminal: t.env.IsTerminal, clk: t.env.clock(), dim: style.Dim,
			text: "  … warming the race build: grading " + e.Kata + " (about a minute on a new machine)"}.start()
	case session.Warmed:
		t.endBuild()
	case session.Ready:
		fmt.Fprintf(w, "Ready: a check now takes about a second. Start with make check EX=%s\n", e.ID)
	}
}
