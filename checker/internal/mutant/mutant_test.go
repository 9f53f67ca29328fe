package mutant_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/mutant"
)

const header = "// Mistake: returns 0.\n// Fails: R1\n// Expect: (?i)zero\n\n"

// reference writes files into a fresh directory: name → content.
func reference(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	return dir
}

func numbered(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func TestApplyCleanPatch(t *testing.T) {
	dir := reference(t, map[string]string{"sum.go": "package sum\n\n// Sum adds.\nfunc Sum(a, b int) int {\n\treturn a + b\n}\n"})
	patch := header + `--- sum.go
+++ sum.go
@@ -3,4 +3,4 @@
 // Sum adds.
 func Sum(a, b int) int {
-	return a + b
+	return 0
 }
`
	m, err := mutant.Parse("zero", []byte(patch))
	require.NoError(t, err)
	assert.Equal(t, "returns 0.", m.Fields()["Mistake"])
	assert.Equal(t, "R1", m.Fields()["Fails"])
	srcs, err := m.Apply(dir)
	require.NoError(t, err)
	require.Len(t, srcs, 1)
	assert.Equal(t, "sum.go", srcs[0].Name)
	assert.Equal(t, header+"package sum\n\n// Sum adds.\nfunc Sum(a, b int) int {\n\treturn 0\n}\n", string(srcs[0].Data),
		"the header goes on top of the patched file")
}

func TestApplyRefusesContextThatDoesNotMatch(t *testing.T) {
	dir := reference(t, map[string]string{"sum.go": "package sum\n\n// Sum adds two ints.\nfunc Sum(a, b int) int {\n\treturn a + b\n}\n"})
	patch := header + `--- sum.go
+++ sum.go
@@ -3,4 +3,4 @@
 // Sum adds.
 func Sum(a, b int) int {
-	return a + b
+	return 0
 }
`
	m, err := mutant.Parse("zero", []byte(patch))
	require.NoError(t, err)
	_, err = m.Apply(dir)
	require.Error(t, err)
	assert.Equal(t, `mutant zero: sum.go: the hunk at line 7 of the patch (@@ -3,4 +3,4 @@) does not match the reference: `+
		`its line 3 is "// Sum adds two ints.", the patch expects "// Sum adds."`, err.Error())
	var mm *mutant.MismatchError
	require.ErrorAs(t, err, &mm)
	assert.Equal(t, 7, mm.Hunk.At)
}

func TestApplyRefusesARemovedLineThatDiffers(t *testing.T) {
	dir := reference(t, map[string]string{"a.go": "a\nb\nc\n"})
	m, err := mutant.Parse("x", []byte(header+"--- a.go\n+++ a.go\n@@ -2 +2 @@\n-B\n+x\n"))
	require.NoError(t, err)
	_, err = m.Apply(dir)
	assert.ErrorContains(t, err, `its line 2 is "b", the patch expects "B"`)
}

func TestMultipleFilesAndHunks(t *testing.T) {
	long := numbered(40, "line %d\n")
	dir := reference(t, map[string]string{"a.go": long, "b.go": "package b\n\nvar X = 1\n", "c.go": "untouched\n"})
	mutA := strings.Replace(strings.Replace(long, "line 5\n", "line five\n", 1), "line 30\n", "line 30\nextra\n", 1)
	mutB := "package b\n\nvar X = 2\n"
	patch, err := mutant.Format(map[string][]byte{"a.go": []byte(long), "b.go": []byte("package b\n\nvar X = 1\n")},
		[]mutant.Source{{Name: "a.go", Data: []byte(header + mutA)}, {Name: "b.go", Data: []byte(mutB)}})
	require.NoError(t, err)
	assert.Equal(t, header+`--- a.go
+++ a.go
@@ -2,7 +2,7 @@
 line 2
 line 3
 line 4
-line 5
+line five
 line 6
 line 7
 line 8
@@ -28,6 +28,7 @@
 line 28
 line 29
 line 30
+extra
 line 31
 line 32
 line 33
--- b.go
+++ b.go
@@ -1,3 +1,3 @@
 package b
 
-var X = 1
+var X = 2
`, string(patch))

	m, err := mutant.Parse("two", patch)
	require.NoError(t, err)
	require.Len(t, m.Files, 2)
	assert.Len(t, m.Files[0].Hunks, 2)
	srcs, err := m.Apply(dir)
	require.NoError(t, err)
	assert.Equal(t, []mutant.Source{{Name: "a.go", Data: []byte(header + mutA)}, {Name: "b.go", Data: []byte(mutB)}}, srcs,
		"only the changed files, the header on the first")
}

func TestNoNewlineAtEndOfFile(t *testing.T) {
	cases := []struct{ name, ref, mut, marker string }{
		{"the reference lacks it", "a\nb", "a\nc", "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"the mutant drops it", "a\nb\n", "a\nb", "-b\n+b\n\\ No newline at end of file\n"},
		{"the mutant adds it", "a\nb", "a\nb\n", "-b\n\\ No newline at end of file\n+b\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := reference(t, map[string]string{"f.go": c.ref})
			patch, err := mutant.Format(map[string][]byte{"f.go": []byte(c.ref)}, []mutant.Source{{Name: "f.go", Data: []byte(header + c.mut)}})
			require.NoError(t, err)
			assert.Contains(t, string(patch), c.marker)
			m, err := mutant.Parse("nl", patch)
			require.NoError(t, err)
			srcs, err := m.Apply(dir)
			require.NoError(t, err)
			assert.Equal(t, header+c.mut, string(srcs[0].Data))
		})
	}
}

func TestOffsetAndRefresh(t *testing.T) {
	long := numbered(30, "line %d\n")
	mut := strings.Replace(long, "line 20\n", "line twenty\n", 1)
	patch, err := mutant.Format(map[string][]byte{"a.go": []byte(long)}, []mutant.Source{{Name: "a.go", Data: []byte(header + mut)}})
	require.NoError(t, err)
	require.Contains(t, string(patch), "@@ -17,7 +17,7 @@")

	// Two lines added to the reference above the hunk: it still applies,
	// two lines further down; Refresh states the new lines.
	dir := reference(t, map[string]string{"a.go": "new 1\nnew 2\n" + long})
	m, err := mutant.Parse("twenty", patch)
	require.NoError(t, err)
	srcs, err := m.Apply(dir)
	require.NoError(t, err)
	assert.Equal(t, header+"new 1\nnew 2\n"+mut, string(srcs[0].Data))
	fresh, err := m.Refresh(dir)
	require.NoError(t, err)
	assert.Contains(t, string(fresh), "@@ -19,7 +19,7 @@")
	assert.Equal(t, strings.Replace(string(patch), "@@ -17,7 +17,7 @@", "@@ -19,7 +19,7 @@", 1), string(fresh))

	// A change to a line the hunk shows is a mismatch, not a guess.
	dir = reference(t, map[string]string{"a.go": strings.Replace(long, "line 19\n", "line 19 changed\n", 1)})
	_, err = m.Apply(dir)
	assert.ErrorContains(t, err, `mutant twenty: a.go: the hunk at line 7 of the patch (@@ -17,7 +17,7 @@) does not match the reference: its line 19 is "line 19 changed", the patch expects "line 19"`)
}

func TestParseRefusesMalformedPatches(t *testing.T) {
	cases := []struct{ name, patch, want string }{
		{"no header", "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\n", "want a header of // comment lines"},
		{"no empty line after the header", "// Mistake: x\n--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\n", "must end with one empty line"},
		{"code in the header", "// Mistake: x\npackage a\n\n--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\n", "line 2 of the header is not a // comment"},
		{"names differ", header + "--- a.go\n+++ b.go\n@@ -1 +1 @@\n-a\n+b\n", "line 6: want +++ a.go"},
		{"a directory", header + "--- x/a.go\n+++ x/a.go\n@@ -1 +1 @@\n-a\n+b\n", "named without a directory"},
		{"short hunk", header + "--- a.go\n+++ a.go\n@@ -1,2 +1,2 @@\n-a\n+b\n", "the patch ends inside the hunk at line 7"},
		{"long hunk", header + "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n-b\n+b\n", "line 9: more lines than the hunk at line 7 announces"},
		{"bad hunk header", header + "--- a.go\n+++ a.go\n@@ -x +1 @@\n-a\n+b\n", `line 7: "@@ -x +1 @@" is not a hunk header`},
		{"no hunk", header + "--- a.go\n+++ a.go\n", "a.go has no hunk"},
		{"a file twice", header + "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\n--- a.go\n+++ a.go\n@@ -2 +2 @@\n-c\n+d\n", "a.go is patched twice"},
		{"a stray line", header + "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-a\n+b\nstray\n", "line 10: want a file header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mutant.Parse("bad", []byte(c.patch))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "mutant bad: ")
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestApplyRefusesAFileTheReferenceLacks(t *testing.T) {
	dir := reference(t, map[string]string{"a.go": "a\n"})
	m, err := mutant.Parse("x", []byte(header+"--- b.go\n+++ b.go\n@@ -1 +1 @@\n-a\n+b\n"))
	require.NoError(t, err)
	_, err = m.Apply(dir)
	assert.EqualError(t, err, "mutant x: patches b.go, which the reference does not have")
}

func TestFormatRefusesNoChangeAndNoHeader(t *testing.T) {
	ref := map[string][]byte{"a.go": []byte("a\n")}
	_, err := mutant.Format(ref, []mutant.Source{{Name: "a.go", Data: []byte(header + "a\n")}})
	assert.ErrorContains(t, err, "the mutant's code is the reference's")
	_, err = mutant.Format(ref, []mutant.Source{{Name: "a.go", Data: []byte("b\n")}})
	assert.ErrorContains(t, err, "a mutant starts with its header")
	_, err = mutant.Format(ref, []mutant.Source{{Name: "z.go", Data: []byte(header + "b\n")}})
	assert.ErrorContains(t, err, "z.go is not a file of the reference")
}

// Format then Apply gives back the mutant exactly, for many random edits
// of a file: lines removed, added and changed, at the ends too, with and
// without a final newline.
func TestFormatApplyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		ref := randomFile(r, r.IntN(30))
		mut := edit(r, ref)
		if mut == ref {
			continue
		}
		dir := reference(t, map[string]string{"f.go": ref})
		patch, err := mutant.Format(map[string][]byte{"f.go": []byte(ref)}, []mutant.Source{{Name: "f.go", Data: []byte(header + mut)}})
		require.NoError(t, err, "case %d", i)
		m, err := mutant.Parse("rt", patch)
		require.NoError(t, err, "case %d:\n%s", i, patch)
		srcs, err := m.Apply(dir)
		require.NoError(t, err, "case %d:\n%s", i, patch)
		require.Equal(t, header+mut, string(srcs[0].Data), "case %d: ref %q\n%s", i, ref, patch)
	}
}

func randomFile(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "l%d\n", r.IntN(6)) // few distinct lines: many repeats
	}
	s := b.String()
	if s != "" && r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func edit(r *rand.Rand, s string) string {
	lines := strings.SplitAfter(s, "\n")
	for range 1 + r.IntN(4) {
		at := r.IntN(len(lines) + 1)
		switch r.IntN(3) {
		case 0:
			if at < len(lines) {
				lines = append(lines[:at], lines[at+1:]...)
			}
		case 1:
			lines = append(lines[:at], append([]string{fmt.Sprintf("new%d\n", r.IntN(3))}, lines[at:]...)...)
		case 2:
			if at < len(lines) {
				lines[at] = "changed\n"
			}
		}
	}
	out := strings.Join(lines, "")
	if r.IntN(5) == 0 {
		out = strings.TrimSuffix(out, "\n")
	}
	return out
}

// Diff of two sets of files: a file changed, one added, one removed, one
// the same; the same sets give no diff.
func TestDiffOfFileSets(t *testing.T) {
	old := map[string][]byte{"a.go": []byte("package a\n\nfunc A() {}\n"), "gone.go": []byte("package a\n"), "same.go": []byte("package a\n")}
	new := map[string][]byte{"a.go": []byte("package a\n\nfunc A() { panic(1) }\n"), "new.go": []byte("package a\n"), "same.go": []byte("package a\n")}
	assert.Equal(t, `--- a.go
+++ a.go
@@ -1,3 +1,3 @@
 package a
 
-func A() {}
+func A() { panic(1) }
--- gone.go
+++ gone.go
@@ -1 +0,0 @@
-package a
--- new.go
+++ new.go
@@ -0,0 +1 @@
+package a
`, mutant.Diff(old, new))
	assert.Empty(t, mutant.Diff(new, new))
}

func TestChanged(t *testing.T) {
	old := map[string][]byte{
		"a.go": []byte("a\nb\nc\nd\ne\n"),
		"b.go": []byte("x\ny\n"),
	}
	for want, new := range map[int]map[string][]byte{
		0: {"a.go": []byte("a\nb\n\nc\nd\n\ne\n"), "b.go": []byte("x\ny\n")},   // blank lines aside
		1: {"a.go": []byte("a\nB\nc\nd\ne\n"), "b.go": []byte("x\ny\n")},       // one line rewritten
		2: {"a.go": []byte("a\nb\nc\nd\ne\n"), "b.go": []byte("x\nw\ny\nz\n")}, // two lines added apart
		3: {"a.go": []byte("a\nB\nC\nc\nd\n"), "b.go": []byte("x\ny\n")},       // two for one, and one removed
		5: {"a.go": []byte("a\nb\nc\nd\ne\n"), "c.go": []byte("1\n2\n3\n")},    // a file removed, one added
	} {
		assert.Equal(t, want, mutant.Changed(old, new), "%q", new)
	}
}
