package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// reset puts a kata's stub back, read from git history, after copying the
// learner's .go files to a backup under .kata/backup; the learner's own
// tests stay in place. It forgets the kata's progress in the state file
// (grades, hints, give-up, catch score, the hunt under way), so that the
// next candidate starts afresh; list still shows that the kata passed,
// and its bug hunts. It asks first unless --force.
var resetVerb = verb{
	name: "reset", args: "NN", section: learning, needs: needKata,
	summary: "put the untouched stub back, from git history, and forget the\nkata's grades, hints, give-up and catch score; your .go files are\ncopied to .kata/backup, your own tests stay",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		force := fs.Bool("force", false, "do not ask before resetting")
		return func(c *call) (int, error) { return reset(c.ctx, c.cat, c.kata, *force, c.env) }
	},
}

func reset(ctx context.Context, cat *catalog.Catalog, k catalog.Kata, force bool, env Env) (int, error) {
	done, err := checkout(cat.Root, env).Reset(ctx, k, force)
	switch {
	case err != nil:
		return 0, err
	case done.Nothing:
		fmt.Fprintf(env.Stdout, "%s is already its untouched stub, with no progress to forget: nothing to reset.\n", k.Slug)
	case done.Declined:
		return ExitFail, nil
	case done.Backup == "" && done.HuntCode:
		fmt.Fprintf(env.Stdout, "Done: %s is the stub again.\n", k.Slug)
	case done.Backup == "":
		fmt.Fprintf(env.Stdout, "Done: %s is the stub, with no progress.\n", k.Slug)
	default:
		fmt.Fprintf(env.Stdout, "Done: %s is the stub again; your files are in %s/.\n", k.Slug, done.Backup)
	}
	if len(done.Kept) > 0 {
		fmt.Fprintf(env.Stdout, "Your tests stay in %s: %s\n", rel(cat.Root, k.Exercise), strings.Join(done.Kept, ", "))
	}
	return ExitPass, nil
}

// checkout is the learner's checkout at root: its events drawn on the
// terminal, its questions asked on stdin.
func checkout(root string, env Env) *session.Checkout {
	t := screen(env, report.Style{})
	return &session.Checkout{Root: root, Vars: env.Vars, Now: env.clock().Now, Emit: t.Show,
		Confirm: func(q string) (bool, error) {
			ok := confirm(env, q)
			if !ok {
				fmt.Fprintln(env.Stdout, "Nothing changed. (Answer y, or use --force.)")
			}
			return ok, nil
		}}
}

// confirm asks a yes/no question on stdin; no answer is no.
func confirm(env Env, question string) bool {
	fmt.Fprint(env.Stdout, question)
	if env.Stdin == nil {
		fmt.Fprintln(env.Stdout)
		return false
	}
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(env.Stdout)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
