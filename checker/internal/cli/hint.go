package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/state"
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
	if err := revealAsCommitted(ctx, cat.Root, k, env); err != nil {
		return 0, err
	}
	if len(k.Hints) == 0 {
		fmt.Fprintf(env.Stdout, "Kata %s has no hints.\n", k.Slug)
		return ExitPass, nil
	}
	shown := progress(cat.Root, env).Kata(k.Slug).HintsShown
	n := min(shown+1, len(k.Hints))
	if nth != "" {
		var err error
		n, err = strconv.Atoi(nth)
		if err != nil || n < 1 || n > len(k.Hints) {
			return 0, &usageError{fmt.Sprintf("kata %s has hints 1 to %d", k.ID(), len(k.Hints)), fmt.Sprintf("make hint EX=%s N=1", k.ID())}
		}
	}
	now := env.clock().Now().Truncate(time.Second)
	saved(env, state.Progress{Root: cat.Root}.RevealHint(k.Slug, n, now, "hint"))
	h := k.Hints[n-1]
	fmt.Fprintf(env.Stdout, "Hint %d of %d for %s (helps with %s)\n\n%s\n", n, len(k.Hints), k.Slug, strings.Join(h.Covers, ", "), h.Text)
	switch {
	case n < len(k.Hints):
		fmt.Fprintf(env.Stdout, "\nStill stuck? make hint EX=%s shows hint %d.\n", k.ID(), n+1)
	case hasPacked(): // a kit has no reference to give up to
		fmt.Fprintf(env.Stdout, "\nThat is the last hint. Earlier ones: make hint EX=%s N=1.\n", k.ID())
	default:
		fmt.Fprintf(env.Stdout, "\nThat is the last hint. Earlier ones: make hint EX=%s N=1. To give up and read the reference: make solution EX=%s GIVEUP=1\n", k.ID(), k.ID())
	}
	return ExitPass, nil
}
