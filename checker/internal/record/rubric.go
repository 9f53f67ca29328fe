package record

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/escape"
)

// Rubric is the interviewer's judgement, filled in by hand in the record's
// JSON: a level and notes per competency, and a recommendation. A new
// record has every competency at level 0 (not assessed) and no
// recommendation.
type Rubric struct {
	Competencies   []Assessment `json:"competencies"`
	Recommendation string       `json:"recommendation"` // "", or one of recommendations
	Notes          string       `json:"notes"`
}

// Assessment is the level and the notes given to one competency.
type Assessment struct {
	Competency string `json:"competency"` // a Competency's Key
	Level      int    `json:"level"`      // 0: not assessed; 1 to 4 (levels)
	Notes      string `json:"notes"`
}

// Competency is what the interviewer assesses, with what each level
// looks like.
type Competency struct {
	Key, Name string
	Levels    [4]string // what levels 1 to 4 look like
}

// levels names the levels 1 to 4.
var levels = [4]string{"concern", "mixed", "solid", "strong"}

// recommendations are the values the recommendation may take.
var recommendations = []string{"strong no", "no", "yes", "strong yes"}

// competencies is the scale, written here once: the record carries it,
// the scorecard shows it and the interviewer guide shows the scorecard.
var competencies = []Competency{
	{"clarifying-questions", "Clarifying questions", [4]string{
		"started coding without asking anything",
		"asked one of the Ask-first questions, or asked only after a verdict showed the gap",
		"asked most of them before coding and said the contract back in their own words",
		"asked them all, plus what happens on cancel, when something is full or fails, and kept to the answers",
	}},
	{"correctness", "Correctness", [4]string{
		"fewer than half of the requirements pass",
		"half or more pass",
		"all but one pass, in every run of the final grade",
		"all pass, in every run of the final grade",
	}},
	{"concurrency-safety", "Concurrency safety", [4]string{
		"the final code races, leaks a goroutine or deadlocks",
		"safe only after a verdict pointed at the race or the leak",
		"safe in the final code, and they can say why",
		"safe from the first grade that compiled, and they can say what change would break it",
	}},
	{"testing-instinct", "Testing instinct", [4]string{
		"saved and waited for the grader to say what is wrong",
		"read the verdicts and reasoned from them",
		"named the failing case before the grade showed it",
		"named the cases that depend on scheduling or time, and how to test them on a fake clock",
	}},
	{"communication", "Communication", [4]string{
		"silent, or hard to follow",
		"explained when asked",
		"thought aloud and used a hint well",
		"laid out the trade-offs clearly enough to teach the design",
	}},
}

// NewRubric is the empty rubric a record starts with.
func NewRubric() Rubric {
	r := Rubric{}
	for _, c := range competencies {
		r.Competencies = append(r.Competencies, Assessment{Competency: c.Key})
	}
	return r
}

// unfilled names what the rubric still lacks: the competencies without a
// level, then "the recommendation"; none when it is complete.
func (r Rubric) unfilled() []string {
	var out []string
	for _, c := range competencies {
		if !slices.ContainsFunc(r.Competencies, func(a Assessment) bool { return a.Competency == c.Key && a.Level > 0 }) {
			out = append(out, c.Name)
		}
	}
	if r.Recommendation == "" {
		out = append(out, "the recommendation")
	}
	return out
}

func (r Rubric) check() error {
	for _, a := range r.Competencies {
		if !slices.ContainsFunc(competencies, func(c Competency) bool { return c.Key == a.Competency }) {
			return fmt.Errorf("no competency %q", a.Competency)
		}
		if a.Level < 0 || a.Level > len(levels) {
			return fmt.Errorf("%s: level %d is not 0 (not assessed) to %d", a.Competency, a.Level, len(levels))
		}
	}
	if r.Recommendation != "" && !slices.Contains(recommendations, r.Recommendation) {
		return fmt.Errorf("recommendation %q is none of: %s", r.Recommendation, strings.Join(recommendations, ", "))
	}
	return nil
}

// writeRubric is the scorecard's rubric: what is left to fill in, if
// anything, each competency's level (or a blank to fill), its notes, and
// the scale.
func writeRubric(b *strings.Builder, rec *Record) {
	r := rec.Rubric
	fmt.Fprintf(b, "\n## Rubric\n\n")
	switch left := r.unfilled(); {
	case len(left) == len(competencies)+1:
		fmt.Fprintf(b, "Fill in `rubric` in the record's JSON (level 1 to 4, notes, recommendation), then render this again with `checker scorecard RECORD`.\n\n")
	case len(left) > 0:
		fmt.Fprintf(b, "Still to fill in `rubric` in the record's JSON: %s; then render this again with `checker scorecard RECORD`.\n\n", strings.Join(left, ", "))
	}
	fmt.Fprintf(b, "| competency | level | notes |\n| --- | --- | --- |\n")
	for _, c := range competencies {
		level, notes := "_", ""
		for _, a := range r.Competencies {
			if a.Competency == c.Key {
				if a.Level > 0 {
					level = fmt.Sprintf("%d %s", a.Level, levels[a.Level-1])
				}
				notes = a.Notes
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", c.Name, level, escape.Cell(notes))
	}
	verdict := r.Recommendation
	if verdict == "" {
		verdict = "_ (" + strings.Join(recommendations, ", ") + ")"
	}
	fmt.Fprintf(b, "\n**Recommendation:** %s\n", verdict)
	if r.Notes != "" {
		fmt.Fprintf(b, "\n%s\n", escape.Markdown(r.Notes))
	}
	writeCited(b, rec)
	fmt.Fprintf(b, "\nThe scale:\n\n")
	for _, c := range competencies {
		fmt.Fprintf(b, "- **%s.**", c.Name)
		for i, l := range c.Levels {
			fmt.Fprintf(b, " %d %s: %s.", i+1, levels[i], l)
		}
		fmt.Fprintln(b)
	}
}

// citedRE is a time into the interview as the rubric's notes cite it:
// "12:30", "1:05".
var citedRE = regexp.MustCompile(`\b(\d{1,3}):([0-5]\d)\b`)

// writeCited lists each time the rubric's notes cite ("asked about the
// cap at 3:10") with the event of the timeline nearest to it, within a
// minute, so that a reader can check the note against the record.
func writeCited(b *strings.Builder, rec *Record) {
	texts := []string{rec.Rubric.Notes}
	for _, a := range rec.Rubric.Competencies {
		texts = append(texts, a.Notes)
	}
	var cited []time.Duration
	for _, t := range texts {
		for _, m := range citedRE.FindAllStringSubmatch(t, -1) {
			mins, _ := strconv.Atoi(m[1])
			secs, _ := strconv.Atoi(m[2])
			if d := time.Duration(mins)*time.Minute + time.Duration(secs)*time.Second; !slices.Contains(cited, d) {
				cited = append(cited, d)
			}
		}
	}
	if len(cited) == 0 {
		return
	}
	slices.Sort(cited)
	fmt.Fprintf(b, "\n**Times the notes cite, with the record's event nearest to each:**\n\n")
	for _, d := range cited {
		best, found := Event{}, false
		for _, e := range rec.Events {
			at := e.At.Sub(rec.Start)
			if gap := (at - d).Abs(); gap <= time.Minute && (!found || gap < (best.At.Sub(rec.Start)-d).Abs()) {
				best, found = e, true
			}
		}
		if !found {
			fmt.Fprintf(b, "- %s: no event of the record within a minute of it\n", ClockText(d))
			continue
		}
		fmt.Fprintf(b, "- %s: %s (at %s)\n", ClockText(d), escape.Inline(eventText(rec, best)), ClockText(best.At.Sub(rec.Start)))
	}
}
