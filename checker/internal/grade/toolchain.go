package grade

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// Toolchain is how the grader runs the go command.
type Toolchain struct {
	Env    []string // environment of every go command and test binary
	Race   bool     // the race detector is available (cgo and a C compiler)
	NoRace string   // why not, when Race is false
	Kit    *Kit     // a candidate kit's own copies of the grader's files; nil in the repository
	// TempDir is where a grade puts its overlays and the test binary:
	// the TMPDIR of Env, under which the go command and the test binary
	// put theirs too; "" is os.TempDir().
	TempDir string
}

// Kit is what a candidate kit's checker carries of the grader's files (the
// harness, go.mod, go.sum), unpacked from its binary: the build uses these
// and never the kit's files on disk, which the candidate can edit.
type Kit struct {
	Overlay map[string]string // file of the checkout → its copy ("" leaves out a file the grader does not have)
	ModFile string            // the grader's go.mod, with its go.sum beside it (go build -modfile)
	Dir     string            // where the copies are: compared before and after every run too
}

// fixedEnv is set for every go command and test binary the checker runs:
// no go.mod edits, no toolchain downloads, no 1 s sleep at the exit of
// every race-enabled binary, every data race reported each time it happens
// (by default the detector reports a pair of stacks once per process, so
// only the first test to race would fail), and goroutine dumps in the form
// the checker reads, whatever the learner's shell sets.
// The build is for this machine and this module alone: a GOOS or GOARCH
// left in the environment (for another CPU, say) or a go.work in a parent
// directory must not change what is built.
var fixedEnv = []string{"GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local", "GORACE=atexit_sleep_ms=0 suppress_equal_stacks=0", "GOTRACEBACK=all",
	"GOWORK=off", "GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH}

// buildGC is the GOGC of the compiler, the linker and vet, which the
// grader runs for every version graded: they allocate much and live
// briefly, and collecting a quarter as often makes a build about a tenth
// cheaper in CPU, for some 50 MB more. The test binary keeps the
// learner's GOGC.
const buildGC = "GOGC=400"

// BuildEnv is Env for the go commands that build or vet.
func (tc *Toolchain) BuildEnv() []string { return WithEnv(tc.Env, buildGC) }

// SetupError is a problem with this machine's setup, not with the code
// graded: nothing can be graded until it is fixed.
type SetupError struct {
	Problem string // what is wrong, naming the variable
	Fix     string // what to do
}

func (e *SetupError) Error() string { return e.Problem }

// Detect finds the go command and whether -race can be used, and checks
// that the go command has its caches: without a module cache every build
// fails (an overlay is refused "beneath GOMODCACHE ()"), which must not
// read as the code's failure.
func Detect(ctx context.Context, env []string) (*Toolchain, error) {
	tc := &Toolchain{Env: WithEnv(env, fixedEnv...), TempDir: lookup(env, "TMPDIR")}
	cmd := exec.CommandContext(ctx, "go", "env", "CGO_ENABLED", "CC", "GOMODCACHE", "GOCACHE")
	cmd.Env = tc.Env
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go env: %s", strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("cannot run the go command (install Go 1.25 or newer): %w", err)
	}
	lines := append(strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"), "", "", "", "")
	cgo, cc, modcache, cache := lines[0], strings.Fields(lines[1] + " gcc")[0], lines[2], lines[3]
	if err := caches(env, modcache, cache); err != nil {
		return nil, err
	}
	switch {
	case cgo != "1":
		tc.NoRace = "cgo is disabled (CGO_ENABLED=0)"
	default:
		if _, err := exec.LookPath(cc); err != nil {
			tc.NoRace = fmt.Sprintf("no C compiler (%s not found)", cc)
		}
	}
	tc.Race = tc.NoRace == ""
	return tc, nil
}

// lookup is the value of key in env (the last one set), or "".
func lookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == key {
			v = val
		}
	}
	return v
}

// caches explains a missing module or build cache.
func caches(env []string, modcache, cache string) error {
	set := func(key string) bool { return lookup(env, key) != "" }
	switch {
	case modcache == "":
		return &SetupError{
			Problem: "the go command has no module cache: GOMODCACHE is empty, because none of GOMODCACHE, GOPATH and HOME is set",
			Fix:     "export HOME=/home/you (or GOMODCACHE and GOCACHE, to directories of yours), then run the checker again"}
	case cache == "off" && set("GOCACHE"):
		return &SetupError{
			Problem: "the go command has no build cache: GOCACHE=off, and go test needs one",
			Fix:     "unset GOCACHE, then run the checker again"}
	case cache == "off" || cache == "":
		return &SetupError{
			Problem: "the go command has no build cache: GOCACHE is off, because none of GOCACHE, XDG_CACHE_HOME and HOME is set",
			Fix:     "export HOME=/home/you (or GOCACHE, to a directory of yours), then run the checker again"}
	}
	return nil
}

// WithEnv returns env with each KEY=value of set replacing any earlier KEY.
func WithEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	keys := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// Go runs the go command in dir with the toolchain's environment and
// returns its trimmed output; on failure the error carries the output.
func (tc *Toolchain) Go(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, tc.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}
