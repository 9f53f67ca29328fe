package grade_test

import (
	"context"
	"os"
	"path/filepath"
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
	opt := grade.DefaultOptions

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
