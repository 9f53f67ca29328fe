package grade

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

// A test's scenarios vary from run to run when it calls katatest.Repeat or
// Explore, directly or
// through the test files' own functions and methods, whatever name its file
// gives the harness.
func TestReadHiddenFindsRepeat(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	write("main_test.go", `package k
import ("testing"; "gokata/internal/katatest")
func TestMain(m *testing.M) { katatest.Main(m) }
func TestR1_Direct(t *testing.T) { katatest.Repeat(t, 20, func(h *katatest.H) {}) }
func TestR2_Once(t *testing.T) { katatest.Run(t, func(h *katatest.H) { helperOnce(h) }) }
func TestR3_ViaHelper(t *testing.T) { scenario[int](t) }
func TestR4_ViaMethod(t *testing.T) { var f fixture; f.many(t) }
func TestB1_Recursive(t *testing.T) { loop(t) }
func scenario[T any](t *testing.T) { many(t) }
func many(t *testing.T) { katatest.Repeat(t, 3, func(h *katatest.H) {}) }
func helperOnce(h *katatest.H) {}
func loop(t *testing.T) { loop(t) }
`)
	write("alias_test.go", `package k
import ("testing"; kt "gokata/internal/katatest")
type fixture struct{}
func (fixture) many(t *testing.T) { kt.Repeat(t, 3, func(h *kt.H) {}) }
func TestR5_Alias(t *testing.T) { kt.Repeat(t, 3, func(h *kt.H) {}) }
`)
	write("other_test.go", `package k
import "testing"
type katatest struct{}
func (katatest) Repeat() {}
func TestR6_NotTheHarness(t *testing.T) { var katatest katatest; katatest.Repeat() }
`)
	write("explore_test.go", `package k
import ("testing"; "gokata/internal/katatest")
func TestR7_Explores(t *testing.T) { katatest.Explore(t, 9, nil, func(h *katatest.H, s int) {}) }
`)
	h, err := readHidden(catalog.Kata{Slug: "00-k", Solution: dir})
	require.NoError(t, err)
	assert.Equal(t, []string{"TestR5_Alias", "TestR7_Explores", "TestR1_Direct", "TestR2_Once", "TestR3_ViaHelper", "TestR4_ViaMethod", "TestB1_Recursive", "TestR6_NotTheHarness"}, h.names)
	assert.Equal(t, map[string]bool{"TestR1_Direct": true, "TestR3_ViaHelper": true, "TestR4_ViaMethod": true, "TestR5_Alias": true,
		"TestR7_Explores": true}, h.scheduling)
}

func TestReadHiddenOfTheKatas(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	k, ok := cat.Find("10")
	require.True(t, ok)
	h, err := readHidden(k)
	require.NoError(t, err)
	assert.True(t, h.scheduling["TestR1_RacingSubmittersNeverPanic"], "it repeats its scenario in fresh bubbles")
	assert.False(t, h.scheduling["TestR4_RepeatedShutdownReturnsTheSameResult"])
}

// A learner's own tests (catch) are every test the go command would run,
// each graded by itself, and need no TestMain: the grader brings one.
func TestReadOwnTests(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mine_test.go")
	require.NoError(t, os.WriteFile(p, []byte(`package k
import ("testing"; "gokata/internal/katatest")
func TestRetry(t *testing.T) {}
func TestR1_LikeHidden(t *testing.T) { katatest.Repeat(t, 3, func(h *katatest.H) {}) }
func Test(t *testing.T) {}
func Testable(t *testing.T) {}
func TestTwo(t *testing.T, n int) {}
func TestBench(b *testing.B) {}
func BenchmarkX(b *testing.B) {}
func helper(t *testing.T) {}
`), 0o644))
	h, err := readTests(catalog.Kata{Slug: "00-k", Solution: dir}, []string{p}, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"TestRetry", "TestR1_LikeHidden", "Test"}, h.names)
	assert.Equal(t, map[string]string{"TestRetry": "TestRetry", "TestR1_LikeHidden": "TestR1_LikeHidden", "Test": "Test"}, h.itemOf)
	assert.Equal(t, map[string]bool{"TestR1_LikeHidden": true}, h.scheduling)
}
