package cli

import (
	"flag"
	"fmt"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// bughunt writes a kata's reference with one of its mutants planted into
// the exercise, after backing up the learner's files as reset does, and
// prints the bug report; --give-up shows the planted change and ends the
// hunt.
var bughuntVerb = verb{
	name: "bughunt", args: "NN", section: learning, needs: needKata,
	summary: "replace your code with a working solution that has one real\nmistake planted in it, and a user's bug report: find it, fix it,\nmake check; your .go files are copied to .kata/backup (never a\nhunt's own code), your own tests stay",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		var o huntOptions
		fs.BoolVar(&o.force, "force", false, "do not ask before replacing your files")
		fs.StringVar(&o.pick, "pick", "", "plant the mutant `NAME` instead of a random one (for facilitators;\na name that is not one lists them)")
		fs.StringVar(&o.level, "level", "", "plant a mistake of level `L`: one-line (the fix changes one line),\nreasoning (a few lines, or one whose consequence needs thought),\nschedule (it shows only on some interleavings) or wild (the pattern\nof a real bug of a well-known project); without it, the lowest level\nyou have not solved a hunt at in this kata, then any")
		fs.BoolVar(&o.giveUp, "give-up", false, "end the hunt under way and show the planted change against the reference")
		return func(c *call) (int, error) {
			if o.giveUp {
				return giveUpHunt(c.cat, c.kata, c.env)
			}
			if planted, err := checkout(c.cat.Root, c.env).PackedHunt(c.ctx, c.kata, false); err != nil || planted != nil {
				return packedHunt(c, o, planted, err)
			}
			if c.env.interviewKit() {
				return 0, &usageError{Msg: fmt.Sprintf("this interview kit carries no known mistakes, so there is none to plant in %s", c.kata.Slug), Try: ""}
			}
			return plantHunt(c.cat, c.kata, o, c.env)
		}
	},
}

// huntOptions are bughunt's flags.
type huntOptions struct {
	force, giveUp bool
	pick          string // the mutant to plant; "": a random one
	level         string // the level to pick it at; "": the learner's next
}

func plantHunt(cat *catalog.Catalog, k catalog.Kata, o huntOptions, env Env) (int, error) {
	choice := session.HuntChoice{Name: o.pick}
	if o.level != "" {
		l, err := hunt.ParseLevel(o.level)
		if err != nil {
			return 0, &usageError{Msg: "--level: " + err.Error(), Try: fmt.Sprintf("make bughunt EX=%s LEVEL=%s", k.ID(), hunt.OneLine)}
		}
		choice.Level = l
	}
	h, err := checkout(cat.Root, env).Plant(k, choice, o.force, false)
	if err != nil || h == nil {
		return ExitFail, err
	}
	report.BugReport(env.Stdout, rel(cat.Root, k.Exercise), k, h)
	fmt.Fprintf(env.Stdout, "  make check EX=%s             grade your fix\n", k.ID())
	fmt.Fprintf(env.Stdout, "  make bughunt EX=%s GIVEUP=1  give up: see the planted change; the hunt ends\n", k.ID())
	return ExitPass, nil
}

// packedHunt shows again the bug report of the hunt planted in kata k
// when its kit was packed: the code in the exercise is where it starts.
func packedHunt(c *call, o huntOptions, h *session.Planted, err error) (int, error) {
	k := c.kata
	switch {
	case err != nil:
		return 0, err
	case o.pick != "" || o.level != "":
		return 0, &usageError{Msg: fmt.Sprintf("the bug hunt in %s was planted when this kit was packed: --pick and --level choose nothing here", k.Slug), Try: "make bughunt EX=" + k.ID()}
	}
	exercise := rel(c.cat.Root, k.Exercise)
	fmt.Fprintf(c.env.Stdout, "The bug hunt in %s was planted when this kit was packed: the code in\n%s is where it starts (make reset EX=%s brings it back).\n", k.Slug, exercise, k.ID())
	report.BugReport(c.env.Stdout, exercise, k, h)
	fmt.Fprintf(c.env.Stdout, "  make check EX=%s             grade your fix\n", k.ID())
	fmt.Fprintf(c.env.Stdout, "  make bughunt EX=%s GIVEUP=1  give up: the give-up is recorded, nothing is shown\n", k.ID())
	return ExitPass, nil
}

// giveUpHunt ends the hunt under way and shows what was planted: the diff
// from the planted code to the reference, and the mistake.
func giveUpHunt(cat *catalog.Catalog, k catalog.Kata, env Env) (int, error) {
	g, err := checkout(cat.Root, env).GiveUpHunt(k)
	if err != nil {
		return 0, err
	}
	switch {
	case g == nil && env.interviewKit():
		fmt.Fprintf(env.Stderr, "No bug hunt is under way in %s.\n", k.Slug)
		return ExitFail, nil
	case g == nil:
		fmt.Fprintf(env.Stderr, "No bug hunt is under way in %s: make bughunt EX=%s starts one.\n", k.Slug, k.ID())
		return ExitFail, nil
	case g.Packed:
		fmt.Fprintf(env.Stdout, "You gave up the bug hunt in %s; that is recorded. This kit does not know\nwhat was planted: whoever gave it to you does.\n", k.Slug)
		return ExitPass, nil
	}
	fmt.Fprintf(env.Stdout, "The planted mistake in %s (%s): %s\n\nThe fix, from the planted code to the reference:\n\n", k.Slug, g.Mutant, g.Mistake)
	fmt.Fprint(env.Stdout, g.Diff)
	if g.Why != "" {
		fmt.Fprintf(env.Stdout, "\nFrom WHY.md:\n\n%s\n", g.Why)
	}
	fmt.Fprintf(env.Stdout, "\nThe hunt is over; your files are as you left them. Another one: make bughunt EX=%s\n", k.ID())
	return ExitPass, nil
}
