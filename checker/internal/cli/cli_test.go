package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/cli"
	"gokata/checker/internal/verify"
)

// These tests drive the checker end to end, as a user would: each works in
// its own copy of the checkout, edits the exercise the way a learner
// might, runs a verb, and reads the exit code and the output.

// dumpRE matches the header of a goroutine dump.
var dumpRE = regexp.MustCompile(`goroutine \d+ \[`)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runEnv(t, dir, cli.Env{}, args...)
}

// runEnv runs the checker in dir with env's clock and terminal flags.
func runEnv(t *testing.T, dir string, env cli.Env, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	env.Dir, env.Vars, env.Stdout, env.Stderr = dir, os.Environ(), &out, &errb
	code := cli.Run(context.Background(), args, env)
	return result{code, out.String(), errb.String()}
}

// checkout copies the repository's katas into a fresh directory.
func checkout(t *testing.T) string {
	t.Helper()
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	dst := t.TempDir()
	require.NoError(t, copyCheckout(root, dst))
	return dst
}

// copyCheckout copies what grading needs from the checkout at root to dst.
func copyCheckout(root, dst string) error {
	for _, p := range []string{"go.mod", "go.sum", "internal", "exercises", "solutions"} {
		if err := copyTree(filepath.Join(root, p), filepath.Join(dst, p)); err != nil {
			return err
		}
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

type grade struct {
	Schema int
	Passed bool
	Score  struct{ Required, RequiredTotal, Bonus, BonusTotal int }
	Build  *struct {
		Kind  string
		Lines []string
	}
	Items []struct {
		ID, Kind, Message string
		Detail            []string
	}
}

func checkJSON(t *testing.T, dir string) (grade, result) {
	t.Helper()
	r := run(t, dir, "check", "06", "--json")
	var g grade
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &g), "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	return g, r
}

func failing(g grade) []string {
	var ids []string
	for _, it := range g.Items {
		if it.Kind != "pass" {
			ids = append(ids, it.ID)
		}
	}
	return ids
}

func TestUsage(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	cases := []struct {
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"list"}, 0, "06  Retry", ""},
		{[]string{"help"}, 0, "Exit codes", ""},
		{nil, 2, "", "Usage"},
		{[]string{"frobnicate"}, 2, "", `unknown verb "frobnicate"`},
		{[]string{"check", "99"}, 2, "", `no kata "99"; the katas are: `},
		{[]string{"check", "abc"}, 2, "", `no kata "abc"`},
		{[]string{"check", "06", "--color=purple"}, 2, "", "use auto, always or never"},
		{[]string{"check", "06", "--nope"}, 2, "", "flag provided but not defined"},
		{[]string{"check"}, 1, "06-retry · ", ""}, // every kata: here, the untouched stub
		{[]string{"check", "01", "06"}, 1, "06-retry · ", ""},
		{[]string{"check", "06", "99"}, 2, "", `no kata "99"`},
		{[]string{"hint", "06"}, 0, "Hint 1 of", ""},
		{[]string{"hint", "06", "2"}, 0, "Hint 2 of", ""},
		{[]string{"hint", "06", "9"}, 2, "", "has hints 1 to"},
		{[]string{"hint"}, 2, "", "which kata?"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(t, dir, c.args...)
			assert.Equal(t, c.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			assert.Contains(t, r.stdout, c.out)
			assert.Contains(t, r.stderr, c.err)
			assert.NotRegexp(t, dumpRE, r.stderr, "no stack traces for bad input")
		})
	}
	r := run(t, t.TempDir(), "list")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "not inside the kata checkout")
}

func TestCheckUntouchedStub(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	r := run(t, dir, "check", "06", "--color=never")
	assert.Equal(t, 1, r.code, r.stdout+r.stderr)
	g, _ := checkJSON(t, dir)
	require.NotEmpty(t, g.Items)
	for _, it := range g.Items {
		assert.Equal(t, "not-implemented", it.Kind, it.ID)
	}
	assert.Equal(t, 0, g.Score.Required)
	assert.Contains(t, r.stdout, "not implemented: TODO")
	assert.Contains(t, r.stdout, "Score: 0/")
	assert.NotRegexp(t, dumpRE, r.stdout, "no goroutine dumps")
	assert.Empty(t, withoutBuildLines(r.stderr))
}

func TestCheckReferencePasses(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	for _, f := range sources(t, k.Solution) {
		write(t, filepath.Join(k.Exercise, filepath.Base(f)), read(t, f))
	}
	r := run(t, dir, "check", "06", "--color=never")
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	assert.Regexp(t, `Score: (\d+)/(\d+) required · bonus \d+/\d+`, r.stdout)
	g, _ := checkJSON(t, dir)
	assert.True(t, g.Passed)
	assert.Empty(t, failing(g), "the reference passes every requirement and bonus")
}

// Mutants, written over the stub as a learner would write them, fail
// exactly the requirements their headers list (and may fail those listed
// as Sometimes:), and check exits as a learner
// expects: 1 for a required mistake, 0 for a bonus one alone. verify grades
// every mutant of every kata the same way, through the same grading; this
// test checks what check itself adds (its JSON, its exit code) on three,
// the first in name order of each kind: one that fails a requirement, one
// that fails bonus items alone, one whose header has a Sometimes: line.
func TestCheckMutantsOverStub(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	ms, err := verify.Mutants(k)
	require.NoError(t, err)
	required := func(m verify.Mutant) bool {
		return slices.ContainsFunc(m.Fails, func(id string) bool { return strings.HasPrefix(id, "R") })
	}
	var sample []verify.Mutant
	for _, kind := range []func(verify.Mutant) bool{
		required,
		func(m verify.Mutant) bool { return !required(m) },
		func(m verify.Mutant) bool { return len(m.Sometimes) > 0 },
	} {
		i := slices.IndexFunc(ms, kind)
		require.GreaterOrEqual(t, i, 0, "kata %s has no mutant of each kind this test needs", k.Slug)
		if !slices.ContainsFunc(sample, func(m verify.Mutant) bool { return m.Name == ms[i].Name }) {
			sample = append(sample, ms[i])
		}
	}
	stub := filepath.Join(k.Exercise, k.Package+".go")
	for _, m := range sample {
		t.Run(m.Name, func(t *testing.T) {
			srcs, err := m.Sources(k)
			require.NoError(t, err)
			require.Len(t, srcs, 1)
			write(t, stub, string(srcs[0].Data))
			g, r := checkJSON(t, dir)
			wantCode := 0 // a mistake in a bonus follow-up alone does not fail the kata
			if required(m) {
				wantCode = 1
			}
			assert.Equal(t, wantCode, r.code)
			// As in verify: the items in Sometimes: may fail or pass; the
			// others fail exactly as Fails: says, each with Expect's message.
			always := slices.DeleteFunc(failing(g), func(id string) bool { return slices.Contains(m.Sometimes, id) })
			assert.Equal(t, m.Fails, slices.Sorted(slices.Values(always)), "the header's Fails: is sorted")
			for _, it := range g.Items {
				if it.Kind != "pass" && slices.Contains(m.Fails, it.ID) {
					assert.Regexp(t, m.Expect, it.Message+"\n"+strings.Join(it.Detail, "\n"), it.ID)
				}
			}
		})
	}
}

func TestCheckBrokenCode(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	cases := []struct {
		name  string
		edit  func(stub string) string
		extra map[string]string // more files in the exercise
		want  string            // in the text report
		kind  string            // of every item
	}{
		{
			name: "does not compile",
			edit: func(s string) string { return s + "\nfunc broken() { undefinedThing() }\n" },
			want: "exercises/06-retry/retry.go:", kind: "compile",
		},
		{
			name: "API differs",
			edit: func(s string) string { return strings.Replace(s, "func Do[", "func DoIt[", 1) },
			want: "Do is missing", kind: "api",
		},
		{
			name: "learner test files are left out",
			edit: func(s string) string { return s },
			extra: map[string]string{
				"mine_test.go":   "package retry\nimport (\"os\"; \"testing\")\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
				"broken_test.go": "package retry\nfunc nope() { this does not compile }\n",
			},
			want: "not implemented: TODO", kind: "not-implemented",
		},
		{
			name: "real clock",
			edit: func(s string) string {
				return s + "\nfunc since(t time.Time) time.Duration { return time.Since(t) }\n"
			},
			want: "time.Since uses the real clock", kind: "not-implemented",
		},
		{
			name: "forbidden call",
			edit: func(s string) string {
				return strings.Replace(s, "import (", "import (\n\t\"log\"", 1) + "\nfunc init() { log.Fatal(0) }\n"
			},
			want: "log.Fatal is not allowed", kind: "forbidden",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := checkout(t)
			k := kata(t, dir)
			stub := filepath.Join(k.Exercise, k.Package+".go")
			write(t, stub, c.edit(read(t, stub)))
			for name, content := range c.extra {
				write(t, filepath.Join(k.Exercise, name), content)
			}
			before := snapshot(t, k.Exercise)
			r := run(t, dir, "check", "06", "--color=never")
			assert.Equal(t, 1, r.code, r.stdout+r.stderr)
			assert.Contains(t, r.stdout, c.want)
			assert.NotRegexp(t, dumpRE, r.stdout)
			g, _ := checkJSON(t, dir)
			for _, it := range g.Items {
				assert.Equal(t, c.kind, it.Kind, it.ID)
			}
			assert.Equal(t, before, snapshot(t, k.Exercise), "check never writes the learner's files")
		})
	}
}

func kata(t *testing.T, dir string) catalog.Kata {
	t.Helper()
	cat, err := catalog.Load(dir)
	require.NoError(t, err)
	k, ok := cat.Find("06")
	require.True(t, ok)
	return k
}

func sources(t *testing.T, dir string) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return out
}

// snapshot records every file of dir with its content and time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		m[e.Name()] = read(t, filepath.Join(dir, e.Name())) + info.ModTime().Format(time.RFC3339Nano)
	}
	return m
}
