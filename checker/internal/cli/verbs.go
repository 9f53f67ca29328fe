package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
)

// verb is one entry of the checker's verb table: what help says about it,
// its flags, and how it runs. help, each verb's -h and the dispatch all
// read the table, so a verb or a flag cannot be missing from the help.
type verb struct {
	name    string
	args    string // the positional arguments, as help shows them: "[NN...]"
	section string
	summary string // what it does; a long one is wrapped by hand with \n
	// kitless, when set, is why a candidate kit's checker has no such
	// verb: it needs what stays in the repository.
	kitless string
	// needs is what the shared preamble prepares before run.
	needs need
	// inOrder keeps the arguments as given: flags count only before the
	// first positional argument (hint 06 -1 is hint -1, not a flag).
	inOrder bool
	// setup defines the verb's flags on fs, each with its help, and
	// returns the function that runs the verb once they are parsed.
	setup func(fs *flag.FlagSet) func(c *call) (int, error)
}

// need is a step of the shared preamble.
type need int

const (
	needCatalog   need = 1 << iota // load the catalog (and a kit's hidden tests)
	needKata                       // the kata named by the first argument (a catalog too)
	needKatas                      // the katas named by the arguments, every kata without any
	needToolchain                  // the go command, and whether it can race
)

// The sections of help, in order.
const (
	learning    = "Learning"
	workshops   = "Interviews and workshops"
	maintainers = "Maintainers"
)

var sections = []string{learning, workshops, maintainers}

// call is one run of a verb: its arguments after the flags, and what the
// preamble prepared from the flags and the needs.
type call struct {
	ctx   context.Context
	env   Env
	verb  string           // its name
	args  []string         // positional arguments
	style report.Style     // from --color, when the verb has it
	opt   grade.Options    // from --timeout, --repeat and --cpu, when it has them
	cat   *catalog.Catalog // needCatalog, needKata, needKatas
	kata  catalog.Kata     // needKata
	katas []catalog.Kata   // needKatas
	tc    *grade.Toolchain // needToolchain
}

// verbs is the verb table, in the order help lists them.
var verbs []verb

func init() {
	verbs = []verb{
		listVerb, checkVerb, watchVerb, hintVerb, decisionsVerb, solutionVerb, resetVerb, bughuntVerb, catchVerb, helpVerb,
		interviewVerb, noteVerb, askedVerb, scorecardVerb, replayVerb, regradeVerb, reportVerb, serveVerb, packVerb, doctorVerb,
		verifyVerb, mutantVerb,
	}
}

var helpVerb = verb{
	name: "help", section: learning, inOrder: true,
	summary: "this text (checker VERB -h: the flags of one verb)",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) {
			fmt.Fprint(c.env.Stdout, help())
			return ExitPass, nil
		}
	},
}

// lookup finds a verb by name; help has aliases.
func lookup(name string) (verb, bool) {
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	}
	for _, v := range verbs {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

func run(ctx context.Context, args []string, env Env) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, help())
		return ExitUsage, nil
	}
	v, ok := lookup(args[0])
	if !ok {
		return 0, &usageError{Msg: fmt.Sprintf("unknown verb %q", args[0]), Try: "checker help"}
	}
	if v.kitless != "" && hasPacked() {
		return 0, &usageError{Msg: v.kitless, Try: ""}
	}
	fs := newFlags(v.name)
	runVerb := v.setup(fs)
	rest := args[1:]
	if !v.inOrder {
		rest = reorder(fs, rest)
	}
	if err := fs.Parse(rest); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(env.Stdout, verbHelp(v))
		return ExitPass, nil
	} else if err != nil {
		return 0, &usageError{Msg: err.Error(), Try: "checker help"}
	}
	c := &call{ctx: ctx, env: env, verb: v.name, args: fs.Args()}
	if err := c.prepare(fs, v.needs); err != nil {
		return 0, err
	}
	return runVerb(c)
}

// prepare is the preamble every verb shares: the common flags checked,
// then the catalog, the katas named and the go command, as v needs them.
func (c *call) prepare(fs *flag.FlagSet, needs need) error {
	if err := c.commonFlags(fs); err != nil {
		return err
	}
	var err error
	if needs&(needCatalog|needKata|needKatas) != 0 {
		if c.cat, err = load(c.env); err != nil {
			return err
		}
	}
	if needs&needKata != 0 {
		if c.kata, err = kataArg(c.cat, c.env, c.verb, c.arg(0)); err != nil {
			return err
		}
	}
	if needs&needKatas != 0 {
		if c.katas, err = named(c.cat, c.args); err != nil {
			return err
		}
	}
	if needs&needToolchain != 0 {
		c.tc, err = detect(c.ctx, c.env)
	}
	return err
}

// commonFlags checks the flags several verbs share: --color, and
// --timeout with --repeat and --cpu.
func (c *call) commonFlags(fs *flag.FlagSet) error {
	var err error
	if f := fs.Lookup("color"); f != nil {
		if c.style, err = pickStyle(f.Value.String(), c.env); err != nil {
			return err
		}
	}
	if f := fs.Lookup("timeout"); f != nil {
		timeout := f.Value.(flag.Getter).Get().(time.Duration)
		repeat, cpu := 1, ""
		if f := fs.Lookup("repeat"); f != nil {
			repeat = f.Value.(flag.Getter).Get().(int)
		}
		if f := fs.Lookup("cpu"); f != nil {
			cpu = f.Value.String()
		}
		c.opt, err = repeatOptions(c.verb, timeout, repeat, cpu)
	}
	if f := fs.Lookup("seed"); f != nil {
		c.opt.Seed = f.Value.(flag.Getter).Get().(uint64)
	}
	return err
}

// arg is the i-th positional argument, or "".
func (c *call) arg(i int) string {
	if i < len(c.args) {
		return c.args[i]
	}
	return ""
}

func newFlags(verb string) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// The flags several verbs share, defined once so that their help is the
// same everywhere.

func colorFlag(fs *flag.FlagSet) {
	fs.String("color", "auto", "`when` to colour: auto (on a terminal, NO_COLOR unset),\nalways or never")
}

func timeoutFlag(fs *flag.FlagSet) {
	fs.Duration("timeout", grade.DefaultOptions().Timeout, "a test run still going after this `duration` is stopped\nas a hang")
}

func pollFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("poll", 0, "how often to look for saves, e.g. 25ms\n(default: the watcher's own)")
}

func nameFlag(fs *flag.FlagSet) *string {
	return fs.String("name", "", "the participant `NAME` in the JSON and on the room board\n(default: $KATA_NAME, else git config user.name)")
}

func verboseFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("v", false, "under each failed requirement, what your code printed\n(fmt, log) during its tests")
}

func seedFlag(fs *flag.FlagSet) {
	fs.Uint64("seed", 0, "replay the scenarios a failed check drew with seed `S` (its\nverdict names it); without it, every check draws fresh ones")
}

func cpuFlag(fs *flag.FlagSet) *string {
	return fs.String("cpu", "", "the GOMAXPROCS `values` for --repeat, e.g. 1,2,4 (default 1,2,4)")
}
