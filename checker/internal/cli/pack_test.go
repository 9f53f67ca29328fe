package cli_test

import (
	"bytes"
	"debug/macho"
	"debug/pe"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/cli"
	"gokata/checker/internal/verify"
)

// A candidate kit holds the exercises and a checker with the hidden tests
// inside, no solutions and no test files; and it grades exactly like the
// repository, verdicts and messages alike.
func TestPackKitGradesLikeTheRepository(t *testing.T) {
	// Not parallel: it checks that no unpacked tests are left in the
	// temporary directory, where other tests' graders unpack theirs.
	dir := committedCheckout(t)
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)

	kit := filepath.Join(t.TempDir(), "kit")
	r := run(t, dir, "pack", "--out", kit, "06")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "not secret")

	var files []string
	require.NoError(t, filepath.WalkDir(kit, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(kit, p)
			files = append(files, rel)
		}
		return err
	}))
	assert.Contains(t, files, filepath.Join("bin", "checker"))
	assert.Contains(t, files, filepath.Join("exercises", "06-retry", "retry.go"))
	assert.Contains(t, files, "README.md")
	for _, f := range files {
		assert.False(t, strings.HasPrefix(f, "solutions"), "no solutions in the kit: %s", f)
		assert.False(t, strings.HasSuffix(f, "_test.go"), "no test sources in the kit: %s", f)
	}
	assert.Contains(t, read(t, filepath.Join(kit, "README.md")), "out\nof sight, not secret")
	assert.Contains(t, read(t, filepath.Join(kit, "README.md")), "make check EX=06", "examples name a kata of the kit")
	assert.Contains(t, read(t, filepath.Join(kit, "Makefile")), "make check EX=06")

	// The hints travel inside the checker: no kit file holds one, and hint
	// works as in the repository. A plain kit's README keeps the decisions.
	k := kata(t, dir)
	for _, f := range files {
		data := read(t, filepath.Join(kit, f))
		for i, h := range k.Hints {
			assert.NotContains(t, data, h.Text, "%s holds hint %d", f, i+1)
		}
	}
	assert.Contains(t, read(t, filepath.Join(kit, "exercises", "06-retry", "README.md")), "- "+k.Decisions[0])
	hint := exec.Command(filepath.Join(kit, "bin", "checker"), "hint", "06", "2")
	hint.Dir = kit
	shown, err := hint.CombinedOutput()
	require.NoError(t, err, "%s", shown)
	assert.Contains(t, string(shown), "Hint 2 of 3 for 06-retry")
	assert.Contains(t, string(shown), k.Hints[1].Text)

	again := run(t, dir, "pack", "--out", kit, "06")
	assert.Equal(t, 2, again.code, "packing into a kit that exists is a usage error: %s", again.stderr)
	assert.Contains(t, again.stderr, "not empty")
	bin, err := os.ReadFile(filepath.Join(kit, "bin", "checker"))
	require.NoError(t, err)
	names := hiddenNames(t, dir)
	require.NotEmpty(t, names)
	for _, n := range names {
		assert.False(t, bytes.Contains(bin, []byte(n)), "%s is readable in the binary", n)
	}

	unpacked := unpackedDirs()
	ms, err := verify.Mutants(k)
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	kitStub := filepath.Join(kit, "exercises", "06-retry", "retry.go")
	sameGrade := func(name, code string) {
		t.Helper()
		write(t, filepath.Join(k.Exercise, "retry.go"), code)
		write(t, kitStub, code)
		// One seed for both: a failed scenario's text names the scenario
		// drawn, which differs from one draw to the next.
		args := []string{"check", "06", "--json", "--name", "candidate", "--seed", "7"}
		repo := run(t, dir, args...)
		cmd := exec.Command(filepath.Join(kit, "bin", "checker"), args...)
		cmd.Dir = kit
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		exit := 0
		if ee, ok := err.(*exec.ExitError); ok {
			exit = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, repo.code, exit, "%s: exit code", name)
		// The same grade, fingerprints included; only the time differs.
		assert.Equal(t, unstamped(repo.stdout), unstamped(out.String()),
			"%s: the kit's grade differs from the repository's", name)
		assert.Empty(t, withoutBuildLines(errb.String()))
	}
	srcs, err := ms[0].Sources(k)
	require.NoError(t, err)
	sameGrade("a mutant", string(srcs[0].Data))
	sameGrade("the reference", read(t, filepath.Join(k.Solution, "retry.go")))

	// The kit grades with its own copies of the harness, go.mod and go.sum:
	// a harness that runs no test body, a file added to it, a go.mod that
	// cannot be satisfied change nothing.
	harness := filepath.Join(kit, "internal", "katatest", "katatest.go")
	runFunc := "func run(t *testing.T, dir string, rec *record, body func(h *H)) {"
	require.Contains(t, read(t, harness), runFunc)
	write(t, harness, strings.Replace(read(t, harness), runFunc, runFunc+"\n\tif true {\n\t\treturn\n\t}", 1))
	write(t, filepath.Join(kit, "internal", "katatest", "zz_extra.go"), "package katatest\n\nnot Go at all\n")
	gomod := filepath.Join(kit, "go.mod")
	write(t, gomod, read(t, gomod)+"\nrequire example.com/nowhere v1.0.0\n")
	sameGrade("the stub, in a kit whose harness was edited", read(t, filepath.Join(root, "exercises", "06-retry", "retry.go")))
	sameGrade("the reference, in a kit whose go.mod was edited", read(t, filepath.Join(k.Solution, "retry.go")))
	git(t, kit, "checkout", "--", ".")
	require.NoError(t, os.Remove(filepath.Join(kit, "internal", "katatest", "zz_extra.go")))
	assert.Equal(t, unpacked, unpackedDirs(), "the kit's checker leaves no unpacked tests behind")

	// What a kata may import is packed into the kit's checker: adding to
	// the kit's kata.json changes nothing.
	kataJSON := filepath.Join(kit, "exercises", "06-retry", "kata.json")
	meta := read(t, kataJSON)
	write(t, kataJSON, strings.Replace(meta, `"title":`, `"imports": ["os"], "title":`, 1))
	quit := filepath.Join(kit, "exercises", "06-retry", "quit.go")
	write(t, quit, "package retry\n\nimport \"os\"\n\nvar _ = os.Args\n")
	cmd := exec.Command(filepath.Join(kit, "bin", "checker"), "check", "06")
	cmd.Dir = kit
	out, _ := cmd.CombinedOutput()
	assert.Contains(t, string(out), `quit.go:3: import "os" is not allowed`)
	write(t, kataJSON, meta)
	require.NoError(t, os.Remove(quit))

	// reset works in the kit: the stubs are in its own one-commit history.
	cmd = exec.Command(filepath.Join(kit, "bin", "checker"), "reset", "06", "--force")
	cmd.Dir = kit
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, read(t, filepath.Join(root, "exercises", "06-retry", "retry.go")), read(t, kitStub))

	// The kit's help and verbs are the kit's: no maintainer verbs, and
	// one that cannot work there says why in one line.
	kitRun := func(args ...string) result {
		cmd := exec.Command(filepath.Join(kit, "bin", "checker"), args...)
		cmd.Dir = kit
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return result{code, out.String(), errb.String()}
	}
	h := kitRun("help")
	assert.Equal(t, 0, h.code)
	assert.Contains(t, h.stdout, "\n  check [NN...]")
	for _, verb := range []string{"verify", "pack", "solution"} {
		assert.NotRegexp(t, `(?m)^  `+verb+`\b`, h.stdout, "the kit's help lists no %s", verb)
	}
	for _, args := range [][]string{{"verify"}, {"verify", "06"}, {"pack", "--out", filepath.Join(t.TempDir(), "kit2")}, {"solution", "06", "--give-up"}} {
		r := kitRun(args...)
		assert.Equal(t, 2, r.code, "%v in a kit: %s", args, r.stderr)
		assert.Regexp(t, `^checker: [^\n]+\n$`, r.stderr, "%v in a kit: one line that says why", args)
		assert.Empty(t, r.stdout)
	}
	last := kitRun("hint", "06", "3")
	assert.Equal(t, 0, last.code, last.stderr)
	assert.Contains(t, last.stdout, "That is the last hint")
	assert.NotContains(t, last.stdout, "make solution", "a kit has no solution to give up to")
}

// A kit packed for another system has a checker built for it (cgo is not
// needed, so no C cross-compiler either): checker.exe for Windows. It is
// built here, not run.
func TestPackForAnotherSystem(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := committedCheckout(t)

	mac := filepath.Join(t.TempDir(), "mac")
	r := run(t, dir, "pack", "--out", mac, "--os", "darwin", "--arch", "arm64", "06")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "It runs on macOS on Apple silicon (darwin/arm64)")
	f, err := macho.Open(filepath.Join(mac, "bin", "checker"))
	require.NoError(t, err, "a Mach-O binary")
	assert.Equal(t, macho.CpuArm64, f.Cpu)
	f.Close()
	assert.Contains(t, read(t, filepath.Join(mac, "README.md")), "(darwin/arm64)")

	win := filepath.Join(t.TempDir(), "win")
	r = run(t, dir, "pack", "--out", win, "--os", "windows", "--arch", "amd64", "06")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Contains(t, r.stdout, "bin/checker.exe with their hidden tests inside")
	p, err := pe.Open(filepath.Join(win, "bin", "checker.exe"))
	require.NoError(t, err, "a Windows binary")
	assert.Equal(t, uint16(pe.IMAGE_FILE_MACHINE_AMD64), p.Machine)
	p.Close()
	assert.NoFileExists(t, filepath.Join(win, "bin", "checker"))
	assert.Contains(t, read(t, filepath.Join(win, "README.md")), "bin\\checker.exe check 06")
	assert.Contains(t, read(t, filepath.Join(win, "Makefile")), "CHECKER := bin/checker.exe")
}

// committedCheckout is a copy of the checkout, checker sources included,
// committed to a new git repository: what pack needs.
func committedCheckout(t *testing.T) string {
	t.Helper()
	dir := checkout(t)
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	require.NoError(t, copyPackSource(root, dir))
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "the katas")
	return dir
}

// copyPackSource copies into dst what pack needs beyond a checkout's
// katas: the checker's source and the guides a kit carries.
func copyPackSource(root, dst string) error {
	if err := copyTree(filepath.Join(root, "checker"), filepath.Join(dst, "checker")); err != nil {
		return err
	}
	return copyTree(filepath.Join(root, "docs"), filepath.Join(dst, "docs"))
}

// hiddenNames lists the hidden test functions of kata 06.
func hiddenNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	files, err := filepath.Glob(filepath.Join(kata(t, dir).Solution, "*_test.go"))
	require.NoError(t, err)
	for _, f := range files {
		for _, l := range strings.Split(read(t, f), "\n") {
			if rest, ok := strings.CutPrefix(l, "func Test"); ok && !strings.HasPrefix(rest, "Main(") {
				name, _, _ := strings.Cut(rest, "(")
				names = append(names, "Test"+name)
			}
		}
	}
	return names
}

// unpackedDirs lists the directories a kit's checker unpacks its tests in.
func unpackedDirs() []string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "kata-hidden-*"))
	return dirs
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

// gradeTimeRE is the line of a --json grade that says when it was made.
var gradeTimeRE = regexp.MustCompile(`(?m)^  "time": "[^"]*",\n`)

// seedRE is the seed an exploration drew its scenarios from, fresh in
// every check.
var seedRE = regexp.MustCompile(`seed \d+: check again with --seed \d+ \(make: SEED=\d+\)`)

// notRunRE names the test a skipped one defers to: the requirement's first
// test to fail in time, which on a loaded machine need not be the same in
// two checks of the stub (every one of its tests fails at once).
var notRunRE = regexp.MustCompile(`(not run: \w+) already failed in Test\w+`)

// scenarioRE is the failing scenario an exploration shows: the smallest
// one rapid reached while shrinking, which it does for a bounded time, so
// a slower machine can stop at a larger one from the same seed.
var scenarioRE = regexp.MustCompile(`"the scenario: [^"\n]*"`)

// unstamped is a --json grade without what differs from one check of the
// same code to the next: its time, its explorations' seeds and how far
// their failing scenarios were shrunk.
func unstamped(grade string) string {
	grade = gradeTimeRE.ReplaceAllString(grade, "")
	grade = scenarioRE.ReplaceAllString(grade, `"the scenario: S"`)
	grade = notRunRE.ReplaceAllString(grade, "${1} already failed in T")
	return seedRE.ReplaceAllString(grade, "seed S")
}

// pack's witness flags go together and must be a plain address and
// token, since they are written into the kit's Makefile.
func TestPackWitnessUsage(t *testing.T) {
	dir := checkout(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--witness", "http://10.0.0.2:8080"}, "--witness and --witness-token go together"},
		{[]string{"--witness-token", "takehome-2030"}, "--witness and --witness-token go together"},
		{[]string{"--witness", "10.0.0.2:8080", "--witness-token", "t"}, `--witness "10.0.0.2:8080" is not a witness's address`},
		{[]string{"--witness", "http://10.0.0.2:8080", "--witness-token", "a$(rm)"}, "must be a plain address and token"},
	} {
		r := run(t, dir, append([]string{"pack", "--out", filepath.Join(t.TempDir(), "kit")}, append(tc.args, "06")...)...)
		assert.Equal(t, cli.ExitUsage, r.code, tc.args)
		assert.Contains(t, r.stderr, tc.want, tc.args)
	}
}
