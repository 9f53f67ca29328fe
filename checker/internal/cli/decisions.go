package cli

import (
	"context"
	"fmt"
	"time"

	"gokata/checker/internal/state"
)

// decisions shows a kata's decisions: the answers to its Ask-first
// questions that the hidden tests assume. In an interview kit the checker
// alone holds them (the READMEs keep them back). The first reading is
// recorded, and an interview's scorecard shows whether it came before the
// interview revealed them.
func decisions(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("decisions")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	k, err := kataArg(cat, env, "decisions", fs.Arg(0))
	if err != nil {
		return 0, err
	}
	if err := revealAsCommitted(ctx, cat.Root, k, env); err != nil {
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
	now := env.clock().Now().UTC().Truncate(time.Second)
	saveProgress(cat.Root, env, func(s *state.State) {
		if p := s.Kata(k.Slug); p.DecisionsRead == nil {
			p.DecisionsRead = &now
		}
	})
	fmt.Fprintf(env.Stdout, "\nNoted in %s/: an interview of %s will say that you read them before it showed them.\n", state.Dir, k.ID())
	return ExitPass, nil
}
