package cli

import (
	"bufio"
	"context"
	"flag"
	"io"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/session"
)

var watchVerb = verb{
	name: "watch", args: "[NN]", section: learning, needs: needCatalog,
	summary: "grade again on every save (without NN: the next kata not passed)",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		colorFlag(fs)
		timeoutFlag(fs)
		o := watchOptions{poll: pollFlag(fs), verbose: verboseFlag(fs), name: nameFlag(fs), push: definePush(fs),
			witness: defineWitness(fs, "send each grade, with the code it graded, to the interviewer's\nwitness at `URL`, as a take-home asks (default $KATA_WITNESS)")}
		return func(c *call) (int, error) { return watchKata(c, o) }
	},
}

// watchOptions are watch's flags (--timeout goes to the call's
// grade.Options, --color to its style).
type watchOptions struct {
	poll    *time.Duration
	verbose *bool
	name    *string
	push    pushFlags
	witness witnessFlags
}

// watchKata grades a kata, then grades it again each time the learner
// saves, redrawing the verdicts; on a pass it offers the next kata.
// Ctrl-C ends it.
func watchKata(c *call, o watchOptions) (int, error) {
	ctx, cat, env := c.ctx, c.cat, c.env
	p, err := newPusher(c, o.push, *o.name)
	if err != nil {
		return 0, err
	}
	wit, err := newGradeWitness(c, o.witness, *o.name)
	if err != nil {
		return 0, err
	}
	defer wit.close()
	style := c.style
	style.Verbose, style.Verb = *o.verbose, "watch"
	var k catalog.Kata
	if len(c.args) > 0 {
		k, err = find(cat, c.args[0])
	} else {
		k, err = nextKata(cat, env)
	}
	if err != nil {
		return 0, err
	}
	tc, err := detect(ctx, env)
	if err != nil {
		return 0, err
	}
	t := screen(env, style)
	g := grader(tc, cat.Root, c.opt, env, t)
	if p != nil || wit != nil { // each grade, once drawn, goes to the room board and the witness
		g.Emit = func(e session.Event) {
			t.Show(e)
			if p != nil {
				p.show(e)
			}
			wit.show("watch", e)
		}
	}
	w := &session.Watch{Grader: g, Catalog: cat, Poll: *o.poll, Lines: readLines(env.Stdin), Emit: t.Show}
	return stopped(ctx, w.Run(ctx, k))
}

// stopped turns how a session ended into the verb's result: Ctrl-C is the
// usual way out.
func stopped(ctx context.Context, err error) (int, error) {
	if ctx.Err() != nil {
		return ExitInterrupted, nil
	}
	return 0, err
}

// readLines delivers r line by line; the channel closes at the end of r.
// Nothing stops the reading goroutine but the end of r: it is the
// process's stdin, which lives as long as the process.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string)
	if r == nil {
		close(ch)
		return ch
	}
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// nextKata is the kata to watch when none is named: the first one whose
// last grade did not pass.
func nextKata(cat *catalog.Catalog, env Env) (catalog.Kata, error) {
	k, ok := checkout(cat.Root, env).Watched(cat)
	if !ok {
		return catalog.Kata{}, &usageError{Msg: "there are no katas here", Try: "make list"}
	}
	return k, nil
}
