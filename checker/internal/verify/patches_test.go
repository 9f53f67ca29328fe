package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/verify"
)

const reference = `package tiny

// Add adds.
func Add(a, b int) int { return a + b }
`

const subtracts = `// Mistake: subtracts.
// Fails: R1
// Expect: (?i)sum

package tiny

// Add adds.
func Add(a, b int) int { return a - b }
`

// tinyKata is a kata of one reference file, tiny.go, and no mutants yet,
// in a new root.
func tinyKata(t *testing.T) (string, catalog.Kata) {
	t.Helper()
	root := t.TempDir()
	k := catalog.Kata{Slug: "99-tiny", Solution: filepath.Join(root, "solutions", "99-tiny")}
	require.NoError(t, os.MkdirAll(filepath.Join(k.Solution, "testdata", "mutants"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(k.Solution, "tiny.go"), []byte(reference), 0o644))
	return root, k
}

// A mutant saved from its source is listed, and shown as the same source.
func TestSaveListShowMutant(t *testing.T) {
	root, k := tinyKata(t)
	var b strings.Builder
	err := verify.ListMutants(root, k, &b)
	var ue *verify.UsageError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, "kata 99-tiny has no mutants in solutions/99-tiny/testdata/mutants", ue.Msg)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "minus.go"), []byte(subtracts), 0o644))
	require.NoError(t, verify.SaveMutants(root, dir, k, []string{"minus.go"}, &b))
	assert.Regexp(t, `^saved solutions/99-tiny/testdata/mutants/minus.patch \(\d+ lines\)\n$`, b.String())

	b.Reset()
	require.NoError(t, verify.ListMutants(root, k, &b))
	assert.Equal(t, "minus                  subtracts.\n", b.String())
	b.Reset()
	require.NoError(t, verify.ShowMutant(root, k, "minus", &b))
	assert.Equal(t, subtracts, b.String())
	err = verify.ShowMutant(root, k, "nosuch", &b)
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, `kata 99-tiny has no mutant "nosuch"; its mutants are: minus`, ue.Msg)
}

// What --save cannot store is a usage error that names the file.
func TestSaveMutantsRefuses(t *testing.T) {
	root, k := tinyKata(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain.go"), []byte(reference), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "minus.txt"), []byte(subtracts), 0o644))
	for file, want := range map[string]string{
		"plain.go":   "plain.go: ",
		"minus.txt":  "minus.txt: a mutant source is NAME.go, and NAME names the mutant",
		"missing.go": "cannot read missing.go",
	} {
		err := verify.SaveMutants(root, dir, k, []string{file}, &strings.Builder{})
		var ue *verify.UsageError
		require.ErrorAs(t, err, &ue, file)
		assert.True(t, strings.HasPrefix(ue.Msg, want), "%s: %s", file, ue.Msg)
	}
	stored, err := os.ReadDir(filepath.Join(k.Solution, "testdata", "mutants"))
	require.NoError(t, err)
	assert.Empty(t, stored)
}

// --refresh writes a patch again once the reference moved, and reports one
// that no longer applies.
func TestRefreshMutants(t *testing.T) {
	root, k := tinyKata(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "minus.go"), []byte(subtracts), 0o644))
	require.NoError(t, verify.SaveMutants(root, dir, k, []string{"minus.go"}, &strings.Builder{}))

	var b strings.Builder
	ok, err := verify.RefreshMutants([]catalog.Kata{k}, &b)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "mutant: 0 of 1 patches refreshed\n", b.String())

	ref := filepath.Join(k.Solution, "tiny.go")
	require.NoError(t, os.WriteFile(ref, []byte("// A line above.\n"+reference), 0o644))
	b.Reset()
	ok, err = verify.RefreshMutants([]catalog.Kata{k}, &b)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "99-tiny: refreshed minus\nmutant: 1 of 1 patches refreshed\n", b.String())

	require.NoError(t, os.WriteFile(ref, []byte(strings.Replace(reference, "a + b", "b + a", 1)), 0o644))
	b.Reset()
	ok, err = verify.RefreshMutants([]catalog.Kata{k}, &b)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Contains(t, b.String(), "99-tiny: mutant minus: tiny.go: ")
	assert.Contains(t, b.String(), "mutant: 0 of 1 patches refreshed\n")
}
