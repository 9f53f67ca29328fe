package tokensim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/tokensim"
)

const retry = `package retry

import "time"

// Pause is the wait before attempt n.
func Pause(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n; i++ {
		d *= 2
	}
	return d
}

// Attempts counts what Do calls.
func Attempts(max int) int {
	if max < 1 {
		return 1
	}
	return max
}
`

func tokens(src string) []string {
	return tokensim.Tokens(map[string]string{"retry.go": src})
}

// Comments, blank lines, indentation and where the semicolons come from
// are not tokens that count; names and literals are.
func TestTokensIgnoreCommentsAndLayout(t *testing.T) {
	relaid := strings.NewReplacer("\t", "    ", "// Pause is the wait before attempt n.\n", "/* the wait */", "\n\n", "\n").Replace(retry)
	relaid = strings.Replace(relaid, "return 1\n", "return 1;\n", 1)
	require.NotEqual(t, retry, relaid)
	assert.Equal(t, tokens(retry), tokens(relaid))
	assert.Equal(t, 1.0, tokensim.Similarity(tokens(retry), tokens(relaid)))

	renamed := strings.ReplaceAll(retry, "d ", "pause ")
	assert.NotEqual(t, tokens(retry), tokens(renamed))
	assert.Equal(t, []string{"package", "retry", ";", "import", `"time"`, ";", "func", "Pause", "("}, tokens(retry)[:9])
}

// Files are read in name order, so a map's order does not matter, and
// code that does not scan is taken as far as it goes.
func TestTokensOfSeveralFilesAndBadSource(t *testing.T) {
	two := map[string]string{"b.go": "package x\nvar B = 2\n", "a.go": "package x\nvar A = 1\n"}
	assert.Equal(t, []string{"package", "x", ";", "var", "A", "=", "1", ";", "package", "x", ";", "var", "B", "=", "2", ";"}, tokensim.Tokens(two))
	assert.Equal(t, []string{"package", "x", ";", "var", "a", "=", "#", "\x1b"}, tokens("package x\nvar a = # \x1b\n"))
	assert.Empty(t, tokens(""))
}

func TestSimilarity(t *testing.T) {
	ref := tokens(retry)
	assert.Equal(t, 1.0, tokensim.Similarity(ref, ref), "identical")
	assert.Equal(t, 0.0, tokensim.Similarity(nil, nil), "nothing to compare")
	assert.Equal(t, 0.0, tokensim.Similarity(ref, nil))
	assert.Equal(t, 0.0, tokensim.Similarity(ref, tokens("package other\nvar unrelated = []int{4, 5, 6}\n")))
	assert.Equal(t, 1.0, tokensim.Similarity([]string{"a", "b"}, []string{"a", "b"}), "shorter than a run: one run each")
	assert.Equal(t, 0.0, tokensim.Similarity([]string{"a", "b"}, []string{"b", "a"}))

	// The two functions swapped: only the runs across the seam differ.
	pause, attempts, _ := strings.Cut(strings.TrimPrefix(retry, "package retry\n\nimport \"time\"\n\n"), "// Attempts")
	swapped := "package retry\n\nimport \"time\"\n\n// Attempts" + attempts + "\n" + pause
	s := tokensim.Similarity(ref, tokens(swapped))
	assert.Greater(t, s, 0.85, "moving code around does not hide it")
	assert.Less(t, s, 1.0)

	// One function of the two kept: about half.
	half := tokensim.Similarity(ref, tokens("package retry\n\nfunc Attempts(max int) int {\n\tif max < 1 {\n\t\treturn 1\n\t}\n\treturn max\n}\n"))
	assert.InDelta(t, 0.4, half, 0.15)

	// A run counts as often as it occurs: the same code twice is not the
	// same code.
	twice := tokensim.Similarity(ref, append(append([]string{}, ref...), ref...))
	assert.InDelta(t, 0.5, twice, 0.02)
	assert.Equal(t, tokensim.Similarity(ref, tokens(swapped)), tokensim.Similarity(tokens(swapped), ref), "symmetric")
}

func TestPercentRoundsDown(t *testing.T) {
	assert.Equal(t, 100, tokensim.Percent(1))
	assert.Equal(t, 99, tokensim.Percent(0.999))
	assert.Equal(t, 93, tokensim.Percent(0.93))
	assert.Equal(t, 29, tokensim.Percent(0.29))
	assert.Equal(t, 90, tokensim.Percent(0.9))
	assert.Equal(t, 0, tokensim.Percent(0))
}
