// Package cli is the checker's command line: the verb table (from which
// help is generated), flag parsing into one options value per verb, and
// handing what comes back to the renderer (report.Screen), with the exit
// code.
//
// Where does X live? A rule for what a learner or an interviewer runs
// (check, watch, interview, bughunt, catch, hint, decisions, solution,
// reset, regrade, doctor, list) lives in package session: what is graded,
// what is written to the state file, which files are replaced and backed
// up, what a status is. cli only asks: a yes/no prompt is an input the
// session asks for (session.Checkout.Confirm), and the session's events
// are drawn by report.Screen, the one drawing path. The maintainers' and
// facilitators' verbs call their own packages: verify (verify, mutant),
// pack, board (serve, and check's --push) and room (report).
// Nothing here grades (grade.Grade) or writes progress (state).
//
// Exit codes: 0 everything graded passed; 1 a kata fell short (or verify
// found a problem); 2 usage error, such as a kata that does not exist;
// 3 the checker itself failed; 4 regrade --against FILE: the returned
// work is not the code, or not graded by the tests, that FILE names, or
// FILE is a record changed since the interview wrote it (scorecard and
// replay of such a record too); 130 interrupted.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/pack"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
	"gokata/checker/internal/verify"
)

// Exit codes.
const (
	ExitPass        = 0
	ExitFail        = 1
	ExitUsage       = 2
	ExitInternal    = 3
	ExitMismatch    = 4
	ExitInterrupted = 130
)

// Env is what a command may use of the outside world.
type Env struct {
	Dir            string   // working directory
	Vars           []string // environment, KEY=value
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	IsTerminal     bool        // stdout is a terminal
	StderrTerminal bool        // stderr is a terminal (progress lines are redrawn in place)
	Clock          clock.Clock // for countdowns, progress lines, backup names; nil: the real clock

	scratch *pack.Scratch // temporary files of one Run
}

func (e Env) get(key string) string {
	for _, kv := range e.Vars {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// usageError is a mistake in how the checker was called: the one type
// every package that serves a verb returns for it (usage.Error).
type usageError = session.UsageError

// Main runs the checker as a program, with the process's arguments,
// environment, working directory and standard streams; ctx is cancelled
// by a signal (package tmproot runs it). It returns the exit code.
func Main(ctx context.Context) int {
	dir, _ := os.Getwd()
	return Run(ctx, os.Args[1:], Env{
		Dir: dir, Vars: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		IsTerminal: isTerminal(os.Stdout), StderrTerminal: isTerminal(os.Stderr),
	})
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Run runs the checker with args (without the program name) and returns
// the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	env.scratch = &pack.Scratch{}
	defer env.scratch.Clean()
	code, err := run(ctx, args, env)
	var ue *usageError
	var se *grade.SetupError
	switch {
	case err == nil:
		return code
	case ctx.Err() != nil:
		fmt.Fprintln(env.Stderr, "checker: interrupted")
		return ExitInterrupted
	case errors.As(err, &se):
		// Not the code's fault, and not the checker's: the machine's.
		fmt.Fprintf(env.Stderr, "checker: cannot grade on this machine: %s\nTry: %s\n", se.Problem, se.Fix)
		return ExitInternal
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "checker: %s\n", ue.Msg)
		if ue.Try != "" {
			fmt.Fprintf(env.Stderr, "Try: %s\n", tryLine(ue.Try, env))
		}
		return ExitUsage
	default:
		fmt.Fprintf(env.Stderr, "checker: internal error: %v\n", err)
		return ExitInternal
	}
}

func load(env Env) (*catalog.Catalog, error) {
	root, err := catalog.FindRoot(env.Dir)
	if err != nil {
		return nil, &usageError{Msg: err.Error(), Try: "run it from the kata checkout"}
	}
	cat, err := catalog.Load(root)
	if err != nil {
		return nil, err
	}
	for _, b := range cat.Broken {
		fmt.Fprintf(env.Stderr, "checker: kata %s cannot be used: %v\n", b.Slug, b.Err)
	}
	return cat, env.scratch.Unpack(cat)
}

// find resolves a kata argument, or explains which ones exist.
func find(cat *catalog.Catalog, name string) (catalog.Kata, error) {
	if k, ok := cat.Find(name); ok {
		return k, nil
	}
	if b, ok := cat.FindBroken(name); ok {
		return catalog.Kata{}, &usageError{Msg: fmt.Sprintf("kata %s cannot be used: %v", b.Slug, b.Err), Try: fmt.Sprintf("git checkout -- %s", filepath.ToSlash(rel(cat.Root, b.File)))}
	}
	if name == "" {
		return catalog.Kata{}, &usageError{Msg: "which kata? name one of: " + cat.Names(), Try: "make check EX=" + nextMark}
	}
	return catalog.Kata{}, &usageError{Msg: fmt.Sprintf("no kata %q; the katas are: %s", name, cat.Names()), Try: "make list"}
}

// kataArg resolves the kata argument of verb: without one, the usage
// error suggests the verb on the kata list calls next.
func kataArg(cat *catalog.Catalog, env Env, verb, name string) (catalog.Kata, error) {
	k, err := find(cat, name)
	var ue *usageError
	if name == "" && errors.As(err, &ue) {
		ue.Try = "make " + verb + " EX=" + nextMark
	}
	return k, err
}

// nextMark, in a usage error's "Try:" line, stands for the kata that list
// calls next: the first one not passed.
const nextMark = "{next}"

// tryLine fills in a "Try:" line's nextMark, from the checkout around
// env.Dir; "01" stands in where there is none.
func tryLine(try string, env Env) string {
	if !strings.Contains(try, nextMark) {
		return try
	}
	next := "01"
	if root, err := catalog.FindRoot(env.Dir); err == nil {
		if cat, err := catalog.Load(root); err == nil {
			if k, err := nextKata(cat, Env{Stderr: io.Discard}); err == nil {
				next = k.ID()
			}
		}
	}
	return strings.ReplaceAll(try, nextMark, next)
}

// named resolves kata arguments: every kata when there are none.
func named(cat *catalog.Catalog, args []string) ([]catalog.Kata, error) {
	if len(args) == 0 {
		return cat.Katas, nil
	}
	var katas []catalog.Kata
	for _, a := range args {
		k, err := find(cat, a)
		if err != nil {
			return nil, err
		}
		katas = append(katas, k)
	}
	return katas, nil
}

var checkVerb = verb{
	name: "check", args: "[NN...]", section: learning, needs: needKatas | needToolchain,
	summary: "grade the katas named (all katas without NN); with several,\na summary and the next step at the end",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		var o checkOptions
		fs.BoolVar(&o.asJSON, "json", false, "print the grade as JSON (schema: go doc gokata/checker/internal/report)")
		o.name = nameFlag(fs)
		colorFlag(fs)
		timeoutFlag(fs)
		fs.Int("repeat", 1, "run every test `N` times at each --cpu value, shuffled, and\nreport each requirement's pass rate (luck is caught)")
		cpuFlag(fs)
		seedFlag(fs)
		o.verbose = verboseFlag(fs)
		o.push = definePush(fs)
		o.witness = defineWitness(fs, "send each grade, with the code it graded, to the interviewer's\nwitness at `URL`, as a take-home asks (default $KATA_WITNESS)")
		return func(c *call) (int, error) { return check(c, o) }
	},
}

// checkOptions are check's flags (--timeout, --repeat, --cpu and --seed go
// to the call's grade.Options, --color to its style).
type checkOptions struct {
	asJSON  bool
	name    *string
	verbose *bool
	push    pushFlags
	witness witnessFlags
}

func check(c *call, o checkOptions) (int, error) {
	style := c.style
	style.Verbose, style.Verb = *o.verbose, "check"
	p, err := newPusher(c, o.push, *o.name)
	if err != nil {
		return 0, err
	}
	wit, err := newGradeWitness(c, o.witness, *o.name)
	if err != nil {
		return 0, err
	}
	defer wit.close()
	meta := report.Meta{Participant: *o.name}
	if o.asJSON {
		meta.Participant = participant(c, *o.name, false)
	}
	code := ExitPass
	var results []*grade.Result
	t := screen(c.env, style)
	t.Stacked = true
	g := grader(c.tc, c.cat.Root, c.opt, c.env, t)
	var graded session.Graded
	g.Emit = func(e session.Event) {
		if ev, ok := e.(session.Graded); ok {
			graded = ev
			if o.asJSON { // drawn below, as JSON
				return
			}
		}
		t.Show(e)
	}
	for _, k := range c.katas {
		graded = session.Graded{}
		r, err := g.Grade(c.ctx, k)
		if err != nil {
			return 0, err
		}
		results = append(results, r)
		if !r.Passed() || graded.Hunt != nil && !graded.Hunt.Fixed {
			code = ExitFail
		}
		meta.Time, meta.Fingerprint = c.env.clock().Now().Truncate(time.Second), graded.Fingerprint
		if o.asJSON {
			if err := report.JSON(c.env.Stdout, r, meta); err != nil {
				return 0, err
			}
		}
		p.push(r, meta)
		wit.show("check", graded)
	}
	if len(results) > 1 && !o.asJSON {
		summary(c.ctx, c.cat, results, style, c.env)
	}
	return code, nil
}

var verifyVerb = verb{
	name: "verify", args: "[NN...]", section: maintainers, needs: needKatas | needToolchain,
	kitless: "verify is for the katas' maintainers: run it in the kata repository",
	summary: "stubs fail, references and alternatives pass, mutants are caught",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		timeoutFlag(fs)
		fs.Int("repeat", 1, "run each mutant `N` times at each --cpu value: it must be\ncaught in every run")
		o := verifyOptions{cpu: cpuFlag(fs)}
		fs.IntVar(&o.repeatCorrect, "repeat-correct", 0, "run references and alternatives `N` times instead, e.g. 50")
		fs.StringVar(&o.only, "mutant", "", "check only the mutants `NAME[,NAME...]` of the one kata named,\nwith its stub and reference, while you write them")
		fs.StringVar(&o.share, "share", "", "grade only the mutants in share `K/N` (0 ≤ K < N; CI grades one\nshare per commit); every correct solution is still graded")
		return func(c *call) (int, error) { return verifyKatas(c, o) }
	},
}

// verifyOptions are verify's flags (--timeout, --repeat and --cpu go to the
// call's grade.Options, for the mutants).
type verifyOptions struct {
	cpu           *string
	repeatCorrect int    // runs of references and alternatives; 0: as the mutants
	only          string // --mutant: the mutants to check, comma-separated
	share         string // --share: K/N, the share of the mutants to grade
}

func verifyKatas(c *call, o verifyOptions) (int, error) {
	correct := c.opt
	if o.repeatCorrect > 0 {
		var err error
		if correct, err = repeatOptions(c.verb, c.opt.Timeout, o.repeatCorrect, *o.cpu); err != nil {
			return 0, err
		}
	}
	vo := verify.Options{Mutants: c.opt, Correct: correct}
	if o.share != "" {
		sh, err := verify.ParseShare(o.share)
		if err != nil {
			return 0, &usageError{Msg: err.Error(), Try: "checker verify --share 1/3"}
		}
		vo.Share = sh
	}
	if o.only != "" {
		if len(c.katas) != 1 || len(c.args) != 1 {
			return 0, &usageError{Msg: "--mutant needs the one kata its mutants belong to",
				Try: "checker verify 06 --mutant NAME"}
		}
		vo.Only = strings.Split(o.only, ",")
	}
	if !c.tc.Race {
		fmt.Fprintf(c.env.Stderr, "checker: verifying without the race detector: %s\n", c.tc.NoRace)
	}
	start := time.Now()
	ok, err := verify.Run(c.ctx, c.tc, c.cat.Root, c.katas, vo, c.env.Stdout)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(c.env.Stderr, "checker: verify took %.1fs\n", time.Since(start).Seconds())
	if !ok {
		return ExitFail, nil
	}
	return ExitPass, nil
}

var cpuListRE = regexp.MustCompile(`^[1-9][0-9]*(,[1-9][0-9]*)*$`)

// repeatOptions checks the --timeout, --repeat and --cpu flags of verb.
func repeatOptions(verb string, timeout time.Duration, repeat int, cpu string) (grade.Options, error) {
	opt := grade.DefaultOptions()
	try := "checker " + verb + " " + nextMark
	switch {
	case timeout <= 0:
		return opt, &usageError{Msg: "--timeout must be positive", Try: try + " --timeout=5s"}
	case repeat < 1:
		return opt, &usageError{Msg: "--repeat must be 1 or more", Try: try + " --repeat=20"}
	case cpu != "" && !cpuListRE.MatchString(cpu):
		return opt, &usageError{Msg: fmt.Sprintf("--cpu=%s: give GOMAXPROCS values like 1,2,4", cpu), Try: try + " --repeat=20 --cpu=1,2,4"}
	}
	if repeat > 1 && cpu == "" {
		cpu = "1,2,4"
	}
	opt.Timeout, opt.Repeat, opt.CPU = timeout, repeat, cpu
	return opt, nil
}

// reorder moves flags before positional arguments, so that
// "check 06 --json" works like "check --json 06".
func reorder(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if f := fs.Lookup(name); f != nil && !strings.Contains(a, "=") && !isBool(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(flags, pos...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func pickStyle(mode string, env Env) (report.Style, error) {
	switch mode {
	case "always":
		return report.Style{Color: true}, nil
	case "never":
		return report.Style{}, nil
	case "auto":
		return report.Style{Color: env.IsTerminal && env.get("NO_COLOR") == "" && env.get("TERM") != "dumb"}, nil
	}
	return report.Style{}, &usageError{Msg: fmt.Sprintf("--color=%s: use auto, always or never", mode), Try: "checker check " + nextMark + " --color=never"}
}
