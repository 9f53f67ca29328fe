package session

import (
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/record"
)

// ClockText shows a duration as m:ss, never negative.
func ClockText(d time.Duration) string { return record.ClockText(d) }

// readmeStory is the task's story: the README between its title block and
// its first section.
func readmeStory(k catalog.Kata) (string, error) {
	data, err := gofiles.ReadRegular(filepath.Join(k.Exercise, "README.md"))
	if err != nil {
		return "", err
	}
	var story []string
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if i == 0 || strings.HasPrefix(l, "**Difficulty:**") {
			continue
		}
		story = append(story, l)
	}
	return strings.TrimSpace(strings.Join(story, "\n")), nil
}

// followUps is the "What an interviewer asks next" section of WHY.md.
func followUps(k catalog.Kata) string {
	data, err := gofiles.ReadRegular(filepath.Join(k.Solution, "WHY.md"))
	if err != nil {
		return ""
	}
	var out []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "## ") {
			in = strings.TrimSpace(l[3:]) == "What an interviewer asks next"
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
