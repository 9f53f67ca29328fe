package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/session"
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
	h, err := checkout(cat.Root, env).Plant(k, pick, force, false)
	if err != nil || h == nil {
		return ExitFail, err
	}
	bugReport(env.Stdout, cat.Root, k, h)
	fmt.Fprintf(env.Stdout, "  make check EX=%s             grade your fix\n", k.ID())
	fmt.Fprintf(env.Stdout, "  make bughunt EX=%s GIVEUP=1  give up: see the planted change; the hunt ends\n", k.ID())
	return ExitPass, nil
}

// bugReport is what the learner starts from: the kata, its API and the
// symptom in a user's words; the commands to go on with are the caller's
// (an interview grades every save, and nobody gives up there).
func bugReport(w io.Writer, root string, k catalog.Kata, h *session.Planted) {
	fmt.Fprintf(w, "\nBug report · %s · %s\n\n", k.Slug, k.Title)
	fmt.Fprintf(w, "The code: %s in %s\n(the contract: its doc comments, and README.md).\n\n",
		strings.Join(h.API, ", "), rel(root, k.Exercise))
	fmt.Fprintf(w, "What a user saw:\n\n%s\n\n", indent(wrap(h.Symptom, 72), "    "))
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
	g, err := checkout(cat.Root, env).GiveUpHunt(k)
	if err != nil {
		return 0, err
	}
	if g == nil {
		fmt.Fprintf(env.Stderr, "No bug hunt is under way in %s: make bughunt EX=%s starts one.\n", k.Slug, k.ID())
		return ExitFail, nil
	}
	fmt.Fprintf(env.Stdout, "The planted mistake in %s (%s): %s\n\nThe fix, from the planted code to the reference:\n\n", k.Slug, g.Mutant, g.Mistake)
	fmt.Fprint(env.Stdout, g.Diff)
	if g.Why != "" {
		fmt.Fprintf(env.Stdout, "\nFrom WHY.md:\n\n%s\n", g.Why)
	}
	fmt.Fprintf(env.Stdout, "\nThe hunt is over; your files are as you left them. Another one: make bughunt EX=%s\n", k.ID())
	return ExitPass, nil
}

// replacing draws what a verb is about to replace in an exercise: what
// it writes, what it removes, where the learner's files go.
func (t *terminal) replacing(e session.Replacing) {
	w, verb := t.env.Stdout, "restore"
	if e.Reset {
		fmt.Fprintf(w, "Reset %s to its stub:\n", e.Kata)
	} else {
		verb = "write"
		fmt.Fprintf(w, "Bug hunt in %s: a working solution with one real mistake planted in it\nreplaces your code.\n", e.Kata)
	}
	if e.GivesUp {
		fmt.Fprintf(w, "You have not passed %s yet: apart from the mistake, this is its\nsolution, so going ahead counts as giving up on it (as solution --give-up\ndoes). To solve it yourself first: make check EX=%s\n", e.Kata, e.ID)
	}
	for _, n := range e.Write {
		fmt.Fprintf(w, "  %-7s %s\n", verb, n)
	}
	for _, n := range e.Remove {
		fmt.Fprintf(w, "  remove  %s (yours)\n", n)
	}
	if e.Forget {
		fmt.Fprintln(w, "  forget  its progress: grades, hints shown, decisions read, give-up, bug hunts")
	}
	if e.Backup != "" {
		fmt.Fprintf(w, "A copy of your .go files goes to %s/%s.\n", e.Backup, e.Named)
	}
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
