package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
)

// huntKata is a kata with a reference of one function, its stub and a
// WHY.md, and a maker of mutants whose patch turns a + b into change.
func huntKata(t *testing.T) (catalog.Kata, func(name, header, change string) Mutant) {
	dir := t.TempDir()
	k := catalog.Kata{Slug: "06-retry", Solution: filepath.Join(dir, "solution"), Exercise: filepath.Join(dir, "exercise")}
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(k.Solution, "WHY.md"), "# Why\n\n**`clk.Sleep`.** Deaf to cancel.\n")
	write(filepath.Join(k.Solution, "add.go"), "package add\n\n// Add returns the sum of two prices.\nfunc Add(a, b int) int {\n\ttotal := a + b\n\treturn total\n}\n")
	write(filepath.Join(k.Exercise, "add.go"), "package add\n\n// Add returns the sum of two prices.\nfunc Add(a, b int) int {\n\tpanic(\"TODO: implement Add\")\n}\n")
	return k, func(name, header, change string) Mutant {
		hunk := fmt.Sprintf("@@ -2,6 +2,%d @@\n", 5+strings.Count("\n"+change, "\n+"))
		p, err := mutant.Parse(name, []byte("// Mistake: m\n"+header+"\n\n--- add.go\n+++ add.go\n"+hunk+" \n // Add returns the sum of two prices.\n func Add(a, b int) int {\n-\ttotal := a + b\n"+change+" \treturn total\n }\n"))
		require.NoError(t, err)
		return Mutant{Name: name, Patch: p}
	}
}

func TestHuntsNeedASymptomAndALevel(t *testing.T) {
	k, m := huntKata(t)
	good := []Mutant{
		m("clksleep", "// Symptom: a cancel waits.\n// Why: clk.Sleep\n// Level: one-line", "+\ttotal := a - b\n"),
		m("other", "// Symptom: it hangs.\n// NoHunt: the symptom names the fix", "+\ttotal := a - b\n"),
	}
	assert.Equal(t, []line{{true, "bug hunts: 1 of 2 mutants have a symptom to hunt from"}}, hunts(k, good))

	bad := hunts(k, []Mutant{
		m("nosymptom", "// Level: one-line", "+\ttotal := a - b\n"),
		m("twice", "// Symptom: a\n// Symptom: b\n// Level: one-line", "+\ttotal := a - b\n"),
		m("badwhy", "// Symptom: a\n// Why: time.Sleep\n// Level: one-line", "+\ttotal := a - b\n"),
		m("nolevel", "// Symptom: a", "+\ttotal := a - b\n"),
		m("twolines", "// Symptom: the totals were off by one.\n// Level: one-line", "+\ttotal := a\n+\ttotal -= b\n"),
		m("quotes", "// Symptom: the log said `total` was 0; returns the sum of two prices, they said.\n// Level: one-line", "+\ttotal := a - b\n"),
		good[0],
	})
	require.Len(t, bad, 6, "one line per broken mutant, and no count")
	for i, want := range []string{
		"mutant nosymptom: its header needs a // Symptom: line",
		"mutant twice: its header has 2 // Symptom: lines; give it exactly one",
		`mutant badwhy: // Why: "time.Sleep" names no paragraph of WHY.md`,
		"mutant nolevel: its header needs a // Level: line (one-line, reasoning, schedule or wild",
		"mutant twolines: its // Level: is one-line, but its fix changes 2 lines of code: make it reasoning (or schedule), or the patch one line",
		"mutant quotes: its // Symptom: quotes what a search of the code finds (`total`, returns the sum of two prices): say what the user saw in words of their own",
	} {
		assert.False(t, bad[i].ok)
		assert.Contains(t, bad[i].text, want)
	}
}

// A hunt-able mutant whose grade shows a gate finding fails, since a
// hunt's first check would name the planted line; a NoHunt one does not.
func TestGateNamesAHunt(t *testing.T) {
	_, m := huntKata(t)
	r := &grade.Result{Gate: []gate.Finding{{File: "add.go", Line: 5, Rule: gate.RuleRealClock, Message: "time.Sleep uses the real clock"}}}
	got := gateNames(m("sleeps", "// Symptom: slow.\n// Level: one-line", "+\ttotal := a - b\n"), r)
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "the gate names the planted line (add.go:5: time.Sleep uses the real clock), so a bug hunt shows the answer at its first check: mark the mutant // NoHunt: with that reason")
	assert.Empty(t, gateNames(m("sleeps", "// Symptom: slow.\n// NoHunt: the gate names it", "+\ttotal := a - b\n"), r))
	assert.Empty(t, gateNames(m("sleeps", "// Symptom: slow.\n// Level: one-line", "+\ttotal := a - b\n"), &grade.Result{}))
}

// TestEveryKatasHuntsHold runs verify's static hunt checks (header, level,
// fix size, a symptom no search finds) over the shipped mutants, so that a
// new mutant's header fails here in seconds, not at the end of verify.
func TestEveryKatasHuntsHold(t *testing.T) {
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	for _, k := range cat.Katas {
		paths, err := mutant.Paths(k.Solution)
		require.NoError(t, err, k.Slug)
		var ms []Mutant
		for _, p := range paths {
			m, err := ParseMutant(p)
			require.NoError(t, err, p)
			ms = append(ms, m)
		}
		for _, l := range hunts(k, ms) {
			assert.True(t, l.ok, "%s: %s", k.Slug, l.text)
		}
	}
}
