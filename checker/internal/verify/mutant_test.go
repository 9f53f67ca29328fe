package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/mutant"
)

func TestNewMutantReadsItsHeader(t *testing.T) {
	const diff = "--- sum.go\n+++ sum.go\n@@ -1,1 +1,1 @@\n-\treturn a + b\n+\treturn 0\n"
	parse := func(header string) (Mutant, error) {
		p, err := mutant.Parse("zero", []byte(header+"\n"+diff))
		require.NoError(t, err)
		return NewMutant(p)
	}
	m, err := parse("// Mistake: returns 0.\n// Fails: R3 B2\n// Sometimes: B1\n// Expect: (?i)zero\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"B2", "R3"}, m.Fails)
	assert.Equal(t, []string{"B1"}, m.Sometimes)
	assert.True(t, m.Expect.MatchString("got Zero"))

	_, err = parse("// Mistake: returns 0.\n// Fails: R3\n// Sometimes: R3\n// Expect: zero\n")
	assert.ErrorContains(t, err, "in both Fails: and Sometimes:")
	_, err = parse("// Mistake: returns 0.\n// Expect: zero\n")
	assert.ErrorContains(t, err, "needs Mistake:, Fails: and Expect:")
	_, err = parse("// Mistake: returns 0.\n// Fails: R1\n// Expect: (unclosed\n")
	assert.ErrorContains(t, err, "Expect:")
}
