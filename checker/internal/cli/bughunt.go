package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
)

// bughunt writes a kata's reference with one of its mutants planted into
// the exercise, after backing up the learner's files as reset does, and
// prints the bug report; --give-up shows the planted change and ends the
// hunt.
var bughuntVerb = verb{
	name: "bughunt", args: "NN", section: learning, needs: needKata,
	summary: "replace your code with a working solution that has one real\nmistake planted in it, and a user's bug report: find it, fix it,\nmake check; your .go files are kept in .kata/backup",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		force := fs.Bool("force", false, "do not ask before replacing your files")
		pick := fs.String("pick", "", "plant the mutant `NAME` instead of a random one (for facilitators;\na name that is not one lists them)")
		giveUp := fs.Bool("give-up", false, "end the hunt under way and show the planted change against the reference")
		return func(c *call) (int, error) {
			if *giveUp {
				return giveUpHunt(c.cat, c.kata, c.env)
			}
			return plantHunt(c.cat, c.kata, *pick, *force, c.env)
		}
	},
}

func plantHunt(cat *catalog.Catalog, k catalog.Kata, pick string, force bool, env Env) (int, error) {
	b, files, ok, err := plant(cat, k, pick, force, false, env)
	if err != nil || !ok {
		return ExitFail, err
	}
	bugReport(env.Stdout, cat.Root, k, b, files)
	fmt.Fprintf(env.Stdout, "  make check EX=%s             grade your fix\n", k.ID())
	fmt.Fprintf(env.Stdout, "  make bughunt EX=%s GIVEUP=1  give up: see the planted change; the hunt ends\n", k.ID())
	return ExitPass, nil
}

// plant replaces kata k's exercise with a bug hunt's code (the mutant
// named pick, or a random one): it shows the change, asks unless force,
// backs up the learner's files, writes, and starts the hunt in the state
// file. On a kata the learner has not passed, the planted code is nearly
// its solution, so that counts as giving up on it, except in an interview
// (inInterview), where the interviewer chose it. ok is false when the
// learner said no.
func plant(cat *catalog.Catalog, k catalog.Kata, pick string, force, inInterview bool, env Env) (b hunt.Bug, files map[string][]byte, ok bool, err error) {
	bugs, err := hunt.Bugs(k.Solution)
	if err != nil {
		return b, nil, false, err
	}
	p := progress(cat.Root, env).Kata(k.Slug)
	if pick != "" {
		if b, err = hunt.Find(bugs, pick); err != nil {
			return b, nil, false, &usageError{err.Error(), ""}
		}
	} else if b, err = hunt.Pick(bugs, p.LastHunt(), rand.IntN); errors.Is(err, hunt.ErrNoHunt) {
		return b, nil, false, fmt.Errorf("kata %s: %w", k.Slug, err)
	} else if err != nil {
		return b, nil, false, err
	}
	if files, err = hunt.Plant(k.Solution, b); err != nil {
		return b, nil, false, err
	}
	ch, err := changesTo(k, files)
	if err != nil {
		return b, nil, false, err
	}
	unseen := p.HuntGivesUp(inInterview)
	fmt.Fprintf(env.Stdout, "Bug hunt in %s: a working solution with one real mistake planted in it\nreplaces your code.\n", k.Slug)
	if unseen {
		fmt.Fprintf(env.Stdout, "You have not passed %s yet: apart from the mistake, this is its\nsolution, so going ahead counts as giving up on it (as solution --give-up\ndoes). To solve it yourself first: make check EX=%s\n", k.Slug, k.ID())
	}
	if _, ok, err = ch.apply(cat, k, "write", files, nil, force, env); err != nil || !ok {
		return b, nil, false, err
	}
	now := env.clock().Now()
	saved(env, state.Progress{Root: cat.Root}.StartHunt(k.Slug, b.Name, now, inInterview))
	return b, files, true, nil
}

// bugReport is what the learner starts from: the kata, its API and the
// symptom in a user's words; the commands to go on with are the caller's
// (an interview grades every save, and nobody gives up there).
func bugReport(w io.Writer, root string, k catalog.Kata, b hunt.Bug, files map[string][]byte) {
	fmt.Fprintf(w, "\nBug report · %s · %s\n\n", k.Slug, k.Title)
	fmt.Fprintf(w, "The code: %s in %s\n(the contract: its doc comments, and README.md).\n\n",
		strings.Join(hunt.API(files), ", "), rel(root, k.Exercise))
	fmt.Fprintf(w, "What a user saw:\n\n%s\n\n", indent(wrap(b.Symptom, 72), "    "))
	fmt.Fprintln(w, "Find the mistake and fix it; the hidden tests know the bug.")
}

// wrap breaks text into lines of at most width characters, between words.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		l := utf8.RuneCountInString(word)
		switch {
		case n == 0:
		case n+1+l > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += l
	}
	return b.String()
}

// indent puts prefix before every line of text.
func indent(text, prefix string) string {
	return prefix + strings.ReplaceAll(text, "\n", "\n"+prefix)
}

// giveUpHunt ends the hunt under way and shows what was planted: the diff
// from the planted code to the reference, and the mistake.
func giveUpHunt(cat *catalog.Catalog, k catalog.Kata, env Env) (int, error) {
	h := progress(cat.Root, env).Kata(k.Slug).Hunt()
	if h == nil {
		fmt.Fprintf(env.Stderr, "No bug hunt is under way in %s: make bughunt EX=%s starts one.\n", k.Slug, k.ID())
		return ExitFail, nil
	}
	b, err := session.HuntBug(k, h.Mutant)
	if err != nil {
		return 0, err
	}
	planted, err := hunt.Plant(k.Solution, b)
	if err != nil {
		return 0, err
	}
	ref, err := hunt.Reference(k.Solution)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "The planted mistake in %s (%s): %s\n\nThe fix, from the planted code to the reference:\n\n", k.Slug, b.Name, b.Mistake)
	fmt.Fprint(env.Stdout, mutant.Diff(planted, ref))
	if why, err := hunt.Why(k.Solution, b); err == nil && why != "" {
		fmt.Fprintf(env.Stdout, "\nFrom WHY.md:\n\n%s\n", why)
	}
	saved(env, state.Progress{Root: cat.Root}.GiveUpHunt(k.Slug, env.clock().Now()))
	fmt.Fprintf(env.Stdout, "\nThe hunt is over; your files are as you left them. Another one: make bughunt EX=%s\n", k.ID())
	return ExitPass, nil
}

// huntVerdict follows a grade of a kata with a bug hunt under way: once
// fixed, the planted mistake and why it matters. In a timed interview
// (timed) it names no verb: the candidate neither gives up nor starts
// another hunt there.
func huntVerdict(w io.Writer, k catalog.Kata, h *session.Hunt, passed, timed bool) {
	switch {
	case h == nil:
	case h.Fixed:
		fmt.Fprintf(w, "\nBug hunt solved: you found and fixed the planted mistake (%s).\n  The mistake: %s\n", h.Mutant, h.Mistake)
		if h.Why != "" {
			fmt.Fprintf(w, "\nWhy it matters, from WHY.md:\n\n%s\n", h.Why)
		}
		if !timed {
			fmt.Fprintf(w, "\nAnother hunt: make bughunt EX=%s · all of WHY.md and the reference: make solution EX=%s\n", k.ID(), k.ID())
		}
	case passed:
		fmt.Fprintf(w, "\nBug hunt: every requirement passes, but the planted mistake also breaks %s: fix that too.\n", strings.Join(h.Bonus, ", "))
	case timed:
		fmt.Fprintf(w, "\nBug hunt under way in %s: the planted mistake is still there.\n", k.Slug)
	default:
		fmt.Fprintf(w, "\nBug hunt under way in %s; to give up: make bughunt EX=%s GIVEUP=1\n", k.Slug, k.ID())
	}
}
