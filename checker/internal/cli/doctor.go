package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	code := ExitPass
	say := func(ok bool, format string, a ...any) {
		mark := style.Good("✔")
		if !ok {
			mark, code = style.Bad("✘"), ExitFail
		}
		fmt.Fprintf(env.Stdout, "  %s %s\n", mark, fmt.Sprintf(format, a...))
	}
	fix := func(format string, a ...any) {
		fmt.Fprintf(env.Stdout, "      %s\n", style.Dim(fmt.Sprintf(format, a...)))
	}
	fmt.Fprintln(env.Stdout, "Checking this machine for the katas")

	tc, err := detect(ctx, env)
	var se *grade.SetupError
	switch {
	case errors.As(err, &se):
		say(false, "Go: %s", se.Problem)
		fix("%s", se.Fix)
		return code, nil
	case err != nil:
		say(false, "Go: %v", err)
		fix("install Go from https://go.dev/dl/ and put it on PATH")
		return code, nil
	}
	need := goDirective(filepath.Join(cat.Root, "go.mod"))
	have, err := goOutput(ctx, tc, cat.Root, "env", "GOVERSION")
	switch {
	case err != nil:
		say(false, "Go: %v", err)
	case !versionAtLeast(have, need):
		say(false, "Go %s is too old: go.mod needs %s or newer", have, need)
		fix("install a newer Go from https://go.dev/dl/ (the checker never downloads one: GOTOOLCHAIN=local)")
	default:
		say(true, "Go %s (go.mod needs %s or newer)", have, need)
	}

	if tc.Race {
		say(true, "race detector: cgo is on and a C compiler is installed")
	} else {
		say(false, "race detector: %s", tc.NoRace)
		fix("install gcc (Debian/Ubuntu: apt-get install gcc; macOS: xcode-select --install) and keep CGO_ENABLED=1;")
		fix("without it the checker still grades, but cannot catch data races")
	}

	if _, err := goOutput(ctx, tc, cat.Root, "mod", "download"); err != nil {
		say(false, "modules: %v", err)
		fix("the modules are downloaded once; check the network, or GOPROXY")
		return code, nil
	}
	say(true, "modules: all in the module cache")

	if !tc.Race || len(cat.Katas) == 0 {
		return code, nil
	}
	k := cat.Katas[0]
	t, what := grade.Reference(k), "reference"
	if hasPacked() { // a candidate kit: its reference is not in the module
		t, err = grade.Learner(k)
		if err != nil {
			return 0, err
		}
		what = "exercise"
	}
	start := env.clock().Now()
	stop := progressLine{w: env.Stdout, terminal: env.IsTerminal, clk: env.clock(), dim: style.Dim,
		text: "  … warming the race build: grading " + k.Slug + " (about a minute on a new machine)"}.start()
	r, err := grade.Grade(ctx, tc, cat.Root, t, grade.DefaultOptions())
	stop()
	took := env.clock().Since(start).Round(100 * time.Millisecond)
	switch {
	case err != nil:
		say(false, "race build: %v", err)
	case what == "reference" && !r.Passed():
		say(false, "race build warm, but %s's reference did not pass (%s): grading is not working here", k.Slug, r)
	default:
		say(true, "race build warm: graded %s's %s in %s", k.Slug, what, took)
	}
	if code == ExitPass {
		fmt.Fprintf(env.Stdout, "Ready: a check now takes about a second. Start with make check EX=%s\n", k.ID())
	}
	return code, nil
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
