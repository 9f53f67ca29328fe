// Package state keeps a learner's progress between runs of the checker: the
// last grade of each kata, how many hints were shown, whether the decisions
// were read on request, whether the kata ever passed, whether the
// learner gave up on it, its bug hunts, and the last score of the
// learner's own tests (catch).
//
// It lives in .kata/state.json at the root of the checkout, a directory git
// ignores, so no verb that records progress writes the learner's files.
// The file is JSON:
//
//	{
//	  "schema": 1,
//	  "writes": 42,   // how many times the checker wrote the file
//	  "sum": "…",     // the SHA-256 of the rest, as the checker wrote it
//	  "katas": {
//	    "06-retry": {
//	      "last": {"fingerprint": "…", "passed": false,
//	               "required": 3, "requiredTotal": 7, "bonus": 0, "bonusTotal": 2,
//	               "runs": 60,    // a pass in every one of 60 runs (check --repeat);
//	                              // omitted for one run, as in files written before it
//	               "noBuild": true, // the code did not build
//	               "stub": true,  // the code graded was the untouched stub
//	               "hunt": true}, // the code graded was a bug hunt's (these three omitted
//	                              // when false, and in files written before them)
//	      "passedOnce": false,   // some grade of the learner's code (not a hunt's) passed
//	                             // every requirement; with gaveUp, only after the give-up
//	      "passedBeforeReset": "alone", // how it passed before its last reset:
//	                             // "alone", "afterSolution"; omitted when it did not
//	      "hintsShown": 2,       // the highest hint number shown
//	      "decisionsRead": "2026-03-01T09:12:00Z", // when decisions NN first showed them
//	      "decisionsShown": "…", // when an interview first showed them
//	      "gaveUp": false,       // solution --give-up was run
//	      "gaveUpAt": "…",       // when (omitted in files written before it)
//	      "gaveUpVia": "bughunt", // how: solution, or a bug hunt planted before a pass
//	      "solutionShown": "…",  // when solution NN first showed the reference
//	      "hintLog": [{"n": 1, "at": "2026-03-01T09:20:00+01:00", "via": "hint"}]
//	                             // every hint shown, by the hint verb or an interview
//	      "hunts": [             // bug hunts, oldest first; the last is under way until it ends
//	        {"mutant": "clksleep", "level": "reasoning", "started": "2026-03-01T09:30:00Z",
//	         "solved": "2026-03-01T09:41:00Z", "ended": "2026-03-01T09:41:00Z"},
//	        {"mutant": "sleeplast", "started": "…", "ended": "…", "gaveUp": true}
//	      ],                     // (level omitted in files written before levels)
//	      "huntCode": true,      // the exercise holds a hunt's code: never backed up
//	      "catch": {"caught": 6, "mutants": 18, "falseAlarms": 0} // the last catch run of the learner's tests
//	    }
//	  }
//	}
//
// Every write counts and sums the file, so that a reader can tell the
// checker's writes, here or in another terminal, from anything else: an
// edit by hand (its sum no longer matches), or an older copy put back or
// a file deleted and written afresh (fewer writes). The sum has no
// secret: whoever computes it again passes for the checker (see Look).
//
// A fingerprint is a hash of the files a grade reads (the package's non-test
// .go files); when the files no longer match it, the grade is stale.
// Concurrent checkers (a watch and a check in two terminals) update the file
// under an exclusive lock, each change applied to the latest content.
package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"gokata/checker/internal/fingerprint"
)

// Dir is the directory, relative to the checkout's root, that holds the
// checker's own files: the state, backups made by reset, scorecards.
const Dir = ".kata"

const fileName = "state.json"

// Grade is what is kept of a kata's last grade.
type Grade struct {
	Fingerprint   string `json:"fingerprint"`
	Passed        bool   `json:"passed"`
	Required      int    `json:"required"`
	RequiredTotal int    `json:"requiredTotal"`
	Bonus         int    `json:"bonus"`
	BonusTotal    int    `json:"bonusTotal"`
	// Runs is how many times every test ran (check --repeat); 0 means once.
	Runs int `json:"runs,omitempty"`
	// NoBuild: the code did not build.
	NoBuild bool `json:"noBuild,omitempty"`
	// Stub: the code graded was the kata's untouched stub.
	Stub bool `json:"stub,omitempty"`
	// Hunt: the code graded was a bug hunt's, graded while the hunt was
	// under way or unchanged since: its pass is the hunt's, not the
	// learner's.
	Hunt bool `json:"hunt,omitempty"`
}

// Repeated reports whether g is a pass in every one of several runs: one
// that luck with scheduling cannot explain.
func (g Grade) Repeated() bool { return g.Passed && g.Runs > 1 }

// Kata is the progress on one kata.
type Kata struct {
	Last *Grade `json:"last,omitempty"`
	// PassedOnce: some grade of the learner's own code passed, since the
	// last reset. A bug hunt's pass does not count (Grade.Hunt).
	PassedOnce bool `json:"passedOnce,omitempty"`
	HintsShown int  `json:"hintsShown,omitempty"`
	// GaveUp: the learner gave up before any pass (solution --give-up, or
	// a bug hunt on a kata not passed), so a later pass came after the
	// solution was shown.
	GaveUp bool `json:"gaveUp,omitempty"`
	// PassedBeforeReset is how the kata passed before its last reset,
	// the best of all resets: list still shows it. NotPassed when it did
	// not.
	PassedBeforeReset Pass `json:"passedBeforeReset,omitempty"`
	// DecisionsRead is when the decisions verb first showed the kata's
	// decisions (an interview's own reveal is not counted); nil: never.
	DecisionsRead *time.Time `json:"decisionsRead,omitempty"`
	// DecisionsShown is when an interview first showed the kata's
	// decisions, since the last reset; nil: none has.
	DecisionsShown *time.Time `json:"decisionsShown,omitempty"`
	// GaveUpAt is when solution --give-up was first run; nil in files
	// written before it was kept, or without a give-up.
	GaveUpAt *time.Time `json:"gaveUpAt,omitempty"`
	// GaveUpVia is the verb that gave up: GaveUpSolution, or
	// GaveUpBughunt for a hunt planted on a kata not passed; "" in files
	// written before it was kept (solution).
	GaveUpVia string `json:"gaveUpVia,omitempty"`
	// SolutionShown is when the solution verb first showed the reference.
	SolutionShown *time.Time `json:"solutionShown,omitempty"`
	// HintLog is every hint shown, in order: an interview's record lists
	// them, whichever verb showed them.
	HintLog []HintRead `json:"hintLog,omitempty"`
	// Hunts are the kata's bug hunts, oldest first; the last is under way
	// until it ends.
	Hunts []Hunt `json:"hunts,omitempty"`
	// HuntCode: the exercise holds the code a bug hunt planted, fixed or
	// not, since that hunt started; a reset, which writes the stub, ends
	// it. Such code is not the learner's work, and a backup of it would
	// show the planted change, so it is never backed up.
	HuntCode bool `json:"huntCode,omitempty"`
	// Catch is the score of the last catch run that ran the learner's
	// tests; nil: none.
	Catch *Catch `json:"catch,omitempty"`
	// Notes are the interviewer's notes on the kata (the note verb), in
	// order: an interview's record lists those made while it ran.
	Notes []Note `json:"notes,omitempty"`
	// Asked are the questions the interviewer ticked as asked by the
	// candidate (the asked verb), in order: an interview's record lists
	// those ticked while it ran.
	Asked []Asked `json:"asked,omitempty"`
}

// Asked is a question the candidate asked, as the interviewer ticked it:
// the kata's Ask-first question Question (from 1), or another one, Text.
type Asked struct {
	At       time.Time `json:"at"`
	Question int       `json:"question,omitempty"`
	Text     string    `json:"text,omitempty"`
}

// Note is a line an interviewer noted, and when.
type Note struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// Catch is the score of a catch run: the mutants the learner's tests
// caught, and the tests that failed on the reference.
type Catch struct {
	Caught      int `json:"caught"`
	Mutants     int `json:"mutants"`
	FalseAlarms int `json:"falseAlarms"`
}

// Pass is how a kata passed: on the learner's own, or only after its
// solution was shown.
type Pass string

const (
	NotPassed           Pass = ""
	PassedAlone         Pass = "alone"
	PassedAfterSolution Pass = "afterSolution"
)

// rank orders passes: not passed, after the solution, alone.
func (p Pass) rank() int {
	switch p {
	case PassedAlone:
		return 2
	case PassedAfterSolution:
		return 1
	}
	return 0
}

// Better reports whether p is a better pass than q.
func (p Pass) Better(q Pass) bool { return p.rank() > q.rank() }

// Pass is how the kata passed since its last reset. GaveUp is only ever
// set before any pass, so a pass with it came after the solution was
// shown; files written before this rule read the same way.
func (k *Kata) Pass() Pass {
	switch {
	case !k.PassedOnce:
		return NotPassed
	case k.GaveUp:
		return PassedAfterSolution
	}
	return PassedAlone
}

// HintRead is a hint shown: its number, when, and by which verb ("hint",
// "interview").
type HintRead struct {
	N   int       `json:"n"`
	At  time.Time `json:"at"`
	Via string    `json:"via"`
}

// ShowHint notes that hint n was shown at at by verb via.
func (k *Kata) ShowHint(n int, at time.Time, via string) {
	k.HintsShown = max(k.HintsShown, n)
	k.HintLog = append(k.HintLog, HintRead{N: n, At: at, Via: via})
}

// Hunt is one bug hunt: which mutant was planted, and how it went.
type Hunt struct {
	Mutant string `json:"mutant"`
	// Level is the mutant's level when the hunt started (one-line,
	// reasoning, schedule); "" in files written before levels.
	Level   string    `json:"level,omitempty"`
	Started time.Time `json:"started"`
	// Solved is when a check first showed the planted mistake fixed.
	Solved *time.Time `json:"solved,omitempty"`
	// Ended is when the hunt ended: solved, given up or reset.
	Ended  *time.Time `json:"ended,omitempty"`
	GaveUp bool       `json:"gaveUp,omitempty"`
}

// Hunt returns the kata's hunt under way, or nil.
func (k *Kata) Hunt() *Hunt {
	if n := len(k.Hunts); n > 0 && k.Hunts[n-1].Ended == nil {
		return &k.Hunts[n-1]
	}
	return nil
}

// LastHunt is the mutant of the kata's latest hunt, ended or not; "" for
// none.
func (k *Kata) LastHunt() string {
	if n := len(k.Hunts); n > 0 {
		return k.Hunts[n-1].Mutant
	}
	return ""
}

// HuntsSolved counts the kata's hunts that were solved.
func (k *Kata) HuntsSolved() int {
	n := 0
	for _, h := range k.Hunts {
		if h.Solved != nil {
			n++
		}
	}
	return n
}

// HuntsGivenUp counts the kata's hunts that ended with the learner asking
// for the answer.
func (k *Kata) HuntsGivenUp() int {
	n := 0
	for _, h := range k.Hunts {
		if h.GaveUp {
			n++
		}
	}
	return n
}

// startHunt ends the hunt under way, if any, and starts one of mutant at
// level.
func (k *Kata) startHunt(mutant, level string, now time.Time) {
	k.EndHunt(now, false)
	k.Hunts = append(k.Hunts, Hunt{Mutant: mutant, Level: level, Started: now})
	k.HuntCode = true
}

// SolveHunt marks the hunt under way solved and ended; it reports whether
// there was one.
func (k *Kata) SolveHunt(now time.Time) bool {
	h := k.Hunt()
	if h == nil {
		return false
	}
	h.Solved, h.Ended = &now, &now
	return true
}

// EndHunt ends the hunt under way, if any, unsolved; gaveUp records that
// the learner asked for the answer.
func (k *Kata) EndHunt(now time.Time, gaveUp bool) {
	if h := k.Hunt(); h != nil {
		h.Ended, h.GaveUp = &now, gaveUp
	}
}

// State is the progress on every kata, by slug ("06-retry").
type State struct {
	Schema int `json:"schema"`
	// Writes counts the checker's writes of the file, and Sum is the
	// SHA-256 of the rest of it as written (sumOf); 0 and "" in files
	// written before they were kept.
	Writes int              `json:"writes,omitempty"`
	Sum    string           `json:"sum,omitempty"`
	Katas  map[string]*Kata `json:"katas"`
}

// Kata returns the progress on slug; the zero Kata when there is none.
// Changes to it are kept only by Progress's operations.
func (s *State) Kata(slug string) *Kata {
	if s.Katas == nil {
		s.Katas = map[string]*Kata{}
	}
	k := s.Katas[slug]
	if k == nil {
		k = &Kata{}
		s.Katas[slug] = k
	}
	return k
}

// Record keeps g as the kata's last grade. A single-run pass of the files
// that already passed every run of a repeated grade keeps that count: the
// evidence still holds. A grade made while a bug hunt is under way, or of
// the same files as such a grade, is the hunt's (Grade.Hunt): its pass
// solves the hunt, not the kata.
func (s *State) Record(slug string, g Grade) {
	k := s.Kata(slug)
	old := k.Last
	if old != nil && old.Repeated() && g.Passed && old.Fingerprint == g.Fingerprint {
		g.Runs = max(g.Runs, old.Runs)
	}
	if k.Hunt() != nil || old != nil && old.Hunt && old.Fingerprint == g.Fingerprint {
		g.Hunt = true
	}
	k.Last = &g
	k.PassedOnce = k.PassedOnce || g.Passed && !g.Hunt
}

// Path is the state file of the checkout at root.
func Path(root string) string { return filepath.Join(root, Dir, fileName) }

// Load reads the state of the checkout at root; a checkout without a state
// file has made no progress yet.
func Load(root string) (*State, error) {
	data, err := os.ReadFile(Path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Schema: 1, Katas: map[string]*Kata{}}, nil
	}
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s is damaged (delete it to start afresh): %w", Path(root), err)
	}
	if s.Schema != 1 {
		return nil, fmt.Errorf("%s has schema %d; this checker reads schema 1", Path(root), s.Schema)
	}
	if s.Katas == nil {
		s.Katas = map[string]*Kata{}
	}
	return s, nil
}

// update applies change to the latest state of the checkout at root and
// writes it back, holding a lock so that concurrent checkers lose nothing.
// The file is replaced in one step: a crash leaves the old or the new.
// Progress's operations are its only callers.
func update(root string, change func(*State) error) error {
	if err := os.MkdirAll(filepath.Join(root, Dir), 0o755); err != nil {
		return err
	}
	unlock, err := lock(filepath.Join(root, Dir, "state.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	s, err := Load(root)
	if err != nil {
		return err
	}
	if err := change(s); err != nil {
		return err
	}
	data, err := s.marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Join(root, Dir), fileName+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), Path(root))
}

// marshal is s as the file holds it, counted and summed as one more write.
func (s *State) marshal() ([]byte, error) {
	s.Writes++
	s.Sum = ""
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if s.Sum, err = sumOf(data); err != nil {
		return nil, err
	}
	return json.MarshalIndent(s, "", "  ")
}

// sumOf is the hex SHA-256 of the state file data without its sum, in
// canonical JSON (keys sorted), so that a file keeps its sum through a
// tool that lays its JSON out otherwise.
func sumOf(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", err
	}
	delete(m, "sum")
	canon, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

// Snapshot is the state file as found at one look.
type Snapshot struct {
	Found  bool   // the file is there
	Digest string // the SHA-256 of its bytes, to tell whether it changed
	// Checker: its sum matches, so the checker wrote it as it is.
	Checker bool
	State   *State // its content; nil when it cannot be read
}

// Look reads the state file of the checkout at root as it is.
func Look(root string) Snapshot {
	data, err := os.ReadFile(Path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return Snapshot{}
	}
	digest := sha256.Sum256(data)
	snap := Snapshot{Found: true, Digest: hex.EncodeToString(digest[:])}
	s := &State{}
	if err != nil || json.Unmarshal(data, s) != nil {
		return snap
	}
	snap.State = s
	sum, err := sumOf(data)
	snap.Checker = err == nil && s.Sum != "" && sum == s.Sum
	return snap
}

// Fingerprint is the fingerprint of the non-test .go files of dir: the
// files a grade reads (see package fingerprint).
func Fingerprint(dir string) (string, error) { return fingerprint.Code(dir) }
