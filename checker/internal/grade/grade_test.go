package grade_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/verify"
)

// The fixtures in testdata/NN-slug are implementations with a known grade,
// such as a half-done one that passes some requirements and fails others.
// Their header says the verdict every requirement must get:
//
//	// Want: R1=pass R2=pass R3=assertion …
//
// Faults injected into the reference on one requirement's path (a panic
// in a background goroutine, a busy loop, a mutex locked twice, a race)
// are graded end to end by the scripts in ../cli/testdata/script.
func TestFixtures(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	tc, err := grade.Detect(context.Background(), os.Environ())
	require.NoError(t, err)
	opt := grade.DefaultOptions()

	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			k, ok := cat.Find(filepath.Base(filepath.Dir(f)))
			require.True(t, ok)
			path, _ := filepath.Abs(f)
			want := wantHeader(t, path)
			target, err := grade.Replacement(k, path)
			require.NoError(t, err)
			r, err := grade.Grade(context.Background(), tc, root, target, opt)
			require.NoError(t, err)
			got := map[string]string{}
			for id, v := range r.Verdicts() {
				got[id] = string(v.Kind)
			}
			assert.Equal(t, want, got, "%s", describe(r))
		})
	}
}

func wantHeader(t *testing.T, path string) map[string]string {
	h, err := verify.Header(path)
	require.NoError(t, err)
	require.NotEmpty(t, h["Want"], "%s has no // Want: header", path)
	want := map[string]string{}
	for _, kv := range strings.Fields(h["Want"]) {
		id, kind, _ := strings.Cut(kv, "=")
		want[id] = kind
	}
	return want
}

func describe(r *grade.Result) string {
	var lines []string
	for _, it := range r.Items {
		lines = append(lines, it.ID+" "+string(it.Kind)+": "+it.Message+" "+strings.Join(it.Detail, " | "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// The grader builds the code with a point after each synchronization
// statement, on the same line. A compile error is reported from the code
// as it is, so its column is the learner's, even on a line with a point.
func TestCompileErrorsNameTheLearnersColumns(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	k, ok := cat.Find("05")
	require.True(t, ok)
	tc, err := grade.Detect(context.Background(), os.Environ())
	require.NoError(t, err)

	ref, err := os.ReadFile(filepath.Join(k.Solution, "queue.go"))
	require.NoError(t, err)
	lines := strings.Split(string(ref), "\n")
	at := slices.Index(lines, "\tq.mu.Lock()")
	require.NotEqual(t, -1, at, "the reference locks q.mu on a line of its own")
	lines[at] += `; var _ int = "x"`
	file := filepath.Join(t.TempDir(), "queue.go")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644))
	target, err := grade.Replacement(k, file)
	require.NoError(t, err)

	r, err := grade.Grade(context.Background(), tc, root, target, grade.DefaultOptions())
	require.NoError(t, err)
	require.NotNil(t, r.Build, "%s", describe(r))
	col := strings.Index(lines[at], `"x"`) + 1 // the compiler counts a tab as one column
	got := strings.Join(r.Build.Lines, "\n")
	assert.Contains(t, got, fmt.Sprintf("%s:%d:%d: ", file, at+1, col))
	assert.NotContains(t, got, "Point", "the points are the grader's")
	assert.Nil(t, r.Unshaken)
}
