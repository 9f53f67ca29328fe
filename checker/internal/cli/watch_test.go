package cli_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/cli"
	"gokata/checker/internal/verify"
)

// watch grades at once, again on every save, and on a pass offers the
// next kata, which Enter starts.
func TestWatch(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	next := after(t, dir, k.Slug)
	nextBefore := snapshot(t, next.Exercise)
	w := start(t, dir, cli.Env{Clock: slowBuilds{clock.New()}}, "watch", "06", "--poll=10ms", "--color=never")
	at := w.out.await(t, 0, "Score: 0/7 required")
	at = w.out.await(t, at, "Watching exercises/06-retry: save to grade again")

	for _, f := range sources(t, k.Solution) { // the learner saves a solution
		write(t, filepath.Join(k.Exercise, filepath.Base(f)), read(t, f))
	}
	saved := snapshot(t, k.Exercise)
	at = w.out.await(t, at, "Score: 7/7 required")
	at = w.out.await(t, at, "06-retry passes. Press Enter to go on to "+next.Slug)

	w.typeLine(t, "")
	at = w.out.await(t, at, next.Slug+" · ")
	w.out.await(t, at, "Watching exercises/"+next.Slug)
	assert.Equal(t, cli.ExitInterrupted, w.stop(t))
	assert.Empty(t, withoutBuildLines(w.errb.String()), "nothing on stderr but the slow builds")
	assert.Contains(t, w.errb.String(), "checker: building 06-retry under the race detector")
	assert.Contains(t, w.errb.String(), "checker: building "+next.Slug+" under the race detector")
	assert.Equal(t, saved, snapshot(t, k.Exercise), "watch never writes the learner's files")
	assert.Equal(t, nextBefore, snapshot(t, next.Exercise), "nor those of the kata it moves on to")

	r := run(t, dir, "list")
	assert.Regexp(t, `(?m)^06  .*passed`, r.stdout, "watch records its grades")
	assert.Regexp(t, `(?m)^`+next.ID()+`  .* \d+ of \d+$`, r.stdout, "graded, not passed")
}

// after is the kata that follows slug in the catalog, wrapping around.
func after(t *testing.T, dir, slug string) catalog.Kata {
	t.Helper()
	cat, err := catalog.Load(dir)
	require.NoError(t, err)
	for i, k := range cat.Katas {
		if k.Slug == slug {
			return cat.Katas[(i+1)%len(cat.Katas)]
		}
	}
	t.Fatalf("no kata %s", slug)
	return catalog.Kata{}
}

// watch -v shows what the code printed under a failed requirement, as
// check -v does.
func TestWatchVerbose(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	ms, err := verify.Mutants(k)
	require.NoError(t, err)
	i := slices.IndexFunc(ms, func(m verify.Mutant) bool { return m.Name == "returnsvalue" })
	require.GreaterOrEqual(t, i, 0, "mutant returnsvalue")
	srcs, err := ms[i].Sources(k)
	require.NoError(t, err)
	src := string(srcs[0].Data)
	src = strings.Replace(src, "\t\tif p.BeforeSleep != nil {", "\t\tfmt.Println(\"about to pause\", pause)\n\t\tif p.BeforeSleep != nil {", 1)
	write(t, filepath.Join(k.Exercise, "retry.go"), src)
	w := start(t, dir, cli.Env{}, "watch", "06", "-v", "--poll=10ms", "--color=never")
	at := w.out.await(t, 0, "✘ R7 ")
	at = w.out.await(t, at, "your code printed, in TestR7_")
	w.out.await(t, at, "│ about to pause 10ms")
	assert.Equal(t, cli.ExitInterrupted, w.stop(t))
	assert.NotContains(t, w.out.String(), "V=1", "shown already")
}
