package catalog

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gokata/checker/internal/gofiles"
)

// CheckReadme reports every place where the kata's README.md and its
// metadata disagree: the title line, the difficulty line, and the lists
// under Ask first, Requirements and Bonus (kata.json) and Decisions
// (reveal.json).
func CheckReadme(k Kata) []string {
	data, err := gofiles.ReadRegular(filepath.Join(k.Exercise, "README.md"))
	if err != nil {
		return []string{err.Error()}
	}
	text := string(data)
	var problems []string
	lines := strings.Split(text, "\n")
	if want := fmt.Sprintf("# %s · %s", k.ID(), k.Title); lines[0] != want {
		problems = append(problems, fmt.Sprintf("README title is %q, kata.json says %q", lines[0], want))
	}
	if want := fmt.Sprintf("**Difficulty:** %s · **Time:** %d min", k.Difficulty, k.Minutes); !strings.Contains(text, want) {
		problems = append(problems, fmt.Sprintf("README lacks the line %q", want))
	}
	expect := map[string][]string{
		"Ask first":    numbered(k.Ask),
		"Decisions":    bullets(k.Decisions),
		"Requirements": items(k.Requirements),
		"Bonus":        items(k.Bonus),
	}
	for _, sec := range []string{"Ask first", "Decisions", "Requirements", "Bonus"} {
		source := "kata.json"
		if sec == "Decisions" {
			source = RevealFile
		}
		got := listUnder(lines, sec)
		if !slices.Equal(got, expect[sec]) {
			problems = append(problems, fmt.Sprintf("README section %q differs from %s:\n  README:    %q\n  %-10s %q", sec, source, got, source+":", expect[sec]))
		}
	}
	return problems
}

var listRE = regexp.MustCompile(`^(- |\d+\. )`)

// listUnder returns the list items (one line each) of the "## sec" section.
func listUnder(lines []string, sec string) []string {
	var out []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			in = strings.TrimSpace(l[3:]) == sec
			continue
		}
		if in && listRE.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

func numbered(ss []string) []string {
	var out []string
	for i, s := range ss {
		out = append(out, fmt.Sprintf("%d. %s", i+1, s))
	}
	return out
}

func bullets(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, "- "+s)
	}
	return out
}

func items(its []Item) []string {
	var out []string
	for _, it := range its {
		out = append(out, fmt.Sprintf("- **%s** %s", it.ID, it.Text))
	}
	return out
}
