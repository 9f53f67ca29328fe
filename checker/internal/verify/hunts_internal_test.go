package verify

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/mutant"
)

func TestHuntsNeedASymptom(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "WHY.md"), []byte("# Why\n\n**`clk.Sleep`.** Deaf to cancel.\n"), 0o644))
	k := catalog.Kata{Slug: "06-retry", Solution: dir}
	m := func(name, header string) Mutant {
		return Mutant{Name: name, Patch: &mutant.Mutant{Name: name, Header: "// Mistake: m\n" + header + "\n"}}
	}
	good := []Mutant{
		m("clksleep", "// Symptom: a cancel waits.\n// Why: clk.Sleep"),
		m("other", "// Symptom: it hangs.\n// NoHunt: the symptom names the fix"),
	}
	assert.Equal(t, []line{{true, "bug hunts: 1 of 2 mutants have a symptom to hunt from"}}, hunts(k, good))

	bad := hunts(k, []Mutant{
		m("nosymptom", ""),
		m("twice", "// Symptom: a\n// Symptom: b"),
		m("badwhy", "// Symptom: a\n// Why: time.Sleep"),
		good[0],
	})
	require.Len(t, bad, 3, "one line per broken mutant, and no count")
	for i, want := range []string{
		"mutant nosymptom: its header needs a // Symptom: line",
		"mutant twice: its header has 2 // Symptom: lines; give it exactly one",
		`mutant badwhy: // Why: "time.Sleep" names no paragraph of WHY.md`,
	} {
		assert.False(t, bad[i].ok)
		assert.Contains(t, bad[i].text, want)
	}
}
