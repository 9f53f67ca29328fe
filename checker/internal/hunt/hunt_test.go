package hunt_test

import (
	"go/format"
	"strings"
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
	assert.Equal(t, hunt.OneLine, bs[0].Level)
	assert.Equal(t, hunt.Reasoning, bs[1].Level)
	assert.Empty(t, bs[2].Level, "a NoHunt mutant needs no level")
	assert.Equal(t, []string{"minus", "triple"}, hunt.Names(hunt.Huntable(bs)))
}

func TestReadRefusesBadHeaders(t *testing.T) {
	for name, header := range map[string]string{
		"no symptom":   "// Mistake: m\n",
		"two":          "// Symptom: a\n// Symptom: b\n",
		"empty":        "// Symptom:\n",
		"empty nohunt": "// Symptom: a\n// NoHunt:\n",
		"two whys":     "// Symptom: a\n// Why: x\n// Why: y\n// Level: one-line\n",
		"no level":     "// Symptom: a\n",
		"bad level":    "// Symptom: a\n// Level: easy\n",
		"two levels":   "// Symptom: a\n// Level: one-line\n// Level: schedule\n",
	} {
		_, err := hunt.Read(&mutant.Mutant{Name: "m", Header: header + "\n"})
		assert.ErrorContains(t, err, "mutant m:", name)
	}
	_, err := hunt.Read(&mutant.Mutant{Name: "m", Header: "// Symptom: a\n\n"})
	assert.EqualError(t, err, "mutant m: its header needs a // Level: line (one-line, reasoning, schedule or wild), or a // NoHunt: line")
	_, err = hunt.Read(&mutant.Mutant{Name: "m", Header: "// Symptom: a\n// Level: easy\n\n"})
	assert.EqualError(t, err, `mutant m: // Level: no level "easy"; the levels are one-line, reasoning, schedule or wild`)
	b, err := hunt.Read(&mutant.Mutant{Name: "m", Header: "// Symptom: a\n// Level: easy\n// NoHunt: the gate names it\n\n"})
	require.NoError(t, err, "a NoHunt mutant's level is not read")
	assert.Empty(t, b.Level)
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
		b, err := hunt.Pick(bs, "", "minus", func(n int) int {
			assert.Equal(t, 1, n, "minus is left out, and twin is no hunt")
			return i % n
		})
		require.NoError(t, err)
		assert.Equal(t, "triple", b.Name)
	}
	seen := map[string]bool{}
	for i := range 2 {
		b, err := hunt.Pick(bs, "", "", func(n int) int { return i % n })
		require.NoError(t, err)
		seen[b.Name] = true
	}
	assert.Equal(t, map[string]bool{"minus": true, "triple": true}, seen)
	b, err := hunt.Pick(bs[:1], "", "minus", func(n int) int { return 0 })
	require.NoError(t, err)
	assert.Equal(t, "minus", b.Name, "the only hunt of a kata comes back")
	_, err = hunt.Pick(bs[2:], "", "", func(n int) int { return 0 })
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

func TestPickAtALevel(t *testing.T) {
	bs := bugs(t)
	for _, last := range []string{"", "minus"} {
		b, err := hunt.Pick(bs, hunt.OneLine, last, func(n int) int {
			assert.Equal(t, 1, n, "only minus is one-line")
			return 0
		})
		require.NoError(t, err)
		assert.Equal(t, "minus", b.Name, "the only hunt of its level comes back")
	}
	_, err := hunt.Pick(bs, hunt.Schedule, "", func(n int) int { return 0 })
	assert.EqualError(t, err, "no hunt at level schedule in this kata; it has 1 one-line, 1 reasoning")
}

func TestProgressive(t *testing.T) {
	bs := bugs(t)
	assert.Equal(t, hunt.OneLine, hunt.Progressive(bs, nil), "the lowest level first")
	assert.Equal(t, hunt.Reasoning, hunt.Progressive(bs, []hunt.Level{hunt.OneLine}))
	assert.Equal(t, hunt.OneLine, hunt.Progressive(bs, []hunt.Level{hunt.Reasoning}), "a level not yet solved, though a higher one was")
	assert.Equal(t, hunt.Level(""), hunt.Progressive(bs, []hunt.Level{hunt.OneLine, hunt.Reasoning}),
		"every level of the kata solved (it has no schedule hunt): any level")
}

func TestFixSize(t *testing.T) {
	bs := bugs(t)
	for _, b := range bs[:2] {
		n, err := hunt.FixSize(kata, b)
		require.NoError(t, err)
		assert.Equal(t, 1, n, b.Name)
	}
}

func TestFindable(t *testing.T) {
	ref := map[string][]byte{"q.go": []byte(`package q

import "errors"

// ErrFull is returned when the queue is full.
var ErrFull = errors.New("queue: full, try later")

func put(n int) error {
	pending := n
	if pending > 3 {
		return fmt.Errorf("queue: %d items waiting behind this one: %w", pending, ErrFull)
	}
	return nil
}
`)}
	stub := map[string][]byte{"q.go": []byte("package q\n\nfunc Put(items int) error { panic(\"TODO: implement Put\") }\n")}
	code := hunt.Code{Reference: ref, Planted: ref, Stub: stub}
	for symptom, want := range map[string][]string{
		"Put failed at once with 3 orders in the basket.":                          nil,
		"Put said QUEUE: FULL, TRY LATER with one order in the basket.":            {`"queue: full, try later"`, "queue full try later"},
		"the error said 7 items waiting behind this one.":                          {"items waiting behind this one"},
		"a log showed `pending` at 4, and `items` at 4 too; `put` ran once.":       {"`pending`"},
		"it is returned when the queue is full, they say, and the queue was empty": {"is returned when the queue is full"},
		"the word ErrFull alone is no quote, nor is errors or the word todo":       nil,
	} {
		assert.Equal(t, want, hunt.Findable(symptom, code), symptom)
	}
}

func TestResembles(t *testing.T) {
	ref, err := hunt.Reference(kata)
	require.NoError(t, err)
	planted, err := hunt.Plant(kata, bugs(t)[0])
	require.NoError(t, err)
	src := string(planted["counter.go"])
	assert.True(t, hunt.Resembles("counter.go", planted["counter.go"], ref), "as planted")
	fixed := strings.Replace(src, "return a - b", "// fixed\n\treturn b + a", 1)
	assert.True(t, hunt.Resembles("counter.go", []byte(fixed), ref), "fixed, a comment added")
	mine := "package counter\n\n" + strings.Repeat("var x = 1\n", hunt.MaxFix+1)
	assert.False(t, hunt.Resembles("counter.go", []byte(mine), ref, planted), "more than MaxFix lines away")
	assert.False(t, hunt.Resembles("other.go", planted["counter.go"], ref), "a file the versions do not have")
	assert.False(t, hunt.Resembles("counter.go", []byte("package ("), ref), "no Go")
}
