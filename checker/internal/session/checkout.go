package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/exercise"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/record"
	"gokata/checker/internal/state"
	"gokata/checker/internal/usage"
)

// Checkout runs what a learner asks of the checkout at Root besides
// grading: reset, a bug hunt planted or given up, hints, decisions, the
// reference, the list of katas. Before it replaces the learner's files
// it emits Replacing and asks Confirm, unless forced.
type Checkout struct {
	Root string
	Vars []string // the environment for git
	Now  func() time.Time
	// Confirm asks the learner a yes/no question; nil answers no.
	Confirm func(question string) (bool, error)
	Emit    func(Event)
}

// UsageError is a request that cannot be done as made (usage.Error).
type UsageError = usage.Error

// Replacing comes before a verb replaces the learner's files in an
// exercise: what it writes and removes, and where the learner's .go files
// go. The learner is asked next, unless the verb was forced.
type Replacing struct {
	Kata, ID string
	Reset    bool     // reset; else a bug hunt planted
	Planted  bool     // reset in a kit whose kata starts as a bug hunt planted when it was packed
	GivesUp  bool     // a bug hunt on a kata not passed: going ahead counts as giving up on it
	Write    []string // the files written
	Remove   []string // the learner's files removed
	Keep     []string // the learner's own test files, left in place
	Forget   []string // reset: what it forgets of the kata's progress (state.Kata.Forgets)
	Listed   []string // reset: what list keeps showing (state.Kata.Keeps)
	Backup   string   // where the learner's .go files go, relative to the checkout; "" when none is kept
	Named    string   // why the backup has its name (": the final code of the interview in F"), or ""
	// HuntCode are the files of the exercise that hold a bug hunt's code,
	// which no backup keeps (state.Kata.HuntCode).
	HuntCode []string
	// Stale are backups of an earlier hunt's code, relative to the
	// checkout, that an older checker kept: a bug hunt removes them.
	Stale []string
}

func (Replacing) event() {}

// Question is what Confirm asks before files are replaced.
const Question = "Go ahead? [y/N] "

// ErrNoHistory means that a kata's stub cannot be read from git history.
var ErrNoHistory = pristine.ErrNoHistory

// ResetDone is how a reset ended.
type ResetDone struct {
	Nothing  bool     // the kata was its stub already, with no progress to forget
	Declined bool     // the learner said no: nothing changed
	Backup   string   // where the learner's files went, relative to the checkout; "" when none was kept
	Kept     []string // the learner's own test files, left in place
	HuntCode bool     // the exercise held a bug hunt's code, which no backup keeps
}

// Reset puts kata k's stub back, read from git history, after copying the
// learner's .go files to a backup under .kata/backup; the learner's own
// test files stay in place. It forgets the kata's progress (its grades,
// hints, give-up, catch score, the hunt under way: state.Kata.Forgets),
// so that the next candidate starts afresh, and keeps the record list
// shows (state.Kata.Keeps).
func (c *Checkout) Reset(ctx context.Context, k catalog.Kata, force bool) (ResetDone, error) {
	stub, err := pristine.Read(ctx, c.Vars, k)
	if errors.Is(err, pristine.ErrNoHistory) {
		return ResetDone{}, &UsageError{Msg: fmt.Sprintf("cannot find the stub of %s in git history (%v)", k.Slug, err), Try: "reset works in a git clone of the katas; elsewhere, copy the stub from a fresh clone"}
	}
	if err != nil {
		return ResetDone{}, err
	}
	ch, err := exercise.Compare(k.Exercise, stub.Files)
	if err != nil {
		return ResetDone{}, err
	}
	p := c.progress().Kata(k.Slug)
	forget := p.Forgets()
	if ch.None() && len(forget) == 0 {
		return ResetDone{Nothing: true}, nil
	}
	packed, err := hunt.ReadPacked(k.Solution)
	if err != nil {
		return ResetDone{}, err
	}
	e := Replacing{Reset: true, Planted: packed != nil, Forget: forget}
	if len(forget) > 0 {
		e.Listed = p.Keeps()
	}
	backup, ok, err := c.replace(k, ch, force, e)
	if err != nil || !ok {
		return ResetDone{Declined: !ok}, err
	}
	c.saved(state.Progress{Root: c.Root}.Reset(k.Slug, c.now()))
	return ResetDone{Backup: backup, Kept: ch.Keep, HuntCode: p.HuntCode && !ch.None()}, nil
}

// Untouched reports whether kata k's exercise is still its stub; false
// when that cannot be told (no git history).
func (c *Checkout) Untouched(ctx context.Context, k catalog.Kata) bool {
	stub, err := pristine.Read(ctx, c.Vars, k)
	if err != nil {
		return false
	}
	ch, err := exercise.Compare(k.Exercise, stub.Files)
	return err == nil && ch.None()
}

// Stub is kata k's untouched stub (file name → content), nil when it
// cannot be read (no git history).
func (c *Checkout) Stub(ctx context.Context, k catalog.Kata) map[string][]byte {
	stub, err := pristine.Read(ctx, c.Vars, k)
	if err != nil {
		return nil
	}
	return stub.Files
}

// replace emits the change ch to kata k's exercise as Replacing (what is
// filled in from ch), asks unless force, backs up the learner's .go files
// and writes. Files that hold a bug hunt's code are not the learner's, and
// a copy would show what was planted: while the exercise holds a hunt's
// code (state.Kata.HuntCode), its files named as the reference's are not
// backed up. It returns the backup's directory relative to the checkout
// ("" when no file is kept), and ok false when the learner said no.
func (c *Checkout) replace(k catalog.Kata, ch exercise.Change, force bool, e Replacing) (string, bool, error) {
	backup, named := c.backupName(k)
	e.Kata, e.ID, e.Write, e.Remove, e.Keep = k.Slug, k.ID(), ch.Restore, ch.Remove, ch.Keep
	mine := ch.Mine
	if !ch.None() && c.progress().Kata(k.Slug).HuntCode {
		mine, e.HuntCode = withoutHuntCode(k, ch.Mine)
	}
	if !ch.None() && len(mine) > 0 {
		e.Backup, e.Named = rel(c.Root, backup), named
	}
	c.emit(e)
	if !force {
		if ok, err := c.confirm(Question); err != nil || !ok {
			return "", false, err
		}
	}
	if ch.None() {
		return "", true, nil
	}
	kept := ""
	if len(mine) > 0 {
		dir, err := exercise.BackUp(backup, mine)
		if err != nil {
			return "", false, fmt.Errorf("back up %s: %w", k.Slug, err)
		}
		kept = rel(c.Root, dir)
	}
	if err := ch.Write(); err != nil {
		return "", false, err
	}
	return kept, true, nil
}

// withoutHuntCode splits the learner's .go files of kata k's exercise
// (paths) into those a backup keeps and the names of those that hold a
// bug hunt's code: the files named as the reference's, which the hunt
// wrote. Tests and files of other names are the learner's own.
func withoutHuntCode(k catalog.Kata, paths []string) (mine, hunt []string) {
	ref, err := mutant.Reference(k.Solution)
	if err != nil {
		return paths, nil
	}
	for _, p := range paths {
		name := filepath.Base(p)
		if slices.ContainsFunc(ref, func(s mutant.Source) bool { return s.Name == name }) {
			hunt = append(hunt, name)
		} else {
			mine = append(mine, p)
		}
	}
	return mine, hunt
}

func (c *Checkout) confirm(question string) (bool, error) {
	if c.Confirm == nil {
		return false, nil
	}
	return c.Confirm(question)
}

// backupName is where the learner's files go: named after the interview
// whose record ends with this very code, when there is one (named says
// so), else after the kata and the time.
func (c *Checkout) backupName(k catalog.Kata) (dir, named string) {
	root := c.Root
	dir = filepath.Join(root, state.Dir, "backup", k.Slug+"-"+c.now().Format("20060102-150405"))
	fp, err := fingerprint.Code(k.Exercise)
	if err != nil {
		return dir, ""
	}
	recs, _ := filepath.Glob(filepath.Join(root, state.Dir, "interviews", "*.json"))
	sort.Sort(sort.Reverse(sort.StringSlice(recs))) // the newest first: names start with the time
	for _, p := range recs {
		rec, err := record.Load(p)
		if err != nil || rec.Kata != k.Slug {
			continue
		}
		if g := rec.Final; g != nil && g.Fingerprint.Code == fp {
			name := strings.TrimSuffix(filepath.Base(p), ".json")
			return filepath.Join(root, state.Dir, "backup", name), fmt.Sprintf(": the final code of the interview in %s", rel(root, p))
		}
	}
	return dir, ""
}

func (c *Checkout) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Checkout) emit(ev Event) { emitter(c.Emit).emit(ev) }

// progress reads the state file; an unreadable one is a warning.
func (c *Checkout) progress() *state.State { return progress(c.Root, c.Emit) }

// saved warns when an operation of state.Progress could not save.
func (c *Checkout) saved(err error) {
	if err != nil {
		c.emit(Warning{"progress not saved: " + err.Error()})
	}
}

// StateDir is the checkout's folder of progress, backups and interview
// records.
const StateDir = state.Dir
