package hunt_test

import (
	"go/format"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/internal/failure"
)

const kata = "testdata/kata"

func bugs(t *testing.T) []hunt.Bug {
	t.Helper()
	bs, err := hunt.Bugs(kata)
	require.NoError(t, err)
	require.Len(t, bs, 3)
	return bs
}

func TestReadHeader(t *testing.T) {
	bs := bugs(t)
	assert.Equal(t, "minus", bs[0].Name)
	assert.Equal(t, "the totals come out too small.", bs[0].Symptom)
	assert.Equal(t, "subtracts b instead of adding it.", bs[0].Mistake)
	assert.Equal(t, "subtracting", bs[0].Why)
	assert.Equal(t, []string{"B1"}, bs[1].Fails)
	assert.Equal(t, "the same bug as minus", bs[2].NoHunt)
	assert.Equal(t, []string{"minus", "triple"}, hunt.Names(hunt.Huntable(bs)))
}

func TestReadRefusesBadHeaders(t *testing.T) {
	for name, header := range map[string]string{
		"no symptom":   "// Mistake: m\n",
		"two":          "// Symptom: a\n// Symptom: b\n",
		"empty":        "// Symptom:\n",
		"empty nohunt": "// Symptom: a\n// NoHunt:\n",
		"two whys":     "// Symptom: a\n// Why: x\n// Why: y\n",
	} {
		_, err := hunt.Read(&mutant.Mutant{Name: "m", Header: header + "\n"})
		assert.ErrorContains(t, err, "mutant m:", name)
	}
}

func TestPlantStripsHeaderAndBodyComments(t *testing.T) {
	bs := bugs(t)
	files, err := hunt.Plant(kata, bs[0])
	require.NoError(t, err)
	require.Len(t, files, 1, "the reference's files only, never its tests")
	got := string(files["counter.go"])
	assert.Contains(t, got, "return a - b", "the mutant is planted")
	assert.NotContains(t, got, "Mistake", "the header is left out")
	assert.NotContains(t, got, "Symptom")
	assert.NotContains(t, got, "never the difference", "a comment in a body would give the bug away")
	assert.NotContains(t, got, "twice, not three times", "a comment in a function literal too")
	assert.Contains(t, got, "// Add returns a+b.\nfunc Add(a, b int) int {\n\treturn a - b\n}", "doc comments stay; a comment's line goes with it")
	assert.Contains(t, got, "\t\treturn a * 2\n", "a comment at the end of a line goes, the code stays")
	assert.Contains(t, got, "// Package counter adds and doubles.\npackage counter")
	formatted, err := format.Source(files["counter.go"])
	require.NoError(t, err)
	assert.Equal(t, got, string(formatted), "gofmt-clean")
}

func TestPickNeverRepeatsTheLastHunt(t *testing.T) {
	bs := bugs(t)
	for i := range 2 {
		b, err := hunt.Pick(bs, "minus", func(n int) int {
			assert.Equal(t, 1, n, "minus is left out, and twin is no hunt")
			return i % n
		})
		require.NoError(t, err)
		assert.Equal(t, "triple", b.Name)
	}
	seen := map[string]bool{}
	for i := range 2 {
		b, err := hunt.Pick(bs, "", func(n int) int { return i % n })
		require.NoError(t, err)
		seen[b.Name] = true
	}
	assert.Equal(t, map[string]bool{"minus": true, "triple": true}, seen)
	b, err := hunt.Pick(bs[:1], "minus", func(n int) int { return 0 })
	require.NoError(t, err)
	assert.Equal(t, "minus", b.Name, "the only hunt of a kata comes back")
	_, err = hunt.Pick(bs[2:], "", func(n int) int { return 0 })
	assert.ErrorIs(t, err, hunt.ErrNoHunt)
}

func TestFind(t *testing.T) {
	bs := bugs(t)
	b, err := hunt.Find(bs, "triple")
	require.NoError(t, err)
	assert.Equal(t, "triple", b.Name)
	_, err = hunt.Find(bs, "nope")
	assert.EqualError(t, err, `no mutant "nope"; pick one of: minus triple`)
	_, err = hunt.Find(bs, "twin")
	assert.EqualError(t, err, "mutant twin is not used for bug hunts (the same bug as minus); pick one of: minus triple")
}

func TestWhy(t *testing.T) {
	bs := bugs(t)
	why, err := hunt.Why(kata, bs[0])
	require.NoError(t, err)
	assert.Equal(t, "**Subtracting.** A difference is not a sum: `a - b` answers another question.", why)
	why, err = hunt.Why(kata, bs[1])
	require.NoError(t, err)
	assert.Empty(t, why, "no Why line")
	b := bs[1]
	b.Why = "double by three"
	why, err = hunt.Why(kata, b)
	require.NoError(t, err)
	assert.Equal(t, "**`Double` by three.** Three is not two.", why)
	b.Why = "halving"
	_, err = hunt.Why(kata, b)
	assert.ErrorContains(t, err, `names no paragraph of WHY.md`)
}

func TestFixed(t *testing.T) {
	pass := grade.Verdict{Kind: failure.Pass}
	fail := grade.Verdict{Kind: failure.Assertion}
	result := func(r1, b1 grade.Verdict) *grade.Result {
		return &grade.Result{Items: []grade.ItemResult{
			{Item: catalog.Item{ID: "R1"}, Verdict: r1},
			{Item: catalog.Item{ID: "B1"}, Bonus: true, Verdict: b1},
		}}
	}
	bs := bugs(t)
	minus, triple := bs[0], bs[1]
	assert.True(t, hunt.Fixed(minus, result(pass, fail)), "minus fails R1 only: the bonus is not its business")
	assert.False(t, hunt.Fixed(minus, result(fail, pass)))
	assert.False(t, hunt.Fixed(triple, result(pass, fail)), "triple fails B1: fixed only when B1 passes")
	assert.True(t, hunt.Fixed(triple, result(pass, pass)))
}

// Every mutant of every kata plants into gofmt-clean code without its
// header. (verify checks the hunt headers: hunt.Read, hunt.Why.)
func TestEveryKataPlants(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	n := 0
	for _, k := range cat.Katas {
		ms, err := mutant.All(k.Solution)
		require.NoError(t, err)
		for _, m := range ms {
			files, err := hunt.Plant(k.Solution, hunt.Bug{Name: m.Name, Patch: m})
			require.NoError(t, err, "%s %s", k.Slug, m.Name)
			for name, data := range files {
				formatted, err := format.Source(data)
				require.NoError(t, err, "%s %s %s", k.Slug, m.Name, name)
				assert.Equal(t, string(formatted), string(data), "%s %s %s", k.Slug, m.Name, name)
				assert.NotContains(t, string(data), "// Mistake:", "%s %s %s", k.Slug, m.Name, name)
			}
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 4*len(cat.Katas))
}

// Every mutant's hunt header reads, and its Why names a paragraph of its
// kata's WHY.md (verify says the same, slower).
func TestEveryHuntHeader(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	for _, k := range cat.Katas {
		bs, err := hunt.Bugs(k.Solution)
		require.NoError(t, err, k.Slug)
		assert.GreaterOrEqual(t, len(hunt.Huntable(bs)), 2, "%s: a new hunt differs from the last", k.Slug)
		for _, b := range bs {
			_, err := hunt.Why(k.Solution, b)
			assert.NoError(t, err, k.Slug)
		}
	}
}

func TestAPI(t *testing.T) {
	files := map[string][]byte{
		"a.go": []byte("package a\n\nconst Max, min = 1, 2\n\ntype Service[T any] struct{}\n\nfunc (s *Service[T]) Stop() {}\n\nfunc (s *Service[T]) drain() {}\n\ntype inner struct{}\n\nfunc (inner) Hidden() {}\n"),
		"b.go": []byte("package a\n\nvar ErrClosed error\n\nfunc New() {}\n\nfunc helper() {}\n"),
	}
	assert.Equal(t, []string{"ErrClosed", "Max", "New", "Service", "Service.Stop"}, hunt.API(files))
}

func TestReferenceIsPlantWithoutTheBug(t *testing.T) {
	ref, err := hunt.Reference(kata)
	require.NoError(t, err)
	planted, err := hunt.Plant(kata, bugs(t)[0])
	require.NoError(t, err)
	assert.Equal(t, "--- counter.go\n+++ counter.go\n@@ -3,7 +3,7 @@\n \n // Add returns a+b.\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n \n // Double returns 2a.\n",
		mutant.Diff(planted, ref))
}
