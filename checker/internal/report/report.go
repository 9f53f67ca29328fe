// Package report renders a grade for people (text) and for programs (JSON).
//
// # JSON schema (version 1)
//
//	{
//	  "schema": 1,
//	  "participant": "Ada Lovelace",   // check --name, else git's user.name, else ""
//	  "time": "2030-05-06T14:02:11+02:00", // when it was graded, RFC 3339 with the zone
//	  "fingerprint": {"code": "…",     // SHA-256 of the code graded and of the hidden tests
//	                  "tests": "…"},   // that graded it (package fingerprint): regrade prints both
//	  "kata": "06-retry", "title": "…",
//	  "passed": false,                 // every requirement passed and every gate held
//	  "score": {"required": 3, "requiredTotal": 7, "bonus": 0, "bonusTotal": 2},
//	  "race": true,                    // graded under the race detector
//	  "noRace": "",                    // why not, when race is false
//	  "raceRequired": true,            // passed needs race: an interview's final grade, regrade (omitted: false)
//	  "runs": 1,                       // times every test ran (check --repeat: repeat × GOMAXPROCS values)
//	  "gates": [{"file": "…", "line": 12, "rule": "real-clock", "message": "…", // rule: real-clock, timer-reset, forbidden, vet
//	             "allowed": "…"}],      // a refused import's: what the code may import
//	  "build": null,                   // or {"kind": "compile"|"api", "lines": ["…"]}
//	  "items": [{
//	    "id": "R4", "text": "…", "bonus": false,
//	    "kind": "assertion",           // pass, not-implemented, compile, api, forbidden, assertion,
//	                                   // panic, race, leak, deadlock, mutex-hang, timeout, real-clock, exit,
//	                                   // unproven (a pass the hidden test did not produce)
//	                                   // (a test, not an item, may also be "not-run")
//	    "message": "…", "detail": ["…"],
//	    "hints": [2],                  // hints that cover this item (make hint EX=NN N=2)
//	    "runs": 60, "passes": 57,      // repetitions in which all its tests finished / passed
//	    "scheduling": false,           // its tests repeat a scenario whose outcome depends on
//	                                   // scheduling: one run can pass by luck
//	    "tests": [{"name": "TestR4_CancelDuringPause", "kind": "…", "message": "…",
//	               "scheduling": true, // this test repeats such a scenario (omitted: false)
//	               "output": {         // only if the code printed (fmt, log) while it ran:
//	                 "head": ["…"],    //   its first lines (10 at most, each cut to 300 bytes)
//	                 "cut": 37,        //   lines left out between head and tail (0: omitted)
//	                 "tail": ["…"]}}]  //   its last lines (10 at most), when more than head
//	  }]
//	}
//
// `check --json` without a kata prints one such object per kata, one after
// the other (a JSON stream, not an array). Fields are only ever added
// within a schema version; a reader ignores fields it does not know.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/escape"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/grade"
	"gokata/internal/failure"
)

// Style decides how text output looks, and how it tells the learner to ask
// for a hint.
type Style struct {
	Color bool
	// Interview: hints are asked for by typing hint, one after the other,
	// not with make hint, so the advice says that.
	Interview bool
	// Verbose shows, under each failed item, what the code printed during
	// its tests (check -v).
	Verbose bool
	// Verb is the make target that graded ("check", "watch"): without
	// Verbose, one line names the command that shows what the code printed
	// (make check EX=06 V=1). "" names none.
	Verb string
	// Review: someone else's work is graded (regrade), for the one who
	// grades it: no advice for the learner (hints, what to do next).
	Review bool
}

func (s Style) paint(code, text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Good, Bad, Warn and Dim colour text for other verbs' output (list,
// doctor): green, red, yellow and faint, or plain without colour.
func (s Style) Good(t string) string { return s.paint("32", t) }
func (s Style) Bad(t string) string  { return s.paint("31", t) }
func (s Style) Warn(t string) string { return s.paint("33", t) }
func (s Style) Dim(t string) string  { return s.paint("2", t) }

func (s Style) ok() string   { return s.paint("32", "✔") }
func (s Style) bad() string  { return s.paint("31", "✘") }
func (s Style) none() string { return s.paint("2", "·") }
func (s Style) dim(t string) string {
	return s.paint("2", t)
}

var kindLabel = map[failure.Kind]string{
	failure.NotImplemented: "not implemented",
	failure.Compile:        "does not compile",
	failure.API:            "API differs",
	failure.Forbidden:      "not run",
	failure.Panic:          "panic",
	failure.Race:           "data race",
	failure.Leak:           "goroutine leak",
	failure.Deadlock:       "deadlock",
	failure.MutexHang:      "mutex hang",
	failure.Timeout:        "timeout",
	failure.RealClock:      "real clock",
	failure.Exit:           "process exited",
	failure.Unproven:       "not a real pass",
}

// Text writes the grade for a person.
func Text(w io.Writer, r *grade.Result, s Style) {
	k := r.Kata
	fmt.Fprintf(w, "%s · %s\n\n", k.Slug, k.Title)
	if r.Runs > 1 && r.Build == nil {
		fmt.Fprintf(w, "Every test ran %d times, shuffled, at several GOMAXPROCS values: a requirement passes only if it passed every run.\n\n", r.Runs)
	}
	for _, g := range gates(r) {
		gateText(w, g, s)
	}
	itemsText(w, r, s, "Requirements", false)
	itemsText(w, r, s, "Bonus", true)
	printedNote(w, r, s)
	req, total, bonus, btotal := r.Score()
	fmt.Fprintf(w, "\nScore: %d/%d required", req, total)
	if btotal > 0 {
		fmt.Fprintf(w, " · bonus %d/%d", bonus, btotal)
	}
	fmt.Fprintln(w)
	if !s.Review {
		fmt.Fprintf(w, "Next: %s\n", next(r, s))
	}
}

// gateMark is the mark before a gate in each state.
var gateMark = map[gateState]func(Style) string{
	gateHeld:    Style.ok,
	gateFailed:  Style.bad,
	gateUnknown: Style.none,
}

// gateText writes one gate: its mark, name and note, then its lines.
func gateText(w io.Writer, g gateLine, s Style) {
	line := fmt.Sprintf("  %s %s", gateMark[g.state](s), g.name)
	if g.note != "" {
		line += s.dim("  " + g.note)
	}
	fmt.Fprintln(w, line)
	for _, l := range g.lines {
		fmt.Fprintf(w, "      %s\n", escape.Line(l))
	}
}

// itemsText writes the section of required (or bonus) items under its
// title; nothing, not even the title, when there are none.
func itemsText(w io.Writer, r *grade.Result, s Style, title string, bonus bool) {
	first := true
	for _, it := range r.Items {
		if it.Bonus != bonus {
			continue
		}
		if first {
			fmt.Fprintf(w, "\n%s\n", title)
			first = false
		}
		itemText(w, r, it, s)
	}
}

// itemText writes one item: a passed one on a line, a failed one with why
// it failed and what may help.
func itemText(w io.Writer, r *grade.Result, it grade.ItemResult, s Style) {
	rate := ""
	if r.Runs > 1 && r.Build == nil {
		rate = s.dim(fmt.Sprintf("  [passed %d of %d runs]", it.Passes, r.Runs))
	}
	if it.Passed() {
		fmt.Fprintf(w, "  %s %-3s %s%s\n", s.ok(), it.ID, it.Text, rate)
		if why := stubPass(r, it.ID); why != "" {
			fmt.Fprintf(w, "        %s\n", s.dim("passes on the untouched stub: "+why))
		}
		return
	}
	fmt.Fprintf(w, "  %s %-3s %s%s\n", s.bad(), it.ID, it.Text, rate)
	if r.Build != nil {
		return // the build lines above say it all
	}
	failureText(w, r.Kata, it, s)
}

// failureText writes, under a failed item, its message and detail, then
// what may help: a note on luck, the hint that covers it, and (verbose)
// what the code printed.
func failureText(w io.Writer, k catalog.Kata, it grade.ItemResult, s Style) {
	msg := it.Message
	if l := kindLabel[it.Kind]; l != "" && !strings.HasPrefix(msg, l) {
		msg = l + ": " + msg
	}
	// A message can quote what the code returned (an error's text),
	// and regrade shows a candidate's code to the interviewer.
	fmt.Fprintf(w, "        %s\n", escape.Line(msg))
	for _, d := range it.Detail {
		fmt.Fprintf(w, "        %s\n", s.dim(escape.Line(d)))
	}
	if luck := luckNote(it, k, s); luck != "" {
		fmt.Fprintf(w, "        %s\n", luck)
	}
	if hs := k.HintsFor(it.ID); len(hs) > 0 && !s.Review {
		advice := fmt.Sprintf("hint: make hint EX=%s N=%d", k.ID(), hs[0])
		if s.Interview {
			advice = fmt.Sprintf("hint %d covers it: type hint", hs[0])
		}
		fmt.Fprintf(w, "        %s\n", s.dim(advice))
	}
	if s.Verbose {
		printedText(w, it, s)
	}
}

// printedNote names, when output is not verbose, the command that shows
// what the code printed during the failed tests, and how many lines.
func printedNote(w io.Writer, r *grade.Result, s Style) {
	lines := printedInFailures(r)
	if lines == 0 || s.Verbose || s.Verb == "" {
		return
	}
	what := "1 line"
	if lines > 1 {
		what = fmt.Sprintf("%d lines", lines)
	}
	fmt.Fprintf(w, "\nYour code printed %s during the failed tests: make %s EX=%s V=1 shows them under each requirement.\n", what, s.Verb, r.Kata.ID())
}

// luckNote says, under a failed item, that one run can pass by luck: a
// test that failed repeats a scenario whose outcome depends on scheduling,
// or the item passed some repetitions and failed others.
func luckNote(it grade.ItemResult, k catalog.Kata, s Style) string {
	var why string
	switch {
	case !it.FailedByChance():
		return ""
	case it.Flaky():
		why = "it failed only some of the runs: the outcome depends on scheduling, so one run can pass by luck"
	default:
		why = "its scenarios vary from run to run, so one run can pass by luck"
	}
	if s.Interview || s.Review {
		return why + "."
	}
	return fmt.Sprintf("%s; after a fix, make check EX=%s REPEAT=20", why, k.ID())
}

// printedText shows what the code printed during a failed item's tests,
// set apart from the checker's words: a label, then each line behind a bar.
func printedText(w io.Writer, it grade.ItemResult, s Style) {
	for _, t := range it.Tests {
		p := t.Output
		if p.IsZero() {
			continue
		}
		fmt.Fprintf(w, "        %s\n", s.dim("your code printed, in "+t.Name+":"))
		bar := s.dim("│ ")
		for _, l := range p.Head {
			fmt.Fprintf(w, "        %s%s\n", bar, l)
		}
		if p.Cut > 0 {
			fmt.Fprintf(w, "        %s%s\n", bar, s.dim(fmt.Sprintf("… %d lines cut …", p.Cut)))
		}
		for _, l := range p.Tail {
			fmt.Fprintf(w, "        %s%s\n", bar, l)
		}
	}
}

// printedInFailures counts the lines the code printed during the tests of
// the items that failed.
func printedInFailures(r *grade.Result) int {
	n := 0
	for _, it := range r.Items {
		if !it.Passed() {
			n += it.Printed()
		}
	}
	return n
}

// stubPass is why the untouched stub passes item id, when the graded code
// is that stub and the kata declares it; "" otherwise.
func stubPass(r *grade.Result, id string) string {
	if !r.Untouched {
		return ""
	}
	for _, p := range r.Kata.StubPasses {
		if p.ID == id {
			return p.Why
		}
	}
	return ""
}

type gateState int

const (
	gateHeld gateState = iota
	gateFailed
	gateUnknown
)

type gateLine struct {
	name  string
	state gateState
	note  string
	lines []string
}

// gates are the checks that hold for the whole submission.
func gates(r *grade.Result) []gateLine {
	compiles := compileGate(r)
	allowed, clock, vet := findingGates(r.Gate)
	switch {
	case r.Build != nil:
		vet.state, vet.note = gateUnknown, "not checked: the code does not compile"
	case allowed.state == gateFailed:
		// The gate refuses before anything is built: nothing is known of
		// the build either.
		compiles.state, compiles.note = gateUnknown, "not checked: the gate refused to build the code"
		vet.state, vet.note = gateUnknown, "not checked: the gate refused to run the code"
	}
	race, leak := runGates(r)
	return []gateLine{compiles, allowed, clock, vet, race, leak}
}

// compileGate is whether the code compiles, against the hidden tests too.
func compileGate(r *grade.Result) gateLine {
	compiles := gateLine{name: "compiles"}
	if r.Build != nil {
		compiles.state = gateFailed
		if r.Build.Kind == failure.API {
			compiles.name = "compiles against the hidden tests"
			compiles.note = "your exported API differs from the stub's:"
		}
		compiles.lines = r.Build.Lines
	}
	return compiles
}

// findingGates sorts the static gate's findings into the gates they fail:
// what the code may use, the injected clock, and go vet.
func findingGates(findings []gate.Finding) (allowed, clock, vet gateLine) {
	allowed = gateLine{name: "uses only allowed packages and calls"}
	clock = gateLine{name: "waits and reads time only through the injected clock"}
	vet = gateLine{name: "go vet finds no concurrency mistake"}
	allowedList := ""
	for _, f := range findings {
		g := &clock
		switch {
		case f.Blocking():
			g = &allowed
			allowedList = cmp.Or(allowedList, f.Allowed)
		case f.Rule == gate.RuleVet:
			g = &vet
		}
		g.state = gateFailed
		g.lines = append(g.lines, f.String())
	}
	if allowedList != "" { // once, after the imports it refused
		allowed.lines = append(allowed.lines, allowedList)
	}
	return allowed, clock, vet
}

// runGates are the gates only running the tests decides: no data race and
// no goroutine leak. Neither is known when no test ran the code, and the
// race gate not without the race detector.
func runGates(r *grade.Result) (race, leak gateLine) {
	race = shownBy(r, failure.Race, "no data race")
	leak = shownBy(r, failure.Leak, "no goroutine leak")
	if !testsRan(r) {
		for _, g := range []*gateLine{&race, &leak} {
			if g.state == gateHeld {
				g.state, g.note = gateUnknown, "not checked yet: no test got to run your code"
			}
		}
	}
	switch {
	case r.RaceMissing():
		race.state, race.note = gateFailed, "not checked: the race detector needs cgo and a C compiler, and here "+r.NoRace
		race.lines = []string{"this grade calls a kata passed only under the race detector: grade again where cgo works (CGO_ENABLED=1 and gcc)"}
	case !r.Race:
		race.state, race.note = gateUnknown, "not checked: the race detector needs cgo and a C compiler, and here "+r.NoRace
	}
	return race, leak
}

// shownBy is the gate named name, failed by the first item whose failure
// is of kind k, if any.
func shownBy(r *grade.Result, k failure.Kind, name string) gateLine {
	g := gateLine{name: name}
	for _, it := range r.Items {
		if it.Kind == k {
			g.state, g.note = gateFailed, "see "+it.ID
			break
		}
	}
	return g
}

// ranNot are the kinds of a test that never got to run the code.
var ranNot = map[failure.Kind]bool{
	failure.NotImplemented: true,
	failure.Forbidden:      true,
	failure.Compile:        true,
	failure.API:            true,
	failure.Unproven:       true,
}

// testsRan is whether any test got to run the code.
func testsRan(r *grade.Result) bool {
	for _, it := range r.Items {
		for _, t := range it.Tests {
			if !ranNot[t.Kind] {
				return true
			}
		}
	}
	return false
}

// next says what to do now.
func next(r *grade.Result, s Style) string {
	if msg := blockedNext(r); msg != "" {
		return msg
	}
	if msg := failingNext(r, s); msg != "" {
		return msg
	}
	return passingNext(r)
}

// blockedNext is what to do when the tests could not judge the code: it
// does not build, the gate refused it, or it steered the tests; "" when
// none of these.
func blockedNext(r *grade.Result) string {
	k := r.Kata
	switch {
	case r.Build != nil && r.Build.Kind == failure.API:
		return fmt.Sprintf("keep the exported names and signatures of the stub (git diff exercises/%s shows what changed).", k.Slug)
	case r.Build != nil:
		return "fix the compiler errors above, then check again."
	}
	for _, it := range r.Items {
		switch {
		case it.Kind == failure.Forbidden && slices.ContainsFunc(r.Gate, gate.Finding.Blocking):
			return "remove what the gate lists above; the tests run only on code that passes it."
		case it.Kind == failure.Forbidden || it.Kind == failure.Unproven:
			return "let the hidden tests run and speak for themselves: print no test results and do not end or steer the test process."
		}
	}
	return ""
}

// failingNext is where to start when the stub is untouched, else the first
// required item that fails and its hint; "" when every required item
// passes.
func failingNext(r *grade.Result, s Style) string {
	k := r.Kata
	allTodo := true
	var first *grade.ItemResult
	for i, it := range r.Items {
		if it.Kind != failure.NotImplemented {
			allTodo = false
		}
		if !it.Passed() && !it.Bonus && first == nil {
			first = &r.Items[i]
		}
	}
	switch {
	case allTodo:
		return fmt.Sprintf("read exercises/%s/README.md, ask yourself its Ask-first questions, then replace the TODO panics in exercises/%s.", k.Slug, k.Slug)
	case first == nil:
		return ""
	}
	msg := fmt.Sprintf("make %s pass, then check again.", first.ID)
	switch hs := k.HintsFor(first.ID); {
	case len(hs) > 0 && s.Interview:
		msg += " Stuck? type hint"
	case len(hs) > 0:
		msg += fmt.Sprintf(" Stuck? make hint EX=%s N=%d", k.ID(), hs[0])
	}
	return msg
}

// passingNext is what is left when every required item passes: what the
// grade still misses, else the bonus.
func passingNext(r *grade.Result) string {
	switch {
	case r.RaceMissing():
		return "every requirement passes, but the race detector did not run (" + r.NoRace + "), and this grade needs it to call the kata passed: grade again where cgo works."
	case slices.ContainsFunc(r.Gate, func(f gate.Finding) bool { return f.Rule == gate.RuleVet }):
		return "every requirement passes, but go vet found a mistake above that the tests catch only by luck: fix it."
	case slices.ContainsFunc(r.Gate, func(f gate.Finding) bool { return f.Rule == gate.RuleTimerReset }):
		return "every requirement passes, but the gate above does not: a fresh timer per wait, never Reset."
	case len(r.Gate) > 0:
		return "every requirement passes, but the gate above does not: use the injected clock."
	}
	_, _, b, bt := r.Score()
	if b < bt {
		return "all requirements pass. Try the bonus follow-ups in the README."
	}
	return "all requirements and bonus follow-ups pass. Well done."
}

// Meta is what a JSON grade says beyond the grade itself.
type Meta struct {
	Participant string // who was graded, for a workshop's room report
	Time        time.Time
	Fingerprint fingerprint.Pair
}

// JSON writes the grade as data (see the package doc for the schema).
func JSON(w io.Writer, r *grade.Result, m Meta) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	g := toJSON(r)
	g.Participant, g.Fingerprint = m.Participant, m.Fingerprint
	if !m.Time.IsZero() {
		g.Time = m.Time.Format(time.RFC3339)
	}
	return enc.Encode(g)
}

type jsonGrade struct {
	Schema      int              `json:"schema"`
	Participant string           `json:"participant"`
	Time        string           `json:"time,omitempty"`
	Fingerprint fingerprint.Pair `json:"fingerprint"`
	Kata        string           `json:"kata"`
	Title       string           `json:"title"`
	Passed      bool             `json:"passed"`
	Score       jsonScore        `json:"score"`
	Race        bool             `json:"race"`
	NoRace      string           `json:"noRace"`
	RaceReq     bool             `json:"raceRequired,omitempty"`
	Runs        int              `json:"runs"`
	Gates       []jsonGate       `json:"gates"`
	Build       *jsonBuild       `json:"build"`
	Items       []jsonItem       `json:"items"`
}

type jsonScore struct {
	Required      int `json:"required"`
	RequiredTotal int `json:"requiredTotal"`
	Bonus         int `json:"bonus"`
	BonusTotal    int `json:"bonusTotal"`
}

type jsonGate struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Rule    string `json:"rule"`
	Message string `json:"message"`
	Allowed string `json:"allowed,omitempty"`
}

type jsonBuild struct {
	Kind  failure.Kind `json:"kind"`
	Lines []string     `json:"lines"`
}

type jsonItem struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Bonus bool   `json:"bonus"`
	grade.Verdict
	Hints      []int              `json:"hints"`
	Runs       int                `json:"runs"`
	Passes     int                `json:"passes"`
	Scheduling bool               `json:"scheduling"`
	Tests      []grade.TestResult `json:"tests"`
}

func toJSON(r *grade.Result) jsonGrade {
	req, total, b, bt := r.Score()
	g := jsonGrade{Schema: 1, Kata: r.Kata.Slug, Title: r.Kata.Title, Passed: r.Passed(),
		Score: jsonScore{req, total, b, bt}, Race: r.Race, NoRace: r.NoRace, RaceReq: r.RaceRequired, Runs: r.Runs,
		Gates: []jsonGate{}, Items: []jsonItem{}}
	for _, f := range r.Gate {
		g.Gates = append(g.Gates, jsonGate{f.File, f.Line, f.Rule, f.Message, f.Allowed})
	}
	if r.Build != nil {
		g.Build = &jsonBuild{r.Build.Kind, r.Build.Lines}
	}
	for _, it := range r.Items {
		hs := r.Kata.HintsFor(it.ID)
		if hs == nil {
			hs = []int{}
		}
		g.Items = append(g.Items, jsonItem{ID: it.ID, Text: it.Text, Bonus: it.Bonus, Verdict: it.Verdict, Hints: hs,
			Runs: it.Runs, Passes: it.Passes, Scheduling: it.Scheduling, Tests: it.Tests})
	}
	return g
}
