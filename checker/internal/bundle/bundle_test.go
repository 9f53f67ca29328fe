package bundle

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRepositoryCheckerPacksNothing(t *testing.T) {
	files, err := Files()
	require.NoError(t, err)
	assert.Empty(t, files)
}

func TestRoundTrip(t *testing.T) {
	files := map[string][]byte{
		"06-retry/retry_test.go":                   []byte("package retry\n\nfunc TestR1_Grows(t *testing.T) {}\n"),
		"06-retry/helpers_test.go":                 []byte("package retry\n"),
		"01-fanout/fanout_test.go":                 []byte("package fanout\n"),
		"06-retry/reveal.json":                     []byte(`{"decisions": ["**Attempts, not retries.**"], "hints": []}`),
		"06-retry/retry.go":                        []byte("package retry\n\nfunc Do() {}\n"),
		"06-retry/testdata/mutants/clksleep.patch": []byte("// Mistake: x\n\n--- retry.go\n"),
		SettingsFile:                               []byte(`{"interview": true}`),
	}
	src, err := Source(files)
	require.NoError(t, err)
	assert.NotContains(t, string(src), "TestR1_Grows", "not readable as it is")
	assert.NotContains(t, string(src), "Attempts, not retries", "not readable as it is")
	m := regexp.MustCompile(`const packed = "([^"]*)"`).FindSubmatch(src)
	require.NotNil(t, m, "%s", src)
	got, err := decode(string(m[1]))
	require.NoError(t, err)
	assert.Equal(t, files, got)
	assert.True(t, bytes.HasPrefix(src, []byte("// Code generated")))
}

func TestDecodeRefusesPaths(t *testing.T) {
	for _, name := range []string{"../evil_test.go", "/etc/x_test.go", "a/b/c_test.go", "top_test.go",
		"06-retry/testdata/mutants/x.go", "06-retry/testdata/other/x.patch", "06-retry/testdata/mutants/a/x.patch",
		"06-retry/../../x.patch", "internal/../../x.go"} {
		src, err := Source(map[string][]byte{name: []byte("x")})
		require.NoError(t, err)
		m := regexp.MustCompile(`const packed = "([^"]*)"`).FindSubmatch(src)
		_, err = decode(string(m[1]))
		assert.Error(t, err, name)
	}
}
