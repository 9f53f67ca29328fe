package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/golden"
)

// The help texts are generated from the verb table; the golden files show
// them whole, so that a change to any verb's wording shows in review.
func TestHelpGolden(t *testing.T) {
	for _, c := range []struct {
		file string
		all  bool
	}{{"help.golden", true}, {"help-kit.golden", false}} {
		t.Run(c.file, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", c.file), []byte(helpFor(c.all)))
		})
	}
	t.Run("verbs.golden", func(t *testing.T) {
		var b strings.Builder
		for _, v := range verbs {
			b.WriteString("$ checker " + v.name + " -h\n" + verbHelp(v) + "\n")
		}
		golden.Check(t, filepath.Join("testdata", "verbs.golden"), []byte(b.String()))
	})
}

// Every flag a verb defines has a help string and is in the help: under
// the verb, or among the shared flags with the verb named; and in the
// verb's own -h.
func TestEveryFlagInHelp(t *testing.T) {
	text := helpFor(true)
	shared := text[strings.Index(text, "\nFlags that several verbs take:"):]
	for _, v := range verbs {
		entry := helpEntry(t, text, v.name)
		own := verbHelp(v)
		for _, f := range flagsOf(v) {
			assert.NotEmpty(t, f.Usage, "%s --%s has no help", v.name, f.Name)
			name := regexp.QuoteMeta(dashes(f.Name)) + `\b`
			assert.Regexp(t, `(?m)^  `+name, own, "%s -h lists %s", v.name, dashes(f.Name))
			underVerb := regexp.MustCompile(`(?m)^    ` + name).MatchString(entry)
			inShared := regexp.MustCompile(`(?m)^  ` + name + `.*\n(?:   .*\n)*? +for (?:.*, )?` + v.name + `(?:,|$)`).MatchString(shared)
			assert.True(t, underVerb || inShared, "help lists %s for %s neither under it nor among the shared flags", dashes(f.Name), v.name)
		}
	}
}

// A kit's help has no entry for a verb the kit does not have, keeps every
// other one, and leaves no empty heading or double blank line behind.
func TestKitHelp(t *testing.T) {
	all, kit := helpFor(true), helpFor(false)
	for _, v := range verbs {
		assert.Regexp(t, `(?m)^  `+v.name+`\b`, all, "the repository's help has %s", v.name)
		if v.kitless != "" {
			assert.NotRegexp(t, `(?m)^  `+v.name+`\b`, kit)
		} else {
			assert.Regexp(t, `(?m)^  `+v.name+`\b`, kit)
		}
	}
	for _, gone := range []string{"show it now, before a pass", "--repeat-correct", "out of sight", "Maintainers:"} { // solution --give-up; a bug hunt's --give-up stays
		assert.NotContains(t, kit, gone)
	}
	assert.Contains(t, kit, "Interviews and workshops:\n  interview NN")
	assert.NotRegexp(t, `\n\n\n`, kit)
}

// helpEntry is the part of help about one verb: its line and the lines
// indented below it.
func helpEntry(t *testing.T, text, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + `\b.*\n(?:   .*\n)*`).FindString(text)
	require.NotEmpty(t, m, "help has no entry for %s", name)
	return m
}

func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
