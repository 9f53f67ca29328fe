package session

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/benbjohnson/clock"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/record"
	"gokata/checker/internal/state"
)

// Interview is the state of a timed interview, changed by one method per
// event: the ask-first pause answered, a grade, a line typed, the clock.
// It does no I/O; RunInterview drives it and does the grading and the
// writing. Its fields, and the events it logs, make the record.
type Interview struct {
	Kata      catalog.Kata
	Candidate string
	Start     time.Time
	Limit     time.Duration
	Asked     time.Duration // the ask-first pause
	Used      time.Duration
	Last      *grade.Result
	Grades    int
	FirstPass map[string]time.Duration // item → time into the interview it first passed
	Hints     int                      // asked for in the session
	Ending    string                   // how it ended: "Done.", "Time is up.", "Interview stopped."
	How       string                   // the same for the record: record.Done, TimeUp or Stopped
	// DecisionsRead is when the decisions verb first showed them, as it
	// stood when the interview revealed them; KeptBack: the READMEs do
	// not show them (an interview kit).
	DecisionsRead *time.Time
	KeptBack      bool
	// Final is the last code graded again with repeats at the end; nil
	// when it was not (Ctrl-C).
	Final *grade.Result
	// Events is what happened in the session, in order; RunInterview
	// adds what the state file knows (hints read with the hint verb,
	// a give-up) when it writes the record.
	Events []record.Event
	// Hunt is the bug hunt the interview started from, nil for none;
	// HuntFixed is how long into the interview a grade first showed it
	// fixed, nil until one did.
	Hunt      *Planted
	HuntFixed *time.Duration

	notices []time.Duration    // countdown notices not yet given, longest first
	logged  func(record.Event) // called with each event logged; nil: none
}

// countdownNotices are the times left at which the countdown is announced.
var countdownNotices = []time.Duration{5 * time.Minute, time.Minute}

// NewInterview is the state of an interview of kata k starting at start.
func NewInterview(k catalog.Kata, candidate string, start time.Time, limit time.Duration) *Interview {
	return &Interview{Kata: k, Candidate: candidate, Start: start, Limit: limit,
		FirstPass: map[string]time.Duration{}, notices: append([]time.Duration(nil), countdownNotices...),
		Events: []record.Event{{At: start, Kind: record.KindStart}}}
}

// Left is the time left at now.
func (iv *Interview) Left(now time.Time) time.Duration { return iv.Limit - now.Sub(iv.Start) }

// Answered ends the ask-first pause at now, when the decisions are
// revealed; decisionsRead is when the decisions verb first showed them,
// nil if it never did.
func (iv *Interview) Answered(now time.Time, decisionsRead *time.Time) {
	iv.Asked, iv.DecisionsRead = now.Sub(iv.Start), decisionsRead
	iv.log(record.Event{At: now, Kind: record.KindAnswered})
}

// Graded takes grade e made at now, made because of via ("start", "save",
// "end", or "plant": a bug hunt's code planted during the session): it
// counts, the items it passes for the first time get their time (not
// those of planted code, which the candidate did not write), and the
// record gets it with the code it graded.
func (iv *Interview) Graded(now time.Time, e Graded, via string) {
	r := e.Result
	iv.Last, iv.Grades = r, iv.Grades+1
	for _, it := range r.Items {
		if _, seen := iv.FirstPass[it.ID]; it.Passed() && !seen && via != "plant" {
			iv.FirstPass[it.ID] = now.Sub(iv.Start)
		}
	}
	if e.Hunt != nil && e.Hunt.Fixed && iv.HuntFixed == nil {
		d := now.Sub(iv.Start)
		iv.HuntFixed = &d
	}
	iv.log(record.Event{At: now, Kind: record.KindGrade, Via: via, Grade: recordGrade(e)})
}

// Saved takes a save made at, whose code no grade saw: a later save came
// before its grade.
func (iv *Interview) Saved(at time.Time, code map[string][]byte) {
	files := map[string]string{}
	for n, c := range code {
		files[n] = string(c)
	}
	iv.log(record.Event{At: at, Kind: record.KindSave, Code: files})
}

// FinalGraded takes the final grade, made at now with repeats at the
// GOMAXPROCS values cpu.
func (iv *Interview) FinalGraded(now time.Time, e Graded, cpu string) {
	iv.Final = e.Result
	g := recordGrade(e)
	g.CPU = cpu
	iv.log(record.Event{At: now, Kind: record.KindFinal, Grade: g})
}

func (iv *Interview) log(e record.Event) {
	iv.Events = append(iv.Events, e)
	if iv.logged != nil {
		iv.logged(e)
	}
}

// Tick is the clock's event at now: whether the countdown is announced
// now (every notice reached is given once), and how long until the next
// notice or the end. over is true when the time is up.
func (iv *Interview) Tick(now time.Time) (announce bool, wake time.Duration, over bool) {
	rest := iv.Left(now)
	if rest <= 0 {
		iv.Ending, iv.How = "Time is up.", record.TimeUp
		return false, 0, true
	}
	for len(iv.notices) > 0 && rest <= iv.notices[0] {
		iv.notices, announce = iv.notices[1:], true
	}
	return announce, iv.next(now), false
}

// next is how long from now until the next notice not yet due, or until
// the end.
func (iv *Interview) next(now time.Time) time.Duration {
	rest := iv.Left(now)
	for _, n := range iv.notices {
		if rest > n {
			return rest - n
		}
	}
	return rest
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
		iv.Ending, iv.How = "Done.", record.Done
		return Finish
	}
	return Unknown
}

// Interrupted ends the interview on Ctrl-C.
func (iv *Interview) Interrupted() { iv.Ending, iv.How = "Interview stopped.", record.Stopped }

// Hint is the hint a request at now shows, when shown hints were shown
// already (by this interview or the hint verb, as the state file says):
// the next one, or the last again; false when the kata has none.
func (iv *Interview) Hint(now time.Time, shown int) (HintShown, bool) {
	k := iv.Kata
	if len(k.Hints) == 0 {
		return HintShown{}, false
	}
	n := min(shown+1, len(k.Hints))
	h := k.Hints[n-1]
	iv.log(record.Event{At: now, Kind: record.KindHint, Hint: n, Via: "interview"})
	return HintShown{N: n, Of: len(k.Hints), Covers: h.Covers, Text: h.Text}, true
}

// StateChanged records that the progress state file was found at now
// changed, not by the checker: via record.StateRemoved or StateRewritten.
func (iv *Interview) StateChanged(now time.Time, via string) {
	iv.log(record.Event{At: now, Kind: record.KindStateChanged, Via: via})
}

// Ended records the end at now.
func (iv *Interview) Ended(now time.Time) {
	iv.Used = min(now.Sub(iv.Start), iv.Limit)
	iv.log(record.Event{At: now, Kind: record.KindEnd, Via: iv.How})
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

// FinalGrading says that the session ended and the final grade started:
// the last code, every test Repeat times at each GOMAXPROCS value of CPU.
type FinalGrading struct {
	Ending string // how the session ended: "Done.", "Time is up."
	Repeat int
	CPU    string
}

// Finished ends an interview: how, a short summary for the candidate's
// screen (the score of the final grade), and where the record and the
// scorecard were saved (relative to the checkout when inside it). The
// scorecard, with the follow-up questions and their answers, is for the
// interviewer: the terminal shows it only when asked to.
type Finished struct {
	Ending   string
	Passed   bool
	Required int
	Total    int
	Bonus    int
	BonusOf  int
	Runs     int // of the final grade; 0 when there was none (Ctrl-C)
	// NoRace is why the race detector did not run, when the final grade
	// needed it: then it is no pass, whatever the score.
	NoRace    string
	Scorecard string
	Saved     string // the scorecard
	Record    string // the record (JSON)
	// Witness is where the witness keeps its copy ("room R at URL"),
	// "" with no witness or when it did not get the record.
	Witness string
}

func (InterviewStarted) event() {}
func (Briefed) event()          {}
func (Countdown) event()        {}
func (HintShown) event()        {}
func (NoHints) event()          {}
func (UnknownCommand) event()   {}
func (Finished) event()         {}
func (FinalGrading) event()     {}

// InterviewRun is what RunInterview needs.
type InterviewRun struct {
	Grader    *Grader // its Left and Emit are set by RunInterview
	Kata      catalog.Kata
	Candidate string
	Minutes   int
	// Out is the scorecard's path, the record beside it with .json; "":
	// .kata/interviews/DATE-TIME-SLUG-NAME.md.
	Out      string
	KeptBack bool // the READMEs keep the decisions back (an interview kit)
	Kit      bool // it runs in a candidate kit, not a clone of the repository
	// Repeat and CPU are how the final grade runs every test: Repeat
	// times (0: DefaultRepeat) at each GOMAXPROCS value (default 1,2,4).
	Repeat int
	CPU    string
	// Stub is the kata's untouched stub (file name → content); nil when
	// it cannot be read (no git history): the record then cannot say
	// whether the code at the start was the stub, nor diff from it.
	Stub  map[string][]byte
	Clock clock.Clock
	Poll  time.Duration
	Lines <-chan string
	Emit  func(Event)
	// Hunt, when set, makes it a bug-hunt interview: the code planted in
	// the exercise stands in for the stub.
	Hunt *Planted
	// Witness, when set, gets every event of the record as it is logged
	// and the record when it is written.
	Witness Witness
}

// Witness is the interviewer's server, which keeps its own copy of an
// interview as it happens (witness.Client).
type Witness interface {
	// Event sends e without waiting.
	Event(e record.Event)
	// Flush waits, at most wait, until every event is sent or given up
	// on: unsent did not reach the witness, err says why.
	Flush(wait time.Duration) (unsent int, err error)
	// End sends the record as written, and waits for it.
	End(record []byte) error
	// Where is the witness and the room, for the record.
	Where() record.Witness
}

// witnessWait bounds how long the end of an interview waits for the
// events not sent yet.
const witnessWait = 20 * time.Second

// DefaultRepeat is how many times the final grade runs every test at each
// GOMAXPROCS value: 20 × 1,2,4 is 60 runs, enough that a scenario that
// depends on scheduling does not pass by luck.
const DefaultRepeat = 20

// interviewer drives an Interview: it waits for the next event, hands it
// to the state, and does what follows (grading, saving hint progress).
type interviewer struct {
	InterviewRun
	iv      *Interview
	g       grading
	lines   <-chan string
	emitter emitter
	via     string // what made the grade under way: start, save, end, or final
	timer   *clock.Timer
	planted string // the mutant of the last hunt a grade found planted during the session
	// state follows the progress state file: it is looked at before and
	// after the interview writes it (a grade, a hint, the decisions
	// shown), so that nothing else slips in with those writes, and at
	// the end.
	state *stateWatch
	code  map[string][]byte // the code of the last grade or save recorded
	// before are the saves the watch saw settle before the grade under
	// way began (taken by grading); the grade records those it did not
	// grade.
	before []savedCode
	began  time.Time // when the grade under way began (grading); zero: now
	// factsSent is how many of the state's facts were looked at for the
	// witness.
	factsSent int
}

// logSaves records the saves taken before the grade of graded that no
// grade saw: overtaken by a later save before their grade.
func (r *interviewer) logSaves(graded map[string][]byte) {
	for _, s := range r.before {
		if !sameFiles(s.code, r.code) && !sameFiles(s.code, graded) {
			r.iv.Saved(s.at, s.code)
			r.code = s.code
		}
	}
	r.before = nil
}

// grading takes the saves that settled so far, at the start of a grade
// of a save: the grade reads the code after them, and it is recorded at
// this time, when it read the code, for a save that comes while it runs
// comes after it.
func (r *interviewer) grading() {
	r.before = append(r.before, r.g.saves.take()...)
	r.began = r.Clock.Now()
}

// RunInterview runs a timed interview: InterviewStarted, a pause for the
// candidate's questions until a line is typed (or input ends), Briefed, a
// grade now and on every save with a Countdown at each notice, hints and
// done typed, and at the end the final grade with repeats (FinalGrading),
// the record and its scorecard written, and Finished. Ctrl-C during the
// pause stops it (Stopped, ctx.Err()); later it ends the interview with
// its record, without the final grade, and the error is ctx.Err().
func RunInterview(ctx context.Context, run InterviewRun) (*Interview, error) {
	root := run.Grader.Root
	k := run.Kata
	r := &interviewer{InterviewRun: run, lines: run.Lines, emitter: emitter(run.Emit), state: newStateWatch(root, k.Slug)}
	r.state.look()
	r.iv = NewInterview(k, run.Candidate, run.Clock.Now(), time.Duration(run.Minutes)*time.Minute)
	r.iv.KeptBack = run.KeptBack
	if run.Witness != nil {
		r.iv.logged = run.Witness.Event
		r.iv.logged(r.iv.Events[0]) // the start
	}
	if run.Hunt != nil {
		r.iv.Hunt, r.Stub = run.Hunt, run.Hunt.Files
	}
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
	r.stateChanged(r.Clock.Now())
	r.iv.Answered(r.Clock.Now(), progress(root, r.emitter).Kata(k.Slug).DecisionsRead)
	if err := (state.Progress{Root: root}).ShowDecisions(k.Slug, r.Clock.Now().Truncate(time.Second)); err != nil {
		r.emit(Warning{"progress not saved: " + err.Error()})
	}
	r.stateChanged(r.Clock.Now())
	r.emit(briefing(k, rel(root, k.Exercise)))
	grader := *run.Grader
	grader.Emit, grader.Left = r.graded, func() time.Duration { return r.iv.Left(r.Clock.Now()) }
	grader.Check = r.beforeGrade(run.Grader.Check)
	r.g = grading{grader: &grader, poll: run.Poll, saves: &saves{now: run.Clock.Now}}
	if err := r.loop(ctx); err != nil {
		return nil, err
	}
	return r.iv, r.finish(ctx)
}

func (r *interviewer) emit(ev Event) { r.emitter.emit(ev) }

// beforeGrade is the grader's Check in an interview: a look at the state
// file, which the grade writes, then check, if set.
func (r *interviewer) beforeGrade(check func(context.Context, catalog.Kata) error) func(context.Context, catalog.Kata) error {
	return func(ctx context.Context, k catalog.Kata) error {
		r.stateChanged(r.Clock.Now())
		if check == nil {
			return nil
		}
		return check(ctx, k)
	}
}

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
	r.via = "start"
	// The timer for the first notice is armed before the first grade, and
	// each timer stays armed until it fires: whoever sees a grade (a test
	// on a fake clock, moving the clock on) finds the next wake-up set.
	r.timer = r.Clock.Timer(r.iv.next(r.Clock.Now()))
	defer func() {
		if r.timer != nil {
			r.timer.Stop()
		}
	}()
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
	if r.timer == nil {
		r.timer = r.Clock.Timer(wake)
	}
	if announce {
		r.emit(Countdown{Left: r.iv.Left(now)})
	}
	select {
	case <-ctx.Done():
		r.iv.Interrupted()
		return true, nil
	case <-r.timer.C:
		r.timer = nil
		return false, nil
	case <-r.g.changes:
		return r.regrade(ctx)
	case line, ok := <-r.lines:
		return r.typed(line, ok), nil
	}
}

// regrade grades a save; Ctrl-C during the grade ends the interview.
func (r *interviewer) regrade(ctx context.Context) (over bool, err error) {
	r.via = "save"
	r.grading()
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
// moving the clock on) knows it counts. The final grade is recorded, not
// drawn: the candidate sees its summary in Finished.
func (r *interviewer) graded(e Event) {
	if g, ok := e.(Graded); ok {
		r.stateChanged(r.Clock.Now()) // what the grade wrote
		r.logSaves(g.Code)
		r.code = g.Code
		if r.via == "final" {
			_, cpu := r.finalRuns()
			r.iv.FinalGraded(r.Clock.Now(), g, cpu)
			return
		}
		via := r.via
		if via == "save" && r.plantedNow(g) {
			via = "plant"
		}
		at := r.Clock.Now()
		if !r.began.IsZero() {
			at, r.began = r.began, time.Time{}
		}
		r.iv.Graded(at, g, via)
	}
	r.emit(e)
}

// plantedNow reports whether grade g, made after a save, graded the code
// of a bug hunt planted during the session (bughunt in another terminal):
// the first grade of a hunt's code that the interview did not plant
// itself is no save of the candidate's.
func (r *interviewer) plantedNow(g Graded) bool {
	h := g.Hunt
	if h == nil || h.Packed || h.Mutant == r.planted || (r.iv.Hunt != nil && r.iv.Hunt.Mutant == h.Mutant) {
		return false
	}
	b, err := HuntBug(r.Kata, h.Mutant)
	if err != nil {
		return false
	}
	files, err := hunt.Plant(r.Kata.Solution, b)
	if err != nil || !sameFiles(files, g.Code) {
		return false
	}
	r.planted = h.Mutant
	return true
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

// showHint shows the hint after the last one shown, by this interview or
// by the hint verb in another terminal, and notes it in the state file.
func (r *interviewer) showHint() {
	now := r.Clock.Now()
	r.stateChanged(now)
	h, ok := r.iv.Hint(now, progress(r.Grader.Root, r.emitter).Kata(r.Kata.Slug).HintsShown)
	if !ok {
		r.emit(NoHints{})
		return
	}
	r.emit(h)
	if err := (state.Progress{Root: r.Grader.Root}).RevealHint(r.Kata.Slug, h.N, now, "interview"); err != nil {
		r.emit(Warning{"progress not saved: " + err.Error()})
	}
	r.stateChanged(now)
}

// finish grades the last save if it was not graded yet, then the final
// code with repeats (neither after Ctrl-C), writes the record and its
// scorecard and emits Finished.
func (r *interviewer) finish(ctx context.Context) error {
	root, k := r.Grader.Root, r.Kata
	r.iv.Ended(r.Clock.Now())
	if ctx.Err() == nil && r.unsaved() {
		r.via = "end"
		r.grading()
		if _, err := r.g.grader.Grade(ctx, k); err != nil { // the last save, not yet graded
			return err
		}
	}
	if ctx.Err() == nil {
		if err := r.finalGrade(ctx); err != nil {
			return err
		}
	}
	r.stateChanged(r.Clock.Now())
	rec := r.toRecord(r.state.facts)
	if r.Witness != nil {
		rec.Witness = r.flushWitness()
	}
	path := r.Out
	if path == "" {
		name := r.iv.Start.Format("20060102-150405") + "-" + k.Slug
		if n := nameSlug(r.Candidate); n != "" {
			name += "-" + n
		}
		path = filepath.Join(root, state.Dir, "interviews", name+".md")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := record.Save(record.Path(path), rec); err != nil { // seals its hash chain
		return err
	}
	card := record.Scorecard(rec, referenceOnDisk(root, k.Slug))
	if err := os.WriteFile(path, []byte(card), 0o644); err != nil {
		return err
	}
	f := Finished{Ending: r.iv.Ending, Scorecard: card, Saved: rel(root, path), Record: rel(root, record.Path(path))}
	if r.Witness != nil {
		f.Witness = r.endWitness(record.Path(path))
	}
	last := r.iv.Last
	if r.iv.Final != nil {
		last, f.Runs = r.iv.Final, max(r.iv.Final.Runs, 1)
	}
	f.Passed = last.Passed()
	f.Required, f.Total, f.Bonus, f.BonusOf = last.Score()
	if last.RaceMissing() {
		f.NoRace = last.NoRace
	}
	r.emit(f)
	return ctx.Err()
}

// flushWitness waits for the events not sent to the witness yet, and is
// what the record says of it.
func (r *interviewer) flushWitness() *record.Witness {
	unsent, err := r.Witness.Flush(witnessWait)
	w := r.Witness.Where()
	w.Unsent = unsent
	if unsent > 0 {
		r.emit(Warning{fmt.Sprintf("%d events did not reach the witness at %s: %v", unsent, w.URL, err)})
	}
	return &w
}

// endWitness sends the record at path to the witness: where it keeps it,
// "" when it did not get it.
func (r *interviewer) endWitness(path string) string {
	data, err := os.ReadFile(path)
	if err == nil {
		err = r.Witness.End(data)
	}
	w := r.Witness.Where()
	if err != nil {
		r.emit(Warning{fmt.Sprintf("the witness at %s did not get the record: %v", w.URL, err)})
		return ""
	}
	return fmt.Sprintf("room %s at %s", w.Room, w.URL)
}

// finalGrade grades the last code again, every test Repeat times at each
// GOMAXPROCS value: the verdict on the record does not rest on one run.
func (r *interviewer) finalGrade(ctx context.Context) error {
	g := *r.g.grader
	g.Options.Repeat, g.Options.CPU = r.finalRuns()
	g.Options.RequireRace = true // the record's last word: no pass that a race could have made
	r.emit(FinalGrading{Ending: r.iv.Ending, Repeat: g.Options.Repeat, CPU: g.Options.CPU})
	r.via = "final"
	_, err := g.Grade(ctx, r.Kata)
	if err != nil && ctx.Err() != nil {
		return nil // Ctrl-C during the final grade: the record says there is none
	}
	return err
}

// finalRuns is how the final grade runs: Repeat times (DefaultRepeat
// when 0) at each of the GOMAXPROCS values CPU (1,2,4 when repeated).
func (r *interviewer) finalRuns() (repeat int, cpu string) {
	repeat, cpu = cmp.Or(r.Repeat, DefaultRepeat), r.CPU
	if cpu == "" && repeat > 1 {
		cpu = "1,2,4"
	}
	return repeat, cpu
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

// nameSlug makes a candidate's name fit a file name: "Ada Lovelace" →
// "ada-lovelace".
func nameSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
