package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
)

// solution shows a kata's reference and WHY.md once the learner's code has
// passed, or after an explicit give-up (which is remembered).
var solutionVerb = verb{
	name: "solution", args: "NN", section: learning, needs: needKata,
	kitless: "this kit does not show the reference solutions: ask whoever gave it to you for them",
	summary: "the reference and its WHY, once your code passed",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		giveUp := fs.Bool("give-up", false, "show it now, before a pass, and remember that you gave up")
		return func(c *call) (int, error) { return solution(c.cat, c.kata, *giveUp, c.env) }
	},
}

func solution(cat *catalog.Catalog, k catalog.Kata, giveUp bool, env Env) (int, error) {
	ref, err := checkout(cat.Root, env).Solution(k, giveUp)
	switch {
	case err != nil:
		return 0, err
	case ref.Locked:
		fmt.Fprintf(env.Stderr, "The reference for %s is shown once your code passes (make check EX=%s).\n", k.Slug, k.ID())
		if ref.MoreHints {
			fmt.Fprintf(env.Stderr, "A hint may be enough: make hint EX=%s\n", k.ID())
		}
		fmt.Fprintf(env.Stderr, "To give up and read it now: make solution EX=%s GIVEUP=1\n", k.ID())
		return ExitFail, nil
	case len(ref.Files) == 0:
		fmt.Fprintf(env.Stderr, "This copy of the katas has no reference for %s: ask whoever gave it to you.\n", k.Slug)
		return ExitFail, nil
	}
	for i, f := range ref.Files {
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		fmt.Fprintf(env.Stdout, "──── %s ────\n\n%s", rel(cat.Root, f.Path), f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			fmt.Fprintln(env.Stdout)
		}
	}
	fmt.Fprintf(env.Stdout, "\nThe reference is in %s, next to its hidden tests.\n", rel(cat.Root, k.Solution))
	return ExitPass, nil
}

// rel names path relative to root for messages.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
