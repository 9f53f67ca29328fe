// Package record is the written record of an interview: what happened,
// when, and the code at every save, kept as JSON beside the Markdown
// scorecard rendered from it (Scorecard). A hiring committee reads the
// scorecard; replay steps through the record; regrade compares its
// fingerprints with the returned files.
//
// # JSON schema (version 1)
//
//	{
//	  "schema": 1,
//	  "kata": "06-retry", "title": "…", "candidate": "Ada Lovelace",
//	  "minutes": 30,                        // the time limit
//	  "start": "2030-05-06T14:00:00+02:00", // every time is RFC 3339, with its zone
//	  "end": "…",
//	  "ending": "done",                     // done, time-up or stopped (Ctrl-C)
//	  "keptBack": false,                    // an interview kit: the READMEs keep the decisions back
//	  "race": true, "noRace": "",           // graded under the race detector; why not
//	  "items": [{"id": "R1", "text": "…", "bonus": false}],
//	  "hints": 3,                           // how many the kata has
//	  "ask": ["…"],                         // its Ask-first questions
//	  "followUps": "…",                     // WHY.md's "What an interviewer asks next" ("" in an interview kit)
//	  "startCode": "stub",                  // stub, changed (graded at the start) or unknown (no git history)
//	  "events": [{"at": "…", "kind": "grade", …, // in time order, see Event: a grade (with the code it
//	                                        // read), a save no grade saw (its code), a hint, a note…
//	              "seq": 1, "prev": "9f2c…"}],   // its place, from 1, and the hash of what came before it
//	  "final": {…},                         // a Grade: the last code graded repeat × cpu times
//	                                        // (null when Ctrl-C ended the session)
//	  "diff": "--- retry.go\n…",            // the final code's diff from the stub ("" if unknown)
//	  "rubric": {…},                        // for the interviewer to fill, see Rubric
//	  "hunt": {"mutant": "clksleep", …},    // a bug-hunt interview's planted mistake, see Hunt (omitted otherwise)
//	  "startFiles": {"retry.go": "…"},      // the code it started from: the stub, or a bug hunt's planted code
//	                                        // (omitted when unknown)
//	  "copy": "repository"                  // where it ran: repository (a clone, solutions/ on disk) or kit
//	                                        // (a candidate kit); omitted in older records
//	  "witness": {"url": "http://…", "room": "…", "unsent": 0}, // the server that saw it happen
//	                                        // (omitted when none did), see package witness
//	  "seal": {"events": 14, "last": "…", "sum": "…"} // closes the hash chain, see Seal
//	}
//
// Fields are only ever added within a schema version.
//
// # The hash chain
//
// Each event's prev is the hex SHA-256 of the canonical JSON (keys
// sorted) of the event before it, its own seq and prev included; the
// first event's covers the header: schema, kata, title, candidate,
// minutes, start, keptBack, race, noRace, items, hints, ask, followUps,
// startCode and hunt. The seal holds the number of events and the hash
// of the last, and sum covers those and what the interview wrote at its
// end: end, ending, final, diff and witness. The rubric is not covered: the
// interviewer fills it in afterwards. Verify finds the first part that
// no longer matches. The chain has no secret, so it shows an edit by
// hand, not a forgery that computes every hash again. A record without
// seq, prev and seal (written before the chain) still reads: its chain
// is missing.
package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/fingerprint"
)

// Schema is the version of the format this package writes and reads.
const Schema = 1

// The endings of an interview.
const (
	Done    = "done"
	TimeUp  = "time-up"
	Stopped = "stopped"
)

// What the exercise held when the interview began.
const (
	StartStub    = "stub"
	StartChanged = "changed"
	StartUnknown = "unknown"
)

// Where an interview ran (Record.Copy).
const (
	CopyRepository = "repository"
	CopyKit        = "kit"
)

// Record is one interview.
type Record struct {
	Schema    int       `json:"schema"`
	Kata      string    `json:"kata"`
	Title     string    `json:"title"`
	Candidate string    `json:"candidate"`
	Minutes   int       `json:"minutes"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Ending    string    `json:"ending"`
	KeptBack  bool      `json:"keptBack"`
	Race      bool      `json:"race"`
	NoRace    string    `json:"noRace,omitempty"`
	Items     []Item    `json:"items"`
	Hints     int       `json:"hints"`
	Ask       []string  `json:"ask"`
	FollowUps string    `json:"followUps"`
	StartCode string    `json:"startCode"`
	Events    []Event   `json:"events"`
	Final     *Grade    `json:"final"`
	Diff      string    `json:"diff"`
	Rubric    Rubric    `json:"rubric"`
	// Hunt is the bug hunt the interview started from (interview
	// --bughunt); nil for none. StartCode and Diff are then about the
	// planted code, not the stub.
	Hunt *Hunt `json:"hunt,omitempty"`
	// StartFiles is the code the interview started from (file name →
	// content): the stub, or in a bug hunt the planted code; nil when
	// it is not known.
	StartFiles map[string]string `json:"startFiles,omitempty"`
	// Copy is where the interview ran: CopyRepository (a clone of the
	// repository, with solutions/ on disk) or CopyKit (a candidate
	// kit); "" in records made before it was recorded.
	Copy string `json:"copy,omitempty"`
	// Witness is where a witness kept a copy of the interview as it
	// happened (package witness); nil when none did.
	Witness *Witness `json:"witness,omitempty"`
	// Seal closes the hash chain (Save); nil in a record written before
	// the chain.
	Seal *Seal `json:"seal,omitempty"`

	chain *Chain // the chain's verdict, when the record was read or written
	// Witnessed is what a comparison with the witness's copy found; nil
	// when none was made.
	Witnessed *Witnessed `json:"-"`
}

// Witnessed is what the record's comparison with its witness's copy
// found (package witness).
type Witnessed struct {
	Events      int      // in the witness's copy
	Differences []string // none: they agree
}

// Witness is the interviewer's server that got each event as it was
// logged, and the record when it was written.
type Witness struct {
	URL  string `json:"url"`
	Room string `json:"room"`
	// Unsent is how many events did not reach it during the interview.
	Unsent int `json:"unsent,omitempty"`
}

// Hunt is a bug-hunt interview's planted mistake, and when it was fixed.
// Mutant and Mistake are "" for a hunt planted when its kit was packed:
// the kit does not know them.
type Hunt struct {
	Mutant  string `json:"mutant"`
	Mistake string `json:"mistake"`
	Symptom string `json:"symptom"`
	// Fixed is how long into the interview a grade first showed the
	// mistake fixed; nil when none did.
	Fixed *time.Duration `json:"fixed,omitempty"`
}

// Item is a requirement or bonus item of the kata.
type Item struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Bonus bool   `json:"bonus"`
}

// The kinds of Event.
const (
	KindStart      = "start"        // the story shown, the clock started
	KindAnswered   = "answered"     // the ask-first pause ended: the decisions shown
	KindGrade      = "grade"        // Grade holds it; Via: start, save, end (an unsaved edit at the end), plant (a bug hunt's code planted during the session)
	KindHint       = "hint"         // hint Hint shown; Via: interview, or hint (the hint verb, in any terminal)
	KindDecisions  = "decisions"    // the decisions verb first showed them
	KindGaveUp     = "give-up"      // Via: solution (solution --give-up, and in records without Via), or bughunt (a hunt planted before any pass)
	KindHuntGaveUp = "hunt-give-up" // bughunt --give-up: the planted change shown; Via: packed (a hunt planted when its kit was packed: nothing shown)
	KindSolution   = "solution"     // the solution verb first showed the reference
	KindEnd        = "end"          // Via: done, time-up, stopped
	KindFinal      = "final"        // the final repeated grade (Record.Final) was made
	KindNote       = "note"         // the interviewer noted Note (the note verb, in another terminal)
	KindAsked      = "asked"        // the interviewer ticked Ask-first question Question as asked (the asked verb), or Note: another question the candidate asked
	KindSave       = "save"         // a save no grade saw (a later save came before its grade); Code holds it
	// KindStateChanged: the progress state (.kata/state.json) was found
	// changed by something other than the checker, at a grade or the end;
	// Via: removed, or rewritten (edited by hand, put back from a copy,
	// or reset, so that what it held is gone).
	KindStateChanged = "state-changed"
)

// The Via of a KindStateChanged event.
const (
	StateRemoved   = "removed"
	StateRewritten = "rewritten"
)

// Event is something that happened, at a time; events from before the
// start (a hint read the day before) keep their own time.
type Event struct {
	At    time.Time `json:"at"`
	Kind  string    `json:"kind"`
	Hint  int       `json:"hint,omitempty"`
	Via   string    `json:"via,omitempty"`
	Grade *Grade    `json:"grade,omitempty"`
	Note  string    `json:"note,omitempty"`
	// Question is the Ask-first question (from 1) of a KindAsked; 0: the
	// candidate asked another, Note.
	Question int `json:"question,omitempty"`
	// Code is the code of a KindSave (file name → content).
	Code map[string]string `json:"code,omitempty"`
	// Seq is the event's place in the record, from 1, and Prev the hash
	// of what came before it (see the package's hash chain); 0 and "" in
	// a record written before the chain.
	Seq  int    `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`
}

// Grade is one grade: its score, each item's verdict, what the gate and
// the compiler said, and the code it graded.
type Grade struct {
	Passed        bool              `json:"passed"`
	Required      int               `json:"required"`
	RequiredTotal int               `json:"requiredTotal"`
	Bonus         int               `json:"bonus"`
	BonusTotal    int               `json:"bonusTotal"`
	Runs          int               `json:"runs"`          // runs of every test: repeat × GOMAXPROCS values
	CPU           string            `json:"cpu,omitempty"` // those values, when repeated
	Build         []string          `json:"build,omitempty"`
	Gate          []string          `json:"gate,omitempty"`
	Items         []Verdict         `json:"items"`
	Fingerprint   fingerprint.Pair  `json:"fingerprint"`
	Code          map[string]string `json:"code"` // the learner's .go files, not tests: name → content
}

// Verdict is one item's outcome in a grade.
type Verdict struct {
	ID      string `json:"id"`
	Passed  bool   `json:"passed"`
	Kind    string `json:"kind"` // as in check --json
	Message string `json:"message,omitempty"`
	// Detail is what the verdict showed below its message: where (the
	// leaked goroutine's line, the race's two accesses), the scenario.
	Detail []string `json:"detail,omitempty"`
	Runs   int      `json:"runs"`
	Passes int      `json:"passes"`
}

// Files is the graded code as files.
func (g *Grade) Files() map[string][]byte { return files(g.Code) }

// Grades returns the grades made during the session, in order.
func (r *Record) Grades() []Event {
	return r.events(KindGrade)
}

// Saves are the events that hold the candidate's code, in order: the
// grades, and the saves that no grade saw (KindSave).
func (r *Record) Saves() []Event {
	return r.events(KindGrade, KindSave)
}

// SavedCode is the code an event holds: a grade's, or a save's; nil for
// other events.
func (e Event) SavedCode() map[string]string {
	if e.Grade != nil {
		return e.Grade.Code
	}
	return e.Code
}

// events are r's events of the kinds given, in order.
func (r *Record) events(kinds ...string) []Event {
	var out []Event
	for _, e := range r.Events {
		if slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// Path is where the record of an interview goes: beside the scorecard,
// with .json for its .md.
func Path(scorecard string) string {
	base, _ := strings.CutSuffix(scorecard, ".md")
	return base + ".json"
}

// Save seals r's hash chain, from its events as they are, and writes r
// to path as indented JSON.
func Save(path string, r *Record) error {
	if err := r.seal(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// MaxSize is the largest file Load reads: a record holds the code of
// every grade, a few hundred KiB in a long interview.
const MaxSize = 64 << 20

// Load reads a record; anything that is not one is an error of one line.
func Load(path string) (*Record, error) {
	data, err := Read(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Read reads the file at path for Parse. One that is not a regular file,
// or larger than MaxSize, is refused without reading it.
func Read(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > MaxSize {
		return nil, tooLarge(fi.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSize { // it grew since
		return nil, tooLarge(int64(len(data)))
	}
	return data, nil
}

func tooLarge(size int64) error {
	return fmt.Errorf("%d MiB, more than an interview record can be (%d MiB): not read", (size+1<<20-1)>>20, MaxSize>>20)
}

// Parse reads a record from data, checking what the scorecard and replay
// rely on, and its hash chain (Verify; see Record.Chain). A record that
// cannot be read is an error of one line that names the event at fault
// where there is one.
func Parse(data []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	r := &Record{}
	if err := dec.Decode(r); err != nil {
		return nil, decodeError(data, err)
	}
	switch {
	case r.Schema != Schema:
		return nil, fmt.Errorf("not an interview record of schema %d (it says schema %d)", Schema, r.Schema)
	case r.Kata == "" || r.Start.IsZero():
		return nil, errors.New("not an interview record: no kata or start time")
	case !slices.Contains([]string{Done, TimeUp, Stopped}, r.Ending):
		return nil, fmt.Errorf("not an interview record: ending %q is none of done, time-up, stopped", r.Ending)
	}
	for i, e := range r.Events {
		if e.Kind == KindGrade && e.Grade == nil {
			return nil, fmt.Errorf("not an interview record: event %d is a grade without its verdicts", i+1)
		}
	}
	if err := r.Rubric.check(); err != nil {
		return nil, fmt.Errorf("the rubric: %v", err)
	}
	c := Verify(data)
	r.chain = &c
	return r, nil
}

// decodeError says in one line why data, which failed to decode with
// err, is no record, naming the event that could not be read.
func decodeError(data []byte, err error) error {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
		pe *time.ParseError
	)
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the JSON ends early (cut off?)"
	case errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth"):
		msg = fmt.Sprintf("the JSON is nested too deep (more than 10000 levels) at byte %d", se.Offset)
	case errors.As(err, &se):
		msg = fmt.Sprintf("bad JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te) && te.Field != "":
		msg = fmt.Sprintf("%s holds a JSON %s, not a %s", te.Field, te.Value, te.Type)
	case errors.As(err, &pe) || strings.HasPrefix(msg, "Time.UnmarshalJSON"):
		msg = "a time that is not an RFC 3339 string (2030-05-06T14:00:00+02:00)"
	}
	if n := failingEvent(data); n > 0 {
		msg = fmt.Sprintf("event %d: %s", n, msg)
	}
	return fmt.Errorf("not an interview record: %s", escape.Line(msg))
}

// failingEvent is the event, from 1, that cannot be read as one; 0 when
// the fault is not inside an event.
func failingEvent(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0
		}
		if key != "events" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return 0
		}
		for n := 1; dec.More(); n++ {
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return n
			}
			if json.Unmarshal(raw, &Event{}) != nil {
				return n
			}
		}
		return 0
	}
	return 0
}

// escaped is a copy of r with every string in it passed through f (the
// code's file names and contents too): what a record says is shown by
// the scorecard and replay, and anyone can write one.
func (r *Record) escaped(f func(string) string) *Record {
	data, err := json.Marshal(r)
	c := &Record{}
	if err != nil || json.Unmarshal(data, c) != nil {
		panic(fmt.Sprintf("record: a record does not survive a copy through JSON: %v", err))
	}
	c.chain = r.chain
	if w := r.Witnessed; w != nil {
		c.Witnessed = &Witnessed{Events: w.Events, Differences: slices.Clone(w.Differences)}
	}
	mapStrings(reflect.ValueOf(c).Elem(), f)
	return c
}

// mapStrings passes every string v holds, in exported fields, slices,
// maps (their keys too) and pointers, through f.
func mapStrings(v reflect.Value, f func(string) string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(f(v.String()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			mapStrings(v.Elem(), f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				mapStrings(v.Field(i), f)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			mapStrings(v.Index(i), f)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			mapStrings(k, f)
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			mapStrings(e, f)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}
