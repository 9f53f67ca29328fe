package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
)

// Interview is the state of a timed interview, changed by one method per
// event: the ask-first pause answered, a grade, a line typed, the clock.
// It does no I/O; RunInterview drives it and does the grading and the
// writing. Its fields are what the scorecard reports.
type Interview struct {
	Kata        catalog.Kata
	Candidate   string
	Start       time.Time
	Limit       time.Duration
	Asked       time.Duration // the ask-first pause
	Used        time.Duration
	Last        *grade.Result
	Grades      int
	FirstPass   map[string]time.Duration // item → time into the interview it first passed
	Hints       int                      // asked for in the session
	HintsBefore int                      // shown before the interview (state file)
	HintsAfter  int
	Ending      string // how it ended: "Done.", "Time is up.", "Interview stopped."
	// DecisionsRead is when the decisions verb first showed them, as it
	// stood when the interview revealed them; KeptBack: the READMEs do
	// not show them (an interview kit).
	DecisionsRead *time.Time
	KeptBack      bool

	notices []time.Duration // countdown notices not yet given, longest first
}

// Notices are the times left at which the countdown is announced.
var Notices = []time.Duration{5 * time.Minute, time.Minute}

// NewInterview is the state of an interview of kata k starting at start.
func NewInterview(k catalog.Kata, candidate string, start time.Time, limit time.Duration, hintsBefore int) *Interview {
	return &Interview{Kata: k, Candidate: candidate, Start: start, Limit: limit, HintsBefore: hintsBefore,
		FirstPass: map[string]time.Duration{}, notices: append([]time.Duration(nil), Notices...)}
}

// Left is the time left at now.
func (iv *Interview) Left(now time.Time) time.Duration { return iv.Limit - now.Sub(iv.Start) }

// Answered ends the ask-first pause at now, when the decisions are
// revealed; decisionsRead is when the decisions verb first showed them,
// nil if it never did.
func (iv *Interview) Answered(now time.Time, decisionsRead *time.Time) {
	iv.Asked, iv.DecisionsRead = now.Sub(iv.Start), decisionsRead
}

// Graded takes grade r made at now: it counts, and the items it passes
// for the first time get their time.
func (iv *Interview) Graded(now time.Time, r *grade.Result) {
	iv.Last, iv.Grades = r, iv.Grades+1
	for _, it := range r.Items {
		if _, seen := iv.FirstPass[it.ID]; it.Passed() && !seen {
			iv.FirstPass[it.ID] = now.Sub(iv.Start)
		}
	}
}

// Tick is the clock's event at now: whether the countdown is announced
// now (every notice reached is given once), and how long until the next
// notice or the end. over is true when the time is up.
func (iv *Interview) Tick(now time.Time) (announce bool, wake time.Duration, over bool) {
	rest := iv.Left(now)
	if rest <= 0 {
		iv.Ending = "Time is up."
		return false, 0, true
	}
	for len(iv.notices) > 0 && rest <= iv.notices[0] {
		iv.notices, announce = iv.notices[1:], true
	}
	wake = rest
	if len(iv.notices) > 0 {
		wake = rest - iv.notices[0]
	}
	return announce, wake, false
}

// Command is what a line typed during an interview asks for.
type Command int

const (
	Nothing Command = iota // an empty line
	AskHint
	Finish
	Unknown
)

// Typed takes a line typed: a hint asked for is counted, done ends the
// interview.
func (iv *Interview) Typed(line string) Command {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "":
		return Nothing
	case "hint":
		iv.Hints++
		return AskHint
	case "done":
		iv.Ending = "Done."
		return Finish
	}
	return Unknown
}

// Interrupted ends the interview on Ctrl-C.
func (iv *Interview) Interrupted() { iv.Ending = "Interview stopped." }

// Hint is the hint the latest request shows: the next one, or the last
// again; false when the kata has none.
func (iv *Interview) Hint() (HintShown, bool) {
	k := iv.Kata
	if len(k.Hints) == 0 {
		return HintShown{}, false
	}
	n := min(iv.Hints, len(k.Hints))
	h := k.Hints[n-1]
	return HintShown{N: n, Of: len(k.Hints), Covers: h.Covers, Text: h.Text}, true
}

// Ended records the end at now.
func (iv *Interview) Ended(now time.Time) { iv.Used = min(now.Sub(iv.Start), iv.Limit) }

// HintsUsed counts hints asked for in the session and those read with the
// hint verb meanwhile.
func (iv *Interview) HintsUsed() int {
	return min(len(iv.Kata.Hints), max(iv.Hints, iv.HintsAfter-iv.HintsBefore))
}

// The events of an interview.

// InterviewStarted opens an interview: the story, and the clock running.
type InterviewStarted struct {
	ID, Slug, Title string
	Minutes         int
	Story           string
}

// Briefed follows the ask-first pause: the decisions the tests assume,
// the requirements, and where to write the code.
type Briefed struct {
	Decisions    []string
	Requirements []Item
	Bonus        []Item
	Exercise     string // relative to the checkout
}

// Item is a requirement or a bonus item.
type Item struct{ ID, Text string }

// Countdown announces the time left.
type Countdown struct{ Left time.Duration }

// HintShown is a hint asked for.
type HintShown struct {
	N, Of  int
	Covers []string
	Text   string
}

// NoHints answers a hint asked for in a kata without hints.
type NoHints struct{}

// UnknownCommand answers a line that is neither hint nor done.
type UnknownCommand struct{ Line string }

// Finished ends an interview: how, the Markdown scorecard, and where it
// was saved (relative to the checkout when inside it).
type Finished struct {
	Ending    string
	Scorecard string
	Saved     string
	Passed    bool
}

func (InterviewStarted) event() {}
func (Briefed) event()          {}
func (Countdown) event()        {}
func (HintShown) event()        {}
func (NoHints) event()          {}
func (UnknownCommand) event()   {}
func (Finished) event()         {}

// InterviewRun is what RunInterview needs.
type InterviewRun struct {
	Grader    *Grader // its Left and Emit are set by RunInterview
	Kata      catalog.Kata
	Candidate string
	Minutes   int
	Out       string // the scorecard's path; "": .kata/interviews/SLUG-DATE.md
	KeptBack  bool   // the READMEs keep the decisions back (an interview kit)
	Clock     clock.Clock
	Poll      time.Duration
	Lines     <-chan string
	Emit      func(Event)
}

// interviewer drives an Interview: it waits for the next event, hands it
// to the state, and does what follows (grading, saving hint progress).
type interviewer struct {
	InterviewRun
	iv      *Interview
	g       grading
	lines   <-chan string
	emitter emitter
}

// RunInterview runs a timed interview: InterviewStarted, a pause for the
// candidate's questions until a line is typed (or input ends), Briefed, a
// grade now and on every save with a Countdown at each notice, hints and
// done typed, and at the end the scorecard written and Finished. Ctrl-C
// during the pause stops it (Stopped, ctx.Err()); later it ends the
// interview with its scorecard, and the error is ctx.Err().
func RunInterview(ctx context.Context, run InterviewRun) (*Interview, error) {
	root := run.Grader.Root
	r := &interviewer{InterviewRun: run, lines: run.Lines, emitter: emitter(run.Emit)}
	k := run.Kata
	r.iv = NewInterview(k, run.Candidate, run.Clock.Now(), time.Duration(run.Minutes)*time.Minute,
		progress(root, r.emitter).Kata(k.Slug).HintsShown)
	r.iv.KeptBack = run.KeptBack
	story, err := readmeStory(k)
	if err != nil {
		return nil, err
	}
	r.emit(InterviewStarted{ID: k.ID(), Slug: k.Slug, Title: k.Title, Minutes: run.Minutes, Story: story})
	select {
	case <-ctx.Done():
		return nil, stopped(ctx, ctx.Err(), run.Emit)
	case <-r.lines: // Enter, or the end of input
	}
	r.iv.Answered(r.Clock.Now(), progress(root, r.emitter).Kata(k.Slug).DecisionsRead)
	r.emit(briefing(k, rel(root, k.Exercise)))
	grader := *run.Grader
	grader.Emit, grader.Left = r.graded, func() time.Duration { return r.iv.Left(r.Clock.Now()) }
	r.g = grading{grader: &grader, poll: run.Poll}
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	return r.iv, r.finish(ctx)
}

func (r *interviewer) emit(ev Event) { r.emitter.emit(ev) }

func briefing(k catalog.Kata, exercise string) Briefed {
	b := Briefed{Decisions: k.Decisions, Exercise: exercise}
	for _, it := range k.Requirements {
		b.Requirements = append(b.Requirements, Item{it.ID, it.Text})
	}
	for _, it := range k.Bonus {
		b.Bonus = append(b.Bonus, Item{it.ID, it.Text})
	}
	return b
}

// loop grades at once, then takes events until the interview ends.
func (r *interviewer) loop(ctx context.Context) error {
	_, stop, err := r.g.start(ctx, r.Kata)
	if err != nil {
		return stopped(ctx, err, r.Emit)
	}
	defer stop()
	for {
		over, err := r.step(ctx)
		if over || err != nil {
			return err
		}
	}
}

// step arms the timer for the next notice, announces the countdown if
// one is due, and handles the first event to come.
func (r *interviewer) step(ctx context.Context) (over bool, err error) {
	// Arm the timer before announcing, so that whoever sees the
	// announcement knows the next wake-up is already set.
	now := r.Clock.Now()
	announce, wake, over := r.iv.Tick(now)
	if over {
		return true, nil
	}
	timer := r.Clock.Timer(wake)
	defer timer.Stop()
	if announce {
		r.emit(Countdown{Left: r.iv.Left(now)})
	}
	select {
	case <-ctx.Done():
		r.iv.Interrupted()
		return true, nil
	case <-timer.C:
		return false, nil
	case <-r.g.changes:
		return r.regrade(ctx)
	case line, ok := <-r.lines:
		return r.typed(line, ok), nil
	}
}

// regrade grades a save; Ctrl-C during the grade ends the interview.
func (r *interviewer) regrade(ctx context.Context) (over bool, err error) {
	if _, err := r.g.grader.Grade(ctx, r.Kata); err != nil {
		if ctx.Err() != nil {
			r.iv.Interrupted()
			return true, nil
		}
		return true, err
	}
	return false, nil
}

// graded passes on the grader's events, taking each grade into the
// interview before it is drawn: whoever sees it (a test on a fake clock,
// moving the clock on) knows it counts.
func (r *interviewer) graded(e Event) {
	if g, ok := e.(Graded); ok {
		r.iv.Graded(r.Clock.Now(), g.Result)
	}
	r.emit(e)
}

// typed handles a line typed; ok is false at the end of input, after
// which only the clock, saves and Ctrl-C count.
func (r *interviewer) typed(line string, ok bool) (over bool) {
	if !ok {
		r.lines = nil
		return false
	}
	switch r.iv.Typed(line) {
	case Finish:
		return true
	case AskHint:
		r.showHint()
	case Unknown:
		r.emit(UnknownCommand{Line: line})
	}
	return false
}

func (r *interviewer) showHint() {
	h, ok := r.iv.Hint()
	if !ok {
		r.emit(NoHints{})
		return
	}
	r.emit(h)
	err := state.Update(r.Grader.Root, func(s *state.State) error {
		p := s.Kata(r.Kata.Slug)
		p.HintsShown = max(p.HintsShown, h.N)
		return nil
	})
	if err != nil {
		r.emit(Warning{"progress not saved: " + err.Error()})
	}
}

// finish grades the last save if it was not graded yet (not after
// Ctrl-C), writes the scorecard and emits Finished.
func (r *interviewer) finish(ctx context.Context) error {
	root, k := r.Grader.Root, r.Kata
	r.iv.Ended(r.Clock.Now())
	if ctx.Err() == nil && r.unsaved() {
		if _, err := r.g.grader.Grade(ctx, k); err != nil { // the last save, not yet graded
			return err
		}
	}
	// The hint verb may have shown hints meanwhile.
	r.iv.HintsAfter = progress(root, r.emitter).Kata(k.Slug).HintsShown
	card := Scorecard(r.iv)
	path := r.Out
	if path == "" {
		path = filepath.Join(root, state.Dir, "interviews", k.Slug+"-"+r.iv.Start.Format("20060102-150405")+".md")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(card), 0o644); err != nil {
		return err
	}
	r.emit(Finished{Ending: r.iv.Ending, Scorecard: card, Saved: rel(root, path), Passed: r.iv.Last.Passed()})
	return ctx.Err()
}

// unsaved reports whether the files changed since their last grade.
func (r *interviewer) unsaved() bool {
	fp, err := state.Fingerprint(r.Kata.Exercise)
	if err != nil {
		return false
	}
	last := progress(r.Grader.Root, r.emitter).Kata(r.Kata.Slug).Last
	return last == nil || last.Fingerprint != fp
}
