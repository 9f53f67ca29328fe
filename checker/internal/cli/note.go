package cli

import (
	"flag"
	"fmt"
	"strings"

	"gokata/checker/internal/catalog"
)

// note keeps an interviewer's note: the record of an interview under way
// lists it at its time, and the candidate's screen does not show it.
var noteVerb = verb{
	name: "note", args: "NN TEXT", section: workshops, needs: needKata, inOrder: true,
	summary: "an interviewer's note on kata NN, timed, for the record of the\ninterview under way (run it in another terminal)",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) { return note(c.cat, c.kata, strings.Join(c.args[1:], " "), c.env) }
	},
}

func note(cat *catalog.Catalog, k catalog.Kata, text string, env Env) (int, error) {
	at, err := checkout(cat.Root, env).Note(k, text)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "Noted at %s for %s. The record of an interview under way lists it at that time; the candidate's screen does not show it.\n", at.Format("15:04:05"), k.Slug)
	return ExitPass, nil
}
