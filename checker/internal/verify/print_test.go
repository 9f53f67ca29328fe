package verify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/catalog"
)

func TestPrintNamesTheFailuresAgainLast(t *testing.T) {
	katas := []catalog.Kata{{Slug: "01-fanout"}, {Slug: "02-first-wins"}}
	p := &plan{lines: [][]line{
		{{true, "reference passes"}, {false, "mutant a not caught"}},
		{{true, "stub fails"}},
	}}
	var out strings.Builder
	good := p.print(&out, katas, catchTotal{})
	assert.False(t, good)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	assert.Equal(t, "verify: 2 passed, 1 failed", lines[len(lines)-2])
	assert.Equal(t, "  ✘ 01-fanout: mutant a not caught", lines[len(lines)-1])

	p.lines[0][1].ok = true
	out.Reset()
	assert.True(t, p.print(&out, katas, catchTotal{}))
	assert.True(t, strings.HasSuffix(out.String(), "verify: 3 passed, 0 failed\n"))
}
