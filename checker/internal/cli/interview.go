package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// interview runs a kata as a timed interview: the story, a pause for the
// candidate's questions, then the Decisions (the answers), a countdown from
// the kata's minutes with a grade on every save, and at the end a Markdown
// scorecard for the interviewer.
func interview(ctx context.Context, args []string, env Env) (int, error) {
	fs := newFlags("interview")
	name := fs.String("name", "", "")
	out := fs.String("out", "", "")
	minutes := fs.Int("minutes", 0, "")
	color := fs.String("color", "auto", "")
	timeout := fs.Duration("timeout", grade.DefaultOptions.Timeout, "")
	poll := fs.Duration("poll", 0, "")
	if err := parse(fs, reorder(fs, args)); err != nil {
		return 0, err
	}
	opt, err := repeatOptions(*timeout, 1, "")
	if err != nil {
		return 0, err
	}
	style, err := pickStyle(*color, env)
	if err != nil {
		return 0, err
	}
	style.Interview = true
	if *minutes < 0 {
		return 0, &usageError{"--minutes must be positive", "checker interview " + nextMark + " --minutes=45"}
	}
	cat, err := load(env)
	if err != nil {
		return 0, err
	}
	k, err := kataArg(cat, env, "interview", fs.Arg(0))
	if err != nil {
		return 0, err
	}
	if *minutes == 0 {
		*minutes = k.Minutes
	}
	tc, err := detect(ctx, env)
	if err != nil {
		return 0, err
	}
	clk := env.clock()
	iv := &interviewRun{kata: k, candidate: *name, start: clk.Now(), limit: time.Duration(*minutes) * time.Minute,
		hintsBefore: progress(cat.Root, env).Kata(k.Slug).HintsShown, firstPass: map[string]time.Duration{}}
	w := env.Stdout

	story, err := readmeStory(k)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "Interview · %s · %s\n%d minutes; the clock is running.\n\n%s\n\n", k.ID(), k.Title, *minutes, story)
	fmt.Fprintln(w, "Before you write any code: what would you ask? Ask your interviewer now.")
	fmt.Fprintln(w, "Press Enter when they have answered, to see the decisions the tests assume.")
	s := &session{ctx: ctx, env: env, tc: tc, root: cat.Root, opt: opt, style: style, poll: *poll, lines: readLines(env.Stdin)}
	select {
	case <-ctx.Done():
		return s.end(ctx.Err())
	case <-s.lines: // Enter, or the end of stdin
	}
	iv.asked = clk.Since(iv.start)
	iv.decisionsRead, iv.keptBack = progress(cat.Root, env).Kata(k.Slug).DecisionsRead, env.interviewKit()

	fmt.Fprintf(w, "\nDecisions\n\n")
	for _, d := range k.Decisions {
		fmt.Fprintf(w, "- %s\n", d)
	}
	fmt.Fprintf(w, "\nRequirements\n\n")
	for _, it := range k.Requirements {
		fmt.Fprintf(w, "- %s %s\n", it.ID, it.Text)
	}
	if len(k.Bonus) > 0 {
		fmt.Fprintf(w, "\nBonus, if there is time\n\n")
		for _, it := range k.Bonus {
			fmt.Fprintf(w, "- %s %s\n", it.ID, it.Text)
		}
	}
	fmt.Fprintf(w, "\nWrite your code in %s (the doc comments state the contract).\n", rel(cat.Root, k.Exercise))
	fmt.Fprintln(w, "Every save is graded. Type hint and Enter for a hint, done and Enter to finish.")

	left := func() time.Duration { return iv.limit - clk.Since(iv.start) }
	s.header = func() string { return "Interview · " + k.Slug + " · " + clockText(left()) + " left" }
	s.graded = func(r *grade.Result) {
		iv.last, iv.grades = r, iv.grades+1
		for _, it := range r.Items {
			if _, seen := iv.firstPass[it.ID]; it.Passed() && !seen {
				iv.firstPass[it.ID] = clk.Since(iv.start)
			}
		}
	}
	r, stop, err := s.start(k)
	if err != nil {
		return s.end(err)
	}
	defer stop()
	notices := []time.Duration{5 * time.Minute, time.Minute}
	announced := map[time.Duration]bool{}
	ending := "Time is up."
loop:
	for {
		// Arm the timer before announcing, so that whoever sees the
		// announcement knows the next wake-up is already set.
		rest := left()
		if rest <= 0 {
			break
		}
		due, wake := time.Duration(0), rest
		for _, n := range notices {
			if rest <= n && !announced[n] {
				due = n
			}
			if rest > n {
				wake = rest - n
				break
			}
		}
		timer := clk.Timer(wake)
		if due > 0 {
			for _, n := range notices {
				announced[n] = announced[n] || n >= due
			}
			fmt.Fprintf(w, "\n%s left.\n", clockText(rest))
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			ending = "Interview stopped."
			break loop
		case <-timer.C:
		case <-s.changes:
			timer.Stop()
			if r, err = s.regrade(k); err != nil {
				if ctx.Err() != nil {
					ending = "Interview stopped."
					break loop
				}
				return 0, err
			}
		case line, ok := <-s.lines:
			timer.Stop()
			if !ok {
				s.lines = nil
				continue
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "done":
				ending = "Done."
				break loop
			case "hint":
				iv.hints++
				iv.showHint(env, cat.Root)
			case "":
			default:
				fmt.Fprintln(w, "Type hint for a hint, or done to finish.")
			}
		}
	}
	iv.used = min(clk.Since(iv.start), iv.limit)
	if ctx.Err() == nil {
		if fp, err := state.Fingerprint(k.Exercise); err == nil {
			if last := progress(cat.Root, env).Kata(k.Slug).Last; last == nil || last.Fingerprint != fp {
				if r, err = s.regrade(k); err != nil { // the last save, not yet graded
					return 0, err
				}
			}
		}
	}
	iv.last = r
	iv.hintsAfter = progress(cat.Root, env).Kata(k.Slug).HintsShown
	card := iv.scorecard()
	path := *out
	if path == "" {
		path = filepath.Join(cat.Root, state.Dir, "interviews", k.Slug+"-"+iv.start.Format("20060102-150405")+".md")
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(env.Dir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	if err := os.WriteFile(path, []byte(card), 0o644); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "\n%s\n\n%s\nScorecard saved to %s\n", ending, card, rel(cat.Root, path))
	switch {
	case ctx.Err() != nil:
		return ExitInterrupted, nil
	case r.Passed():
		return ExitPass, nil
	}
	return ExitFail, nil
}

// interviewRun is what the scorecard reports.
type interviewRun struct {
	kata        catalog.Kata
	candidate   string
	start       time.Time
	limit       time.Duration
	asked       time.Duration // the ask-first pause
	used        time.Duration
	last        *grade.Result
	grades      int
	firstPass   map[string]time.Duration // item → time into the interview it first passed
	hints       int                      // asked for in the session
	hintsBefore int                      // shown before the interview (state file)
	hintsAfter  int
	// decisionsRead is when the decisions verb first showed them, as it
	// stood when the interview revealed them; keptBack: the READMEs do
	// not show them (an interview kit).
	decisionsRead *time.Time
	keptBack      bool
}

func (iv *interviewRun) showHint(env Env, root string) {
	k := iv.kata
	if len(k.Hints) == 0 {
		fmt.Fprintln(env.Stdout, "This kata has no hints.")
		return
	}
	n := min(iv.hints, len(k.Hints))
	h := k.Hints[n-1]
	fmt.Fprintf(env.Stdout, "\nHint %d of %d (helps with %s)\n\n%s\n", n, len(k.Hints), strings.Join(h.Covers, ", "), h.Text)
	saveProgress(root, env, func(s *state.State) {
		p := s.Kata(k.Slug)
		p.HintsShown = max(p.HintsShown, n)
	})
}

// hintsUsed counts hints asked for in the session and those read with the
// hint verb meanwhile.
func (iv *interviewRun) hintsUsed() int {
	return min(len(iv.kata.Hints), max(iv.hints, iv.hintsAfter-iv.hintsBefore))
}

// decisionsEarly says whether the candidate read the decisions before the
// interview revealed them.
func (iv *interviewRun) decisionsEarly() string {
	switch {
	case iv.decisionsRead != nil:
		return fmt.Sprintf("yes, with `decisions %s` (first at %s)", iv.kata.ID(), iv.decisionsRead.In(iv.start.Location()).Format("2006-01-02 15:04"))
	case iv.keptBack:
		return "no"
	}
	return "not with `decisions`; in this copy the task README shows them too (an interview kit keeps them back)"
}

// scorecard renders the interview for the interviewer, in Markdown.
func (iv *interviewRun) scorecard() string {
	k, r := iv.kata, iv.last
	var b strings.Builder
	fmt.Fprintf(&b, "# Interview scorecard · %s · %s\n\n", k.ID(), k.Title)
	if iv.candidate != "" {
		fmt.Fprintf(&b, "- **Candidate:** %s\n", iv.candidate)
	}
	fmt.Fprintf(&b, "- **Date:** %s\n", iv.start.Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "- **Time used:** %s of %s (asking first: %s)\n", clockText(iv.used), clockText(iv.limit), clockText(iv.asked))
	req, total, bonus, btotal := r.Score()
	fmt.Fprintf(&b, "- **Requirements passed:** %d of %d", req, total)
	if btotal > 0 {
		fmt.Fprintf(&b, " · **bonus:** %d of %d", bonus, btotal)
	}
	fmt.Fprintf(&b, "\n- **Hints used:** %d of %d\n", iv.hintsUsed(), len(k.Hints))
	fmt.Fprintf(&b, "- **Decisions read before the interview showed them:** %s\n", iv.decisionsEarly())
	fmt.Fprintf(&b, "- **Grades:** %d (one per save)\n", iv.grades)
	switch {
	case r.Build != nil:
		fmt.Fprintf(&b, "- **Last code:** does not compile\n")
	case len(r.Gate) > 0:
		fmt.Fprintf(&b, "- **Last code:** uses the real clock or a call the grader does not allow\n")
	}
	section := func(title string, bonus bool) {
		fmt.Fprintf(&b, "\n## %s\n\n| | | first passed at | verdict |\n| --- | --- | --- | --- |\n", title)
		for _, it := range r.Items {
			if it.Bonus != bonus {
				continue
			}
			mark, when, verdict := "✘", "", string(it.Kind)
			if at, ok := iv.firstPass[it.ID]; ok {
				when = clockText(at)
			}
			if it.Passed() {
				mark, verdict = "✔", "pass"
			} else if it.Message != "" {
				verdict += ": " + it.Message
			}
			fmt.Fprintf(&b, "| %s | **%s** %s | %s | %s |\n", mark, it.ID, cell(it.Text), when, cell(verdict))
		}
	}
	section("Requirements", false)
	if btotal > 0 {
		section("Bonus", true)
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

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

// clockText shows a duration as m:ss, never negative.
func clockText(d time.Duration) string {
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
