package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/state"
	"gokata/checker/internal/watch"
)

// watchVerb grades a kata, then grades it again each time the learner
// saves, redrawing the verdicts; on a pass it offers the next kata.
// Ctrl-C ends it.
func watchVerb(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("watch")
	color := fs.String("color", "auto", "")
	timeout := fs.Duration("timeout", grade.DefaultOptions.Timeout, "")
	poll := fs.Duration("poll", 0, "")
	verbose := fs.Bool("v", false, "")
	if err := parse(fs, reorder(fs, args)); err != nil {
		return 0, err
	}
	opt, err := repeatOptions(*timeout, 1, "")
	if err != nil {
		return 0, err
	}
	style, err := pickStyle(*color, env)
	if err != nil {
		return 0, err
	}
	style.Verbose, style.Verb = *verbose, "watch"
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	var k catalog.Kata
	if fs.NArg() > 0 {
		if k, err = find(cat, fs.Arg(0)); err != nil {
			return 0, err
		}
	} else if k, err = nextKata(cat, env, ""); err != nil {
		return 0, err
	}
	tc, err := detect(ctx, env)
	if err != nil {
		return 0, err
	}
	s := &session{ctx: ctx, env: env, tc: tc, root: cat.Root, opt: opt, style: style,
		poll: *poll, lines: readLines(env.Stdin)}
	for {
		r, stop, err := s.start(k)
		if err != nil {
			return s.end(err)
		}
		next, _ := nextKata(cat, env, k.Slug)
		footer := func(r *grade.Result) {
			switch {
			case !r.Passed():
				fmt.Fprintf(env.Stdout, "\nWatching %s: save to grade again; Ctrl-C to stop.\n", rel(cat.Root, k.Exercise))
			case next.Slug == "":
				fmt.Fprintln(env.Stdout, "\nEvery kata passes. Ctrl-C to stop.")
			default:
				fmt.Fprintf(env.Stdout, "\n%s passes. Press Enter to go on to %s; Ctrl-C to stop.\n", k.Slug, next.Slug)
			}
		}
		footer(r)
		for moved := false; !moved; {
			select {
			case <-ctx.Done():
				stop()
				return s.end(ctx.Err())
			case <-s.changes:
				if r, err = s.regrade(k); err != nil {
					stop()
					return s.end(err)
				}
				footer(r)
			case _, ok := <-s.lines:
				if !ok {
					s.lines = nil // stdin ended: only Ctrl-C stops now
					continue
				}
				if r.Passed() && next.Slug != "" {
					stop()
					k, moved = next, true
				}
			}
		}
	}
}

// session is a run of grades of one kata on every save: watch and
// interview share it.
type session struct {
	ctx     context.Context
	env     Env
	tc      *grade.Toolchain
	root    string
	opt     grade.Options
	style   report.Style
	poll    time.Duration
	lines   <-chan string // stdin, line by line
	changes <-chan struct{}
	drawn   int                 // reports drawn so far
	header  func() string       // a line above each report, if set
	graded  func(*grade.Result) // called after each grade, if set
}

// start watches kata k's files and grades it once; stop ends the watch.
func (s *session) start(k catalog.Kata) (r *grade.Result, stop func(), err error) {
	ctx, stop := context.WithCancel(s.ctx)
	s.changes = watch.Changes(ctx, func() (string, error) { return state.Fingerprint(k.Exercise) }, watch.Options{Poll: s.poll})
	r, err = s.regrade(k)
	if err != nil {
		stop()
		return nil, nil, err
	}
	return r, stop, nil
}

// regrade grades k and draws the verdicts: over the last ones on a
// terminal, below a rule otherwise.
func (s *session) regrade(k catalog.Kata) (*grade.Result, error) {
	r, err := gradeLearner(s.ctx, s.tc, s.root, k, s.opt, s.env)
	if err != nil {
		return nil, err
	}
	// Record the grade before drawing it: whoever sees the report (a test
	// on a fake clock, moving it on) knows the session has taken it in.
	if s.graded != nil {
		s.graded(r)
	}
	out := s.env.Stdout
	switch {
	case s.env.IsTerminal:
		fmt.Fprint(out, "\x1b[H\x1b[2J")
	case s.drawn > 0:
		fmt.Fprintf(out, "\n%s\n\n", strings.Repeat("─", 72))
	}
	s.drawn++
	if s.header != nil {
		fmt.Fprintf(out, "%s\n\n", s.header())
	}
	report.Text(out, r, s.style)
	return r, nil
}

// end turns how a session ended into the verb's result: Ctrl-C is the
// usual way out.
func (s *session) end(err error) (int, error) {
	if s.ctx.Err() != nil {
		fmt.Fprintln(s.env.Stdout, "\nStopped.")
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

// nextKata is the first kata after the one named after (all of them when
// after is "", wrapping around) whose last grade did not pass; the first
// kata when none is left, and the zero Kata when after was the only one.
func nextKata(cat *catalog.Catalog, env Env, after string) (catalog.Kata, error) {
	if len(cat.Katas) == 0 {
		return catalog.Kata{}, &usageError{"there are no katas here", "make list"}
	}
	s := progress(cat.Root, env)
	start := 0
	for i, k := range cat.Katas {
		if k.Slug == after {
			start = i + 1
		}
	}
	for i := range cat.Katas {
		k := cat.Katas[(start+i)%len(cat.Katas)]
		if k.Slug == after {
			continue
		}
		if last := s.Kata(k.Slug).Last; last == nil || !last.Passed {
			return k, nil
		}
	}
	if after != "" {
		return catalog.Kata{}, nil
	}
	return cat.Katas[0], nil
}
