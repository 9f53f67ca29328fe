package cli

import (
	"flag"
	"fmt"
	"runtime"
	"strings"

	"gokata/checker/internal/hunt"
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
		fs.BoolVar(&kit.Interview, "interview", false, "an interview kit: the READMEs keep the Decisions back, and the\nchecker carries no reference and no known mistake")
		fs.BoolVar(&kit.Bughunt, "bughunt", false, "with --interview, each kata starts as a bug hunt: a real mistake\nplanted now; what it is goes to DIR.answers.md, beside the kit")
		fs.StringVar(&kit.Pick, "pick", "", "with --bughunt and one kata, plant the mutant `NAME`")
		fs.StringVar(&kit.Witness, "witness", "", "a take-home kit whose Makefile sends every check and watch to\nthe interviewer's witness at `URL` (checker serve prints it)")
		fs.StringVar(&kit.WitnessToken, "witness-token", "", "the witness's `TOKEN`, for --witness")
		level := fs.String("level", "", "with --bughunt, plant mistakes of level `L` (one-line, reasoning,\nschedule or wild; default: any)")
		return func(c *call) (int, error) {
			if *level != "" {
				l, err := hunt.ParseLevel(*level)
				if err != nil {
					return 0, &usageError{Msg: "--level: " + err.Error(), Try: "checker pack --out ../kit --interview --bughunt --level " + string(hunt.OneLine) + " 06"}
				}
				kit.Level = l
			}
			switch {
			case kit.Witness != "" && !isURL(kit.Witness):
				return 0, &usageError{Msg: fmt.Sprintf("--witness %q is not a witness's address: give one like http://192.168.1.20:8080", kit.Witness), Try: ""}
			case (kit.Witness == "") != (kit.WitnessToken == ""):
				return 0, &usageError{Msg: "--witness and --witness-token go together: the kit needs both to send its checks", Try: "checker pack --out ../kit --witness http://HOST:8080 --witness-token TOKEN 06"}
			case strings.ContainsAny(kit.Witness+kit.WitnessToken, " \t\n\r$#\"'\\"):
				return 0, &usageError{Msg: "--witness and --witness-token must be a plain address and token: no spaces, quotes, $ or #", Try: ""}
			}
			return packKit(c, kit)
		}
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
