package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catalog"
	"gokata/checker/internal/session"
)

// hint shows hint N of a kata, or the next one not yet shown, and records
// which were shown when (an interview's record lists them).
var hintVerb = verb{
	name: "hint", args: "NN [N]", section: learning, needs: needKata, inOrder: true,
	summary: "the next hint of kata NN, or hint N",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) { return hint(c.ctx, c.cat, c.kata, c.arg(1), c.env) }
	},
}

func hint(ctx context.Context, cat *catalog.Catalog, k catalog.Kata, nth string, env Env) (int, error) {
	if err := session.RevealAsCommitted(ctx, cat.Root, env.Vars, k); err != nil {
		return 0, err
	}
	if len(k.Hints) == 0 {
		fmt.Fprintf(env.Stdout, "Kata %s has no hints.\n", k.Slug)
		return ExitPass, nil
	}
	n := 0
	if nth != "" {
		var err error
		if n, err = strconv.Atoi(nth); err != nil || n == 0 {
			n = -1
		}
	}
	n, err := checkout(cat.Root, env).Hint(k, n)
	if err != nil {
		return 0, err
	}
	h := k.Hints[n-1]
	fmt.Fprintf(env.Stdout, "Hint %d of %d for %s (helps with %s)\n\n%s\n", n, len(k.Hints), k.Slug, strings.Join(h.Covers, ", "), h.Text)
	switch {
	case n < len(k.Hints):
		fmt.Fprintf(env.Stdout, "\nStill stuck? make hint EX=%s shows hint %d.\n", k.ID(), n+1)
	default: // a kit has no reference to give up to
		fmt.Fprintf(env.Stdout, "\nThat is the last hint. Earlier ones: make hint EX=%s N=1.%s\n", k.ID(),
			bundle.KitOr("", " To give up and read the reference: make solution EX="+k.ID()+" GIVEUP=1"))
	}
	return ExitPass, nil
}
