package cli

import (
	"context"
	"flag"
	"fmt"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/session"
)

// decisions shows a kata's decisions: the answers to its Ask-first
// questions that the hidden tests assume. In an interview kit the checker
// alone holds them (the READMEs keep them back). The first reading is
// recorded, and an interview's scorecard shows whether it came before the
// interview revealed them.
var decisionsVerb = verb{
	name: "decisions", args: "NN", section: learning, needs: needKata, inOrder: true,
	summary: "the decisions of kata NN: the answers the hidden tests assume\n(in an interview kit only the checker has them; reading them is noted)",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) { return decisions(c.ctx, c.cat, c.kata, c.env) }
	},
}

func decisions(ctx context.Context, cat *catalog.Catalog, k catalog.Kata, env Env) (int, error) {
	if err := session.RevealAsCommitted(ctx, cat.Root, env.Vars, k); err != nil {
		return 0, err
	}
	if len(k.Decisions) == 0 {
		fmt.Fprintf(env.Stdout, "This copy of the katas has no decisions for %s: see its README.\n", k.Slug)
		return ExitPass, nil
	}
	fmt.Fprintf(env.Stdout, "Decisions for %s: the answers the hidden tests assume\n\n", k.Slug)
	for _, d := range k.Decisions {
		fmt.Fprintf(env.Stdout, "- %s\n", d)
	}
	if checkout(cat.Root, env).ReadDecisions(k) {
		fmt.Fprintf(env.Stdout, "\nNoted in %s/: an interview of %s will say that you read them before it showed them.\n", session.StateDir, k.ID())
	} else {
		fmt.Fprintf(env.Stdout, "\nAn interview of %s showed them first, so this reading is not noted as early.\n", k.ID())
	}
	return ExitPass, nil
}
