package cli

import (
	"flag"
	"runtime"

	"gokata/checker/internal/pack"
)

var packVerb = verb{
	name: "pack", args: "--out DIR [NN…]", section: workshops, needs: needKatas,
	kitless: "a kit cannot pack a kit: pack from the kata repository",
	summary: "a candidate kit: exercises and a checker with the hidden tests\ninside (out of sight, not secret); no solutions",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		var kit pack.Kit
		fs.StringVar(&kit.Out, "out", "", "the kit's `DIR`, new or empty")
		fs.StringVar(&kit.OS, "os", runtime.GOOS, "the `system` the kit runs on, e.g. darwin (default: this one)")
		fs.StringVar(&kit.Arch, "arch", runtime.GOARCH, "the `CPU` the kit runs on, e.g. arm64 (default: this one)")
		fs.BoolVar(&kit.Interview, "interview", false, "an interview kit: the READMEs keep the Decisions back")
		return func(c *call) (int, error) { return packKit(c, kit) }
	},
}

// packKit builds a candidate kit (pack.Make) as the flags say: every
// kata, or the ones named.
func packKit(c *call, kit pack.Kit) (int, error) {
	if kit.Out == "" {
		return 0, &usageError{Msg: "pack needs --out DIR, the kit's directory", Try: "checker pack --out ../kit"}
	}
	kit.Root, kit.Out, kit.Katas = c.cat.Root, absPath(c.env.Dir, kit.Out), c.katas
	if err := pack.Make(c.ctx, kit, c.env.Vars, c.env.Stdout, c.env.Stderr); err != nil {
		return 0, err
	}
	return ExitPass, nil
}
