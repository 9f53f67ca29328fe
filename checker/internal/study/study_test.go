package study_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/study"
	"gokata/checker/internal/verify"
)

func TestCategoriesAddUpToTheStudy(t *testing.T) {
	for _, c := range study.Categories {
		_, err := study.Find(c.Key)
		assert.NoError(t, err)
	}
	assert.Equal(t, study.Total, sum(study.Categories))
	_, err := study.Find("blocking/nothing")
	assert.ErrorContains(t, err, `no study category "blocking/nothing"; the categories are blocking/mutex, `)
}

// docs/authoring.md shows the table checker mutant --study prints, as the
// mutants' headers make it now.
func TestAuthoringShowsTheCurrentTable(t *testing.T) {
	root, table := currentTable(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "authoring.md"))
	require.NoError(t, err)
	const start, end = "<!-- checker mutant --study -->\n", "<!-- end -->"
	_, rest, ok := strings.Cut(string(doc), start)
	require.True(t, ok, "docs/authoring.md has no %q", start)
	shown, _, ok := strings.Cut(rest, end)
	require.True(t, ok, "docs/authoring.md has no %q after the table", end)
	assert.Equal(t, table, shown, "docs/authoring.md shows an old coverage table: paste bin/checker mutant --study in")
}

// Every category of the study has a mutant (make verify proves each is
// caught).
func TestEveryCategoryHasAMutant(t *testing.T) {
	_, table := currentTable(t)
	assert.Contains(t, table, "Every category has at least one mutant.")
}

// currentTable returns the project's root and the coverage table its
// mutants make now.
func currentTable(t *testing.T) (root, table string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	cat, err := catalog.Load(root)
	require.NoError(t, err)
	var b strings.Builder
	require.NoError(t, verify.StudyTable(cat.Katas, &b))
	return root, b.String()
}

func sum(cs []study.Category) int {
	n := 0
	for _, c := range cs {
		n += c.Bugs
	}
	return n
}
