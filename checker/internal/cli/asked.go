package cli

import (
	"flag"
	"fmt"
	"io"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/state"
)

// asked ticks the questions a candidate asked: the record of an
// interview under way lists them at their time, and the scorecard ticks
// them off the kata's Ask-first questions.
var askedVerb = verb{
	name: "asked", args: "NN [N…|TEXT]", section: workshops, needs: needKata, inOrder: true,
	summary: "tick the Ask-first questions of kata NN the candidate asked (2, or 1,3),\nor note another question they asked (TEXT), for the record of the\ninterview under way; with neither, list the questions",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) { return asked(c.cat, c.kata, c.args[1:], c.env) }
	},
}

func asked(cat *catalog.Catalog, k catalog.Kata, args []string, env Env) (int, error) {
	if len(args) == 0 {
		p, err := (state.Progress{Root: cat.Root}).Read()
		if err != nil {
			return 0, err
		}
		listAsked(env.Stdout, k, p.Kata(k.Slug).Asked)
		return ExitPass, nil
	}
	at, ticked, err := checkout(cat.Root, env).Asked(k, args)
	if err != nil {
		return 0, err
	}
	for _, a := range ticked {
		if a.Question > 0 {
			fmt.Fprintf(env.Stdout, "Ticked at %s: %d. %s\n", at.Format("15:04:05"), a.Question, k.Ask[a.Question-1])
		} else {
			fmt.Fprintf(env.Stdout, "Noted at %s, another question asked: %s\n", at.Format("15:04:05"), a.Text)
		}
	}
	fmt.Fprintln(env.Stdout, "The record of an interview under way lists it at that time; the candidate's screen does not show it.")
	return ExitPass, nil
}

// listAsked shows kata k's Ask-first questions, numbered, and when each
// was ticked, then the other questions noted.
func listAsked(w io.Writer, k catalog.Kata, asked []state.Asked) {
	fmt.Fprintf(w, "Ask-first questions of %s (tick one: make asked EX=%s Q=N):\n\n", k.Slug, k.ID())
	for i, q := range k.Ask {
		mark := "[ ]"
		when := ""
		for _, a := range asked {
			if a.Question == i+1 {
				mark, when = "[x]", " (ticked at "+a.At.Format("15:04:05")+")"
				break
			}
		}
		fmt.Fprintf(w, "%d. %s %s%s\n", i+1, mark, q, when)
	}
	for _, a := range asked {
		if a.Question == 0 {
			fmt.Fprintf(w, "-  [x] %s (noted at %s)\n", a.Text, a.At.Format("15:04:05"))
		}
	}
}
