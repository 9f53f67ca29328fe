package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
)

// Doctor checks that this machine can grade: the Go version, cgo and a C
// compiler for the race detector, the modules in the module cache; then
// it warms the build cache by grading one kata, which on a new machine
// compiles the race-enabled standard library (about a minute), so that
// later checks take about a second. Each finding is a Checked event.
type Doctor struct {
	Catalog *catalog.Catalog
	Detect  func(ctx context.Context) (*grade.Toolchain, error) // finds the go command
	Kit     bool                                                // a candidate kit: its reference is not in the module
	Now     func() time.Time
	Emit    func(Event)

	failed bool
}

// Checked is one of doctor's findings, and how to fix a failed one.
type Checked struct {
	OK   bool
	Text string
	Fix  []string
}

// Warming says that doctor grades kata Kata to warm the race build;
// Warmed follows it.
type Warming struct{ Kata string }

// Warmed ends Warming.
type Warmed struct{}

// Ready says that every check passed and the build is warm: start with
// kata ID.
type Ready struct{ ID string }

func (Checked) event() {}
func (Warming) event() {}
func (Warmed) event()  {}
func (Ready) event()   {}

// Run runs the checks and reports whether every one passed.
func (d *Doctor) Run(ctx context.Context) (bool, error) {
	root := d.Catalog.Root
	tc, ok := d.toolchain(ctx)
	if !ok {
		return false, nil
	}
	d.goVersion(ctx, tc, root)
	d.raceDetector(tc)
	if !d.modules(ctx, tc, root) || !tc.Race || len(d.Catalog.Katas) == 0 {
		return !d.failed, nil
	}
	if err := d.warm(ctx, tc); err != nil {
		return false, err
	}
	return !d.failed, nil
}

// say emits a finding.
func (d *Doctor) say(ok bool, text string, fix ...string) {
	d.failed = d.failed || !ok
	emitter(d.Emit).emit(Checked{OK: ok, Text: text, Fix: fix})
}

// toolchain finds Go; false, said, when it cannot.
func (d *Doctor) toolchain(ctx context.Context) (*grade.Toolchain, bool) {
	tc, err := d.Detect(ctx)
	var se *grade.SetupError
	switch {
	case errors.As(err, &se):
		d.say(false, "Go: "+se.Problem, se.Fix)
		return nil, false
	case err != nil:
		d.say(false, fmt.Sprintf("Go: %v", err), "install Go from https://go.dev/dl/ and put it on PATH")
		return nil, false
	}
	return tc, true
}

// goVersion checks that Go is at least the version go.mod in root needs.
func (d *Doctor) goVersion(ctx context.Context, tc *grade.Toolchain, root string) {
	need := goDirective(filepath.Join(root, "go.mod"))
	have, err := tc.Go(ctx, root, "env", "GOVERSION")
	switch {
	case err != nil:
		d.say(false, fmt.Sprintf("Go: %v", err))
	case !versionAtLeast(have, need):
		d.say(false, fmt.Sprintf("Go %s is too old: go.mod needs %s or newer", have, need),
			"install a newer Go from https://go.dev/dl/ (the checker never downloads one: GOTOOLCHAIN=local)")
	default:
		d.say(true, fmt.Sprintf("Go %s (go.mod needs %s or newer)", have, need))
	}
}

// raceDetector checks that the race detector can run: cgo and a C
// compiler.
func (d *Doctor) raceDetector(tc *grade.Toolchain) {
	if tc.Race {
		d.say(true, "race detector: cgo is on and a C compiler is installed")
		return
	}
	d.say(false, "race detector: "+tc.NoRace,
		"install gcc (Debian/Ubuntu: apt-get install gcc; macOS: xcode-select --install) and keep CGO_ENABLED=1;",
		"without it the checker still grades, but cannot catch data races")
}

// modules downloads the modules of root into the module cache; false,
// said, when it cannot.
func (d *Doctor) modules(ctx context.Context, tc *grade.Toolchain, root string) bool {
	if _, err := tc.Go(ctx, root, "mod", "download"); err != nil {
		d.say(false, fmt.Sprintf("modules: %v", err), "the modules are downloaded once; check the network, or GOPROXY")
		return false
	}
	d.say(true, "modules: all in the module cache")
	return true
}

// warm grades the first kata's reference (a kit's exercise: its reference
// is not in the module) under the race detector, which fills the build
// cache, and says the machine is ready when every check passed.
func (d *Doctor) warm(ctx context.Context, tc *grade.Toolchain) error {
	k := d.Catalog.Katas[0]
	t, what := grade.Reference(k), "reference"
	if d.Kit {
		var err error
		if t, err = grade.Learner(k); err != nil {
			return err
		}
		what = "exercise"
	}
	start := d.Now()
	emitter(d.Emit).emit(Warming{Kata: k.Slug})
	r, err := grade.Grade(ctx, tc, d.Catalog.Root, t, grade.DefaultOptions())
	emitter(d.Emit).emit(Warmed{})
	took := d.Now().Sub(start).Round(100 * time.Millisecond)
	switch {
	case err != nil:
		d.say(false, fmt.Sprintf("race build: %v", err))
	case what == "reference" && !r.Passed():
		d.say(false, fmt.Sprintf("race build warm, but %s's reference did not pass (%s): grading is not working here", k.Slug, r))
	default:
		d.say(true, fmt.Sprintf("race build warm: graded %s's %s in %s", k.Slug, what, took))
	}
	if !d.failed {
		emitter(d.Emit).emit(Ready{ID: k.ID()})
	}
	return nil
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
