// Package cli is the checker's command line: it parses the verbs and their
// flags, runs them, and turns the outcome into an exit code.
//
// Exit codes: 0 everything graded passed; 1 a kata fell short (or verify
// found a problem); 2 usage error, such as a kata that does not exist;
// 3 the checker itself failed; 130 interrupted.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/tmproot"
	"gokata/checker/internal/verify"
)

// Exit codes.
const (
	ExitPass        = 0
	ExitFail        = 1
	ExitUsage       = 2
	ExitInternal    = 3
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

	scratch *scratch // temporary files of one Run
}

func (e Env) get(key string) string {
	for _, kv := range e.Vars {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

const usage = `Usage: checker <verb> [flags] [args]

Learning:
  list                 the katas with your status: not started, k of n, passed, bonus k of m
  check [NN...]        grade the katas named (all katas without NN); with several,
                       a summary and the next step at the end
  watch [NN]           grade again on every save (without NN: the next kata not passed)
  hint NN [N]          the next hint of kata NN, or hint N
  decisions NN         the decisions of kata NN: the answers the hidden tests assume
                       (in an interview kit only the checker has them; reading them is noted)
  solution NN          the reference and its WHY, once your code passed
                       (--give-up: now, and remembered)
  reset NN             put the untouched stub back, from git history; your .go files
                       are kept in .kata/backup (--force: do not ask)
  help                 this text

Interviews and workshops:
  interview NN         the story, a pause to ask questions, the decisions, a countdown
                       with a grade on every save, then a Markdown scorecard
                       (--name=CANDIDATE --minutes=N --out=FILE; type hint or done)
  report DIR           the room grid from participants' check --json files in DIR:
                       DIR/room.html and DIR/room.md (--out=DIR2 to write elsewhere)
  pack --out DIR [NN…] a candidate kit: exercises and a checker with the hidden tests
                       inside (out of sight, not secret); no solutions
                       (--interview: the READMEs keep the Decisions back;
                       --os=darwin --arch=arm64: for another system than this one)
  doctor               check Go, gcc and the modules, and warm the race build

Maintainers:
  verify [NN...]       stubs fail, references and alternatives pass, mutants are caught
                       (--repeat=20 --cpu=1,2,4: each mutant must be caught in every run;
                       --repeat-correct=50: references and alternatives run 50 times instead;
                       --timeout as for check)
  mutant NN [NAME]     the mutants of kata NN, or mutant NAME as a source file: the
                       reference with its patch applied, the header on top
                       (--save NN FILE.go…: store each file as testdata/mutants/FILE.patch;
                       --refresh [NN…]: write every patch again against the reference)

check flags:
  --json               print the grade as JSON (schema: go doc gokata/checker/internal/report)
  --name=NAME          the participant named in the JSON (default: git config user.name)
  --color=auto|always|never   (also for list, watch, interview, doctor; NO_COLOR is honoured)
  --timeout=5s         a test run still going after this is stopped as a hang
                       (also for watch and interview)
  --repeat=N           run every test N times at each --cpu value, shuffled, and
                       report each requirement's pass rate (luck is caught)
  --cpu=1,2,4          GOMAXPROCS values for --repeat (default 1,2,4)
  -v                   under each failed requirement, what your code printed (fmt, log)
                       during its tests (also for watch)
  --poll=25ms          watch and interview: how often to look for saves

Your progress lives in .kata/ (git ignores it); no verb but reset writes your files.
Exit codes: 0 passed, 1 fell short, 2 usage error, 3 checker error, 130 interrupted.
`

// usageError is a mistake in how the checker was called.
type usageError struct{ msg, try string }

func (e *usageError) Error() string { return e.msg }

// Main runs the checker as a program: the process's arguments, environment,
// working directory and standard streams, and a signal (Ctrl-C, SIGTERM,
// SIGHUP, SIGQUIT) cancelling the work. It returns the exit code.
//
// Everything temporary, the go command's and the test binary's files
// included, goes in one directory of this process (package tmproot),
// removed on the way out. A second signal, or a cleanup that takes longer
// than exitGrace, ends the process at once, after removing it.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := tmproot.New(os.TempDir())
	if err != nil {
		fmt.Fprintf(os.Stderr, "checker: internal error: %v\n", err)
		return ExitInternal
	}
	defer os.RemoveAll(tmp)
	os.Setenv("TMPDIR", tmp) // for this process and every program it starts
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		cancel()
		select {
		case <-sigs:
		case <-time.After(exitGrace):
		}
		os.RemoveAll(tmp)
		fmt.Fprintln(os.Stderr, "checker: interrupted")
		os.Exit(ExitInterrupted)
	}()
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

// exitGrace bounds the cleanup after a signal: stopping the test process
// and removing files take milliseconds.
const exitGrace = 5 * time.Second

// Run runs the checker with args (without the program name) and returns
// the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	env.scratch = &scratch{}
	defer env.scratch.clean()
	code, err := run(ctx, args, env)
	var ue *usageError
	switch {
	case err == nil:
		return code
	case ctx.Err() != nil:
		fmt.Fprintln(env.Stderr, "checker: interrupted")
		return ExitInterrupted
	case errors.As(err, &ue):
		fmt.Fprintf(env.Stderr, "checker: %s\n", ue.msg)
		if ue.try != "" {
			fmt.Fprintf(env.Stderr, "Try: %s\n", tryLine(ue.try, env))
		}
		return ExitUsage
	default:
		fmt.Fprintf(env.Stderr, "checker: internal error: %v\n", err)
		return ExitInternal
	}
}

func run(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, help())
		return ExitUsage, nil
	}
	verb, args := args[0], args[1:]
	if why, ok := kitAbsent[verb]; ok && hasPacked() {
		return 0, &usageError{why, ""}
	}
	switch verb {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(env.Stdout, help())
		return ExitPass, nil
	case "list":
		return list(args, env)
	case "check":
		return check(ctx, args, env)
	case "hint":
		return hint(ctx, args, env)
	case "decisions":
		return decisions(ctx, args, env)
	case "solution":
		return solution(args, env)
	case "reset":
		return reset(ctx, args, env)
	case "doctor":
		return doctor(ctx, args, env)
	case "watch":
		return watchVerb(ctx, args, env)
	case "interview":
		return interview(ctx, args, env)
	case "report":
		return roomReport(args, env)
	case "pack":
		return packVerb(ctx, args, env)
	case "verify":
		return verifyVerb(ctx, args, env)
	case "mutant":
		return mutantVerb(args, env)
	}
	return 0, &usageError{fmt.Sprintf("unknown verb %q", verb), "checker help"}
}

func newFlags(verb string) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return &usageError{err.Error(), "checker help"}
	}
	return nil
}

func load(env Env) (*catalog.Catalog, error) {
	root, err := catalog.FindRoot(env.Dir)
	if err != nil {
		return nil, &usageError{err.Error(), "run it from the kata checkout"}
	}
	cat, err := catalog.Load(root)
	if err != nil {
		return nil, err
	}
	for _, b := range cat.Broken {
		fmt.Fprintf(env.Stderr, "checker: kata %s cannot be used: %v\n", b.Slug, b.Err)
	}
	return cat, unpackHidden(cat, env)
}

// find resolves a kata argument, or explains which ones exist.
func find(cat *catalog.Catalog, name string) (catalog.Kata, error) {
	if k, ok := cat.Find(name); ok {
		return k, nil
	}
	if b, ok := cat.FindBroken(name); ok {
		return catalog.Kata{}, &usageError{fmt.Sprintf("kata %s cannot be used: %v", b.Slug, b.Err),
			fmt.Sprintf("git checkout -- %s", filepath.ToSlash(rel(cat.Root, b.File)))}
	}
	if name == "" {
		return catalog.Kata{}, &usageError{"which kata? name one of: " + cat.Names(), "make check EX=" + nextMark}
	}
	return catalog.Kata{}, &usageError{fmt.Sprintf("no kata %q; the katas are: %s", name, cat.Names()), "make list"}
}

// kataArg resolves the kata argument of verb: without one, the usage
// error suggests the verb on the kata list calls next.
func kataArg(cat *catalog.Catalog, env Env, verb, name string) (catalog.Kata, error) {
	k, err := find(cat, name)
	var ue *usageError
	if name == "" && errors.As(err, &ue) {
		ue.try = "make " + verb + " EX=" + nextMark
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
			if k, err := nextKata(cat, Env{Stderr: io.Discard}, ""); err == nil {
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

func check(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("check")
	asJSON := fs.Bool("json", false, "")
	name := fs.String("name", "", "")
	color := fs.String("color", "auto", "")
	timeout := fs.Duration("timeout", grade.DefaultOptions.Timeout, "")
	repeat := fs.Int("repeat", 1, "")
	cpu := fs.String("cpu", "", "")
	verbose := fs.Bool("v", false, "")
	if err := parse(fs, reorder(fs, args)); err != nil {
		return 0, err
	}
	opt, err := repeatOptions(*timeout, *repeat, *cpu)
	if err != nil {
		return 0, err
	}
	style, err := pickStyle(*color, env)
	if err != nil {
		return 0, err
	}
	style.Verbose, style.Verb = *verbose, "check"
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	katas, err := named(cat, fs.Args())
	if err != nil {
		return 0, err
	}
	tc, err := detect(ctx, env)
	if err != nil {
		return 0, err
	}
	meta := report.Meta{Participant: *name}
	if *asJSON && meta.Participant == "" {
		meta.Participant = gitUserName(ctx, cat.Root, env)
	}
	code := ExitPass
	var results []*grade.Result
	for i, k := range katas {
		r, err := gradeLearner(ctx, tc, cat.Root, k, opt, env)
		if err != nil {
			return 0, err
		}
		results = append(results, r)
		if !r.Passed() {
			code = ExitFail
		}
		if *asJSON {
			if err := report.JSON(env.Stdout, r, meta); err != nil {
				return 0, err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		report.Text(env.Stdout, r, style)
	}
	if len(results) > 1 && !*asJSON {
		summary(ctx, cat, results, style, env)
	}
	return code, nil
}

func verifyVerb(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("verify")
	timeout := fs.Duration("timeout", grade.DefaultOptions.Timeout, "")
	repeat := fs.Int("repeat", 1, "")
	repeatCorrect := fs.Int("repeat-correct", 0, "")
	cpu := fs.String("cpu", "", "")
	if err := parse(fs, reorder(fs, args)); err != nil {
		return 0, err
	}
	opt, err := repeatOptions(*timeout, *repeat, *cpu)
	if err != nil {
		return 0, err
	}
	correct := opt
	if *repeatCorrect > 0 {
		if correct, err = repeatOptions(*timeout, *repeatCorrect, *cpu); err != nil {
			return 0, err
		}
	}
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	katas, err := named(cat, fs.Args())
	if err != nil {
		return 0, err
	}
	tc, err := detect(ctx, env)
	if err != nil {
		return 0, err
	}
	if !tc.Race {
		fmt.Fprintf(env.Stderr, "checker: verifying without the race detector: %s\n", tc.NoRace)
	}
	start := time.Now()
	ok, err := verify.Run(ctx, tc, cat.Root, katas, verify.Options{Mutants: opt, Correct: correct}, env.Stdout)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stderr, "checker: verify took %.1fs\n", time.Since(start).Seconds())
	if !ok {
		return ExitFail, nil
	}
	return ExitPass, nil
}

var cpuListRE = regexp.MustCompile(`^[1-9][0-9]*(,[1-9][0-9]*)*$`)

// repeatOptions checks the --timeout, --repeat and --cpu flags.
func repeatOptions(timeout time.Duration, repeat int, cpu string) (grade.Options, error) {
	opt := grade.DefaultOptions
	switch {
	case timeout <= 0:
		return opt, &usageError{"--timeout must be positive", "checker check " + nextMark + " --timeout=5s"}
	case repeat < 1:
		return opt, &usageError{"--repeat must be 1 or more", "checker check " + nextMark + " --repeat=20"}
	case cpu != "" && !cpuListRE.MatchString(cpu):
		return opt, &usageError{fmt.Sprintf("--cpu=%s: give GOMAXPROCS values like 1,2,4", cpu), "checker check " + nextMark + " --repeat=20 --cpu=1,2,4"}
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
	return report.Style{}, &usageError{fmt.Sprintf("--color=%s: use auto, always or never", mode), "checker check " + nextMark + " --color=never"}
}
