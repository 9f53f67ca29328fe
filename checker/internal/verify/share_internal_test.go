package verify

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShare(t *testing.T) {
	sh, err := ParseShare("1/3")
	require.NoError(t, err)
	assert.Equal(t, Share{K: 1, N: 3}, sh)
	for _, bad := range []string{"", "3/3", "-1/3", "1/0", "1", "1/3x", "a/b", " 1/3"} {
		_, err := ParseShare(bad)
		assert.Error(t, err, "ParseShare(%q)", bad)
	}
}

// Every mutant is in exactly one share of N, and each share holds some.
func TestSharesSplitTheMutants(t *testing.T) {
	const n = 3
	count := make([]int, n)
	for i := range 300 {
		name := fmt.Sprintf("mutant%d", i)
		in := 0
		for k := range n {
			if (Share{K: k, N: n}).has("06-retry", name) {
				in++
				count[k]++
			}
		}
		assert.Equal(t, 1, in, "%s is in %d shares", name, in)
		assert.True(t, Share{}.has("06-retry", name), "without a share every mutant is graded")
	}
	for k, c := range count {
		assert.Greater(t, c, 60, "share %d/%d holds only %d of 300", k, n, c)
	}
}
