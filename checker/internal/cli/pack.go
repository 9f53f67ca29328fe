package cli

import (
	"errors"
	"flag"
	"runtime"

	"gokata/checker/internal/pack"
)

var packVerb = verb{
	name: "pack", args: "--out DIR [NN…]", section: workshops, needs: needKatas,
	kitless: "a kit cannot pack a kit: pack from the kata repository",
	summary: "a candidate kit: exercises and a checker with the hidden tests\ninside (out of sight, not secret); no solutions",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		out := fs.String("out", "", "the kit's `DIR`, new or empty")
		goos := fs.String("os", runtime.GOOS, "the `system` the kit runs on, e.g. darwin (default: this one)")
		goarch := fs.String("arch", runtime.GOARCH, "the `CPU` the kit runs on, e.g. arm64 (default: this one)")
		interview := fs.Bool("interview", false, "an interview kit: the READMEs keep the Decisions back")
		return func(c *call) (int, error) { return packKit(c, *out, *goos, *goarch, *interview) }
	},
}

// packKit builds a candidate kit (pack.Make) in out: every kata, or the
// ones named.
func packKit(c *call, out, goos, goarch string, interview bool) (int, error) {
	if out == "" {
		return 0, &usageError{"pack needs --out DIR, the kit's directory", "checker pack --out ../kit"}
	}
	kit := pack.Kit{Root: c.cat.Root, Out: absPath(c.env.Dir, out), Katas: c.katas, OS: goos, Arch: goarch, Interview: interview}
	err := pack.Make(c.ctx, kit, c.env.Vars, c.env.Stdout, c.env.Stderr)
	var ue *pack.UsageError
	switch {
	case errors.As(err, &ue):
		return 0, &usageError{ue.Msg, ue.Try}
	case err != nil:
		return 0, err
	}
	return ExitPass, nil
}
