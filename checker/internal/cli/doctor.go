package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
)

// doctor checks that this machine can grade: the Go version, cgo and a C
// compiler for the race detector, the modules in the module cache; then it
// warms the build cache by grading one kata, which on a new machine
// compiles the race-enabled standard library (about a minute), so that
// later checks take about a second. Facilitators run it before a workshop.
var doctorVerb = verb{
	name: "doctor", section: workshops, needs: needCatalog, inOrder: true,
	summary: "check Go, gcc and the modules, and warm the race build",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		colorFlag(fs)
		return func(c *call) (int, error) { return doctor(c.ctx, c.cat, c.style, c.env) }
	},
}

func doctor(ctx context.Context, cat *catalog.Catalog, style report.Style, env Env) (int, error) {
	d := &checkup{w: env.Stdout, style: style, code: ExitPass}
	fmt.Fprintln(env.Stdout, "Checking this machine for the katas")
	tc, ok := d.toolchain(ctx, env)
	if !ok {
		return d.code, nil
	}
	d.goVersion(ctx, tc, cat.Root)
	d.raceDetector(tc)
	if !d.modules(ctx, tc, cat.Root) {
		return d.code, nil
	}
	if !tc.Race || len(cat.Katas) == 0 {
		return d.code, nil
	}
	if err := d.warm(ctx, tc, cat, env); err != nil {
		return 0, err
	}
	return d.code, nil
}

// checkup writes doctor's findings, one a line, and remembers whether one
// failed.
type checkup struct {
	w     io.Writer
	style report.Style
	code  int // ExitPass, or ExitFail once a check failed
}

// say writes a check's outcome behind a mark.
func (d *checkup) say(ok bool, format string, a ...any) {
	mark := d.style.Good("✔")
	if !ok {
		mark, d.code = d.style.Bad("✘"), ExitFail
	}
	fmt.Fprintf(d.w, "  %s %s\n", mark, fmt.Sprintf(format, a...))
}

// fix writes, under a failed check, how to fix it.
func (d *checkup) fix(format string, a ...any) {
	fmt.Fprintf(d.w, "      %s\n", d.style.Dim(fmt.Sprintf(format, a...)))
}

// toolchain finds Go; false, said, when it cannot.
func (d *checkup) toolchain(ctx context.Context, env Env) (*grade.Toolchain, bool) {
	tc, err := detect(ctx, env)
	var se *grade.SetupError
	switch {
	case errors.As(err, &se):
		d.say(false, "Go: %s", se.Problem)
		d.fix("%s", se.Fix)
		return nil, false
	case err != nil:
		d.say(false, "Go: %v", err)
		d.fix("install Go from https://go.dev/dl/ and put it on PATH")
		return nil, false
	}
	return tc, true
}

// goVersion checks that Go is at least the version go.mod in root needs.
func (d *checkup) goVersion(ctx context.Context, tc *grade.Toolchain, root string) {
	need := goDirective(filepath.Join(root, "go.mod"))
	have, err := goOutput(ctx, tc, root, "env", "GOVERSION")
	switch {
	case err != nil:
		d.say(false, "Go: %v", err)
	case !versionAtLeast(have, need):
		d.say(false, "Go %s is too old: go.mod needs %s or newer", have, need)
		d.fix("install a newer Go from https://go.dev/dl/ (the checker never downloads one: GOTOOLCHAIN=local)")
	default:
		d.say(true, "Go %s (go.mod needs %s or newer)", have, need)
	}
}

// raceDetector checks that the race detector can run: cgo and a C
// compiler.
func (d *checkup) raceDetector(tc *grade.Toolchain) {
	if tc.Race {
		d.say(true, "race detector: cgo is on and a C compiler is installed")
		return
	}
	d.say(false, "race detector: %s", tc.NoRace)
	d.fix("install gcc (Debian/Ubuntu: apt-get install gcc; macOS: xcode-select --install) and keep CGO_ENABLED=1;")
	d.fix("without it the checker still grades, but cannot catch data races")
}

// modules downloads the modules of root into the module cache; false,
// said, when it cannot.
func (d *checkup) modules(ctx context.Context, tc *grade.Toolchain, root string) bool {
	if _, err := goOutput(ctx, tc, root, "mod", "download"); err != nil {
		d.say(false, "modules: %v", err)
		d.fix("the modules are downloaded once; check the network, or GOPROXY")
		return false
	}
	d.say(true, "modules: all in the module cache")
	return true
}

// warm grades the first kata's reference (a kit's exercise: its reference
// is not in the module) under the race detector, which fills the build
// cache, and says the machine is ready when every check passed.
func (d *checkup) warm(ctx context.Context, tc *grade.Toolchain, cat *catalog.Catalog, env Env) error {
	k := cat.Katas[0]
	t, what := grade.Reference(k), "reference"
	if hasPacked() { // a candidate kit: its reference is not in the module
		var err error
		if t, err = grade.Learner(k); err != nil {
			return err
		}
		what = "exercise"
	}
	start := env.clock().Now()
	stop := progressLine{w: env.Stdout, terminal: env.IsTerminal, clk: env.clock(), dim: d.style.Dim,
		text: "  … warming the race build: grading " + k.Slug + " (about a minute on a new machine)"}.start()
	r, err := grade.Grade(ctx, tc, cat.Root, t, grade.DefaultOptions())
	stop()
	took := env.clock().Since(start).Round(100 * time.Millisecond)
	switch {
	case err != nil:
		d.say(false, "race build: %v", err)
	case what == "reference" && !r.Passed():
		d.say(false, "race build warm, but %s's reference did not pass (%s): grading is not working here", k.Slug, r)
	default:
		d.say(true, "race build warm: graded %s's %s in %s", k.Slug, what, took)
	}
	if d.code == ExitPass {
		fmt.Fprintf(env.Stdout, "Ready: a check now takes about a second. Start with make check EX=%s\n", k.ID())
	}
	return nil
}

// goOutput runs the go command in dir and returns its trimmed output.
func goOutput(ctx context.Context, tc *grade.Toolchain, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, tc.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

var goLineRE = regexp.MustCompile(`(?m)^go\s+(\S+)`)

// goDirective reads the go line of a go.mod ("1.25.0").
func goDirective(gomod string) string {
	data, err := os.ReadFile(gomod)
	if m := goLineRE.FindSubmatch(data); err == nil && m != nil {
		return string(m[1])
	}
	return "1.25"
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// versionAtLeast reports whether the Go version have ("go1.26.8",
// "devel go1.27-…") is need ("1.25.0") or newer.
func versionAtLeast(have, need string) bool {
	h, n := versionRE.FindStringSubmatch(have), versionRE.FindStringSubmatch(need)
	if h == nil || n == nil {
		return strings.Contains(have, "devel")
	}
	for i := 1; i <= 3; i++ {
		a, _ := strconv.Atoi(h[i])
		b, _ := strconv.Atoi(n[i])
		if a != b {
			return a > b
		}
	}
	return true
}
