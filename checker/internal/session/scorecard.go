package session

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
)

// Scorecard renders an ended interview for the interviewer, in Markdown.
func Scorecard(iv *Interview) string {
	k, r := iv.Kata, iv.Last
	var b strings.Builder
	fmt.Fprintf(&b, "# Interview scorecard · %s · %s\n\n", k.ID(), k.Title)
	if iv.Candidate != "" {
		fmt.Fprintf(&b, "- **Candidate:** %s\n", iv.Candidate)
	}
	fmt.Fprintf(&b, "- **Date:** %s\n", iv.Start.Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "- **Time used:** %s of %s (asking first: %s)\n", ClockText(iv.Used), ClockText(iv.Limit), ClockText(iv.Asked))
	req, total, bonus, btotal := r.Score()
	fmt.Fprintf(&b, "- **Requirements passed:** %d of %d", req, total)
	if btotal > 0 {
		fmt.Fprintf(&b, " · **bonus:** %d of %d", bonus, btotal)
	}
	fmt.Fprintf(&b, "\n- **Hints used:** %d of %d\n", iv.HintsUsed(), len(k.Hints))
	fmt.Fprintf(&b, "- **Decisions read before the interview showed them:** %s\n", decisionsEarly(iv))
	fmt.Fprintf(&b, "- **Grades:** %d (one per save)\n", iv.Grades)
	switch {
	case r.Build != nil:
		fmt.Fprintf(&b, "- **Last code:** does not compile\n")
	case len(r.Gate) > 0:
		fmt.Fprintf(&b, "- **Last code:** uses the real clock or a call the grader does not allow\n")
	}
	itemTable(&b, iv, "Requirements", false)
	if btotal > 0 {
		itemTable(&b, iv, "Bonus", true)
	}
	fmt.Fprintf(&b, "\n## Did the candidate ask first?\n\nTick what they asked before coding (or found out by asking later):\n\n")
	for _, q := range k.Ask {
		fmt.Fprintf(&b, "- [ ] %s\n", q)
	}
	fmt.Fprintf(&b, "\n## Follow-up questions\n\n")
	if f := followUps(k); f != "" {
		fmt.Fprintf(&b, "%s\n", f)
	} else {
		fmt.Fprintf(&b, "This copy has no %s.\n", filepath.Join("solutions", k.Slug, "WHY.md"))
	}
	fmt.Fprintf(&b, "\n## Notes\n\n\n")
	return b.String()
}

// decisionsEarly says whether the candidate read the decisions before the
// interview revealed them.
func decisionsEarly(iv *Interview) string {
	switch {
	case iv.DecisionsRead != nil:
		return fmt.Sprintf("yes, with `decisions %s` (first at %s)", iv.Kata.ID(), iv.DecisionsRead.In(iv.Start.Location()).Format("2006-01-02 15:04"))
	case iv.KeptBack:
		return "no"
	}
	return "not with `decisions`; in this copy the task README shows them too (an interview kit keeps them back)"
}

// itemTable is the scorecard's table of the required or the bonus items.
func itemTable(b *strings.Builder, iv *Interview, title string, bonus bool) {
	fmt.Fprintf(b, "\n## %s\n\n| | | first passed at | verdict |\n| --- | --- | --- | --- |\n", title)
	for _, it := range iv.Last.Items {
		if it.Bonus != bonus {
			continue
		}
		mark, when, verdict := "✘", "", string(it.Kind)
		if at, ok := iv.FirstPass[it.ID]; ok {
			when = ClockText(at)
		}
		if it.Passed() {
			mark, verdict = "✔", "pass"
		} else if it.Message != "" {
			verdict += ": " + it.Message
		}
		fmt.Fprintf(b, "| %s | **%s** %s | %s | %s |\n", mark, it.ID, cell(it.Text), when, cell(verdict))
	}
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// ClockText shows a duration as m:ss, never negative.
func ClockText(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

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
