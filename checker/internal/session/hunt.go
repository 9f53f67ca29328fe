package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/exercise"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/state"
)

// HuntRepeat is how many more times a fix that passes a check runs
// before its bug hunt counts as solved, each run at GOMAXPROCS 1, 2 and 4
// as check --repeat does: a fix must hold on every schedule, and
// special-casing the report's scenario does not.
const HuntRepeat = 20

// Hunt is what a grade means for the bug hunt under way on its kata
// (checker bughunt): once Fixed, the hunt is solved and the planted
// mistake can be named.
type Hunt struct {
	Mutant string
	// Packed: the hunt was planted when its kit was packed, and the kit
	// knows neither the mutant nor the mistake (hunt.Packed).
	Packed  bool
	Mistake string   // the mutant's Mistake line: shown once Fixed
	Why     string   // the WHY.md paragraph about it; "" when none is named
	Fixed   bool     // this grade, and its runs again, show the mistake fixed: the hunt is solved
	Bonus   []string // the bonus items the mistake breaks, which a fix must pass too
	// Again is the check of a fix that passed, run HuntRepeat more times
	// before the hunt counts as solved; nil when none ran (the mistake
	// still shows, or the grade itself ran that many times).
	Again *Again
}

// Again is how a fix did when its tests ran again.
type Again struct {
	Runs int // the runs of every test
	// Item is the first item that failed in some run, with Failed of the
	// Runs failing and the Message of its first failure; "" when every
	// run passed.
	Item    string
	Failed  int
	Message string
}

// CheckingAgain comes before a fix that passed a check runs again
// (Hunt.Again), Repeat times at each of CPU's GOMAXPROCS values.
type CheckingAgain struct {
	Kata   string
	Repeat int
	CPU    string
}

func (CheckingAgain) event() {}

// hunt looks at a grade of kata k in the light of its hunt under way: nil
// when there is none. A grade that shows the mistake fixed runs again,
// HuntRepeat times (unless it ran that many times already); a fix that
// passes them all marks the hunt solved in the state file.
func (g *Grader) hunt(ctx context.Context, k catalog.Kata, r *grade.Result) (*Hunt, error) {
	s, err := state.Progress{Root: g.Root}.Read()
	if err != nil {
		return nil, err
	}
	h := s.Kata(k.Slug).Hunt()
	if h == nil {
		return nil, nil
	}
	b, err := HuntBug(k, h.Mutant)
	if err != nil {
		return nil, err
	}
	out := &Hunt{Mutant: b.Name, Packed: b.Name == hunt.PackedName, Fixed: hunt.Fixed(b, r)}
	for _, it := range k.Bonus {
		for _, f := range b.Fails {
			if f == it.ID {
				out.Bonus = append(out.Bonus, f)
			}
		}
	}
	if !out.Fixed {
		return out, nil
	}
	if g.Options.Repeat < HuntRepeat {
		opt := g.Options
		opt.Repeat, opt.CPU = HuntRepeat, "1,2,4"
		g.emit(CheckingAgain{Kata: k.Slug, Repeat: opt.Repeat, CPU: opt.CPU})
		again, err := g.grade(ctx, k, opt)
		if err != nil {
			return nil, err
		}
		out.Again = &Again{Runs: again.Runs}
		if it := hunt.Unfixed(b, again); it != nil {
			out.Fixed = false
			out.Again.Item, out.Again.Failed, out.Again.Message = it.ID, again.Runs-it.Passes, it.Message
			return out, nil
		}
		if !hunt.Fixed(b, again) { // not an item: the same code cannot change its mind
			out.Fixed, out.Again = false, nil
			return out, nil
		}
	}
	out.Mistake = b.Mistake
	if out.Why, err = hunt.Why(k.Solution, b); err != nil {
		return nil, err
	}
	now := g.now()
	return out, state.Progress{Root: g.Root}.SolveHunt(k.Slug, now)
}

// HuntBug reads the mutant named name of kata k as a bug hunt sees it; a
// hunt planted when its kit was packed (hunt.PackedName) as the kit knows
// it.
func HuntBug(k catalog.Kata, name string) (hunt.Bug, error) {
	if name == hunt.PackedName {
		p, err := hunt.ReadPacked(k.Solution)
		switch {
		case err != nil:
			return hunt.Bug{}, err
		case p == nil:
			return hunt.Bug{}, fmt.Errorf("%s has no bug hunt planted when its kit was packed", k.Slug)
		}
		return p.Bug(), nil
	}
	m, err := mutant.Load(filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext))
	if err != nil {
		return hunt.Bug{}, err
	}
	return hunt.Read(m)
}

// Planted is a bug hunt just planted: what its bug report shows, and, for
// an interview (interview --bughunt), what its record diffs the
// candidate's fix from.
type Planted struct {
	Mutant, Mistake, Symptom string
	Level                    hunt.Level
	// Next: the level is the learner's next on the kata (hunt.Progressive),
	// not one asked for.
	Next  bool
	Files map[string][]byte // the planted code, name → content
	API   []string          // what the planted code declares, for its bug report
}

// HuntChoice is which mistake a bug hunt plants.
type HuntChoice struct {
	Name string // this mutant; "" for one at random
	// Level: one at this level; "" for the learner's next level on the
	// kata (hunt.Progressive), or any level in an interview.
	Level hunt.Level
}

// Plant replaces kata k's exercise with a bug hunt's code (the mistake
// choice names, or one at random): it emits Replacing, asks unless force,
// backs up the learner's files (never a hunt's code: see replace), removes
// what backups of an older checker kept of earlier hunts' code, writes,
// and starts the hunt in the state file. On a kata the learner has not
// passed, the planted code is nearly its solution, so that counts as
// giving up on it, except in an interview (inInterview), where the
// interviewer chose it. It returns nil when the learner said no.
func (c *Checkout) Plant(k catalog.Kata, choice HuntChoice, force, inInterview bool) (*Planted, error) {
	bugs, err := hunt.Bugs(k.Solution)
	if err != nil {
		return nil, err
	}
	p := c.progress().Kata(k.Slug)
	b, next, err := pickBug(bugs, p, choice, inInterview)
	if err != nil {
		return nil, err
	}
	files, err := hunt.Plant(k.Solution, b)
	if err != nil {
		return nil, err
	}
	ch, err := exercise.Compare(k.Exercise, files)
	if err != nil {
		return nil, err
	}
	e := Replacing{GivesUp: p.HuntGivesUp(inInterview), Stale: c.huntBackups(k, p, bugs)}
	if _, ok, err := c.replace(k, ch, force, e); err != nil || !ok {
		return nil, err
	}
	for _, f := range e.Stale {
		if err := removeBackup(filepath.Join(c.Root, f)); err != nil {
			c.emit(Warning{"an earlier hunt's code in " + f + " could not be removed: " + err.Error()})
		}
	}
	c.saved(state.Progress{Root: c.Root}.StartHunt(k.Slug, b.Name, string(b.Level), c.now(), inInterview))
	return &Planted{Mutant: b.Name, Mistake: b.Mistake, Symptom: b.Symptom, Level: b.Level, Next: next,
		Files: files, API: hunt.API(files)}, nil
}

// pickBug is the bug choice names among bugs, kata progress p's: named, at
// the level chosen, or at random at the learner's next level (next is
// then true; any level in an interview).
func pickBug(bugs []hunt.Bug, p *state.Kata, choice HuntChoice, inInterview bool) (b hunt.Bug, next bool, err error) {
	switch {
	case choice.Name != "" && choice.Level != "":
		return b, false, &UsageError{Msg: "a hunt is chosen by its name or by its level, not both", Try: ""}
	case choice.Name != "":
		if b, err = hunt.Find(bugs, choice.Name); err != nil {
			return b, false, &UsageError{Msg: err.Error(), Try: ""}
		}
		return b, false, nil
	}
	level := choice.Level
	if level == "" && !inInterview {
		level = hunt.Progressive(bugs, SolvedLevels(p, bugs))
		next = level != ""
	}
	b, err = hunt.Pick(bugs, level, p.LastHunt(), rand.IntN)
	switch {
	case errors.Is(err, hunt.ErrNoHunt):
		return b, false, err
	case err != nil:
		return b, false, &UsageError{Msg: err.Error(), Try: ""}
	}
	return b, next, nil
}

// SolvedLevels lists the levels of kata progress p's solved hunts: as
// recorded, or, for a hunt recorded before levels, its mutant's level
// among bugs now.
func SolvedLevels(p *state.Kata, bugs []hunt.Bug) []hunt.Level {
	var out []hunt.Level
	for _, h := range p.Hunts {
		if h.Solved != nil {
			out = append(out, huntLevel(h, bugs))
		}
	}
	return out
}

// huntLevel is hunt h's level: as recorded, else its mutant's among bugs
// ("" when it is gone).
func huntLevel(h state.Hunt, bugs []hunt.Bug) hunt.Level {
	if h.Level != "" {
		return hunt.Level(h.Level)
	}
	for _, b := range bugs {
		if b.Name == h.Mutant {
			return b.Level
		}
	}
	return ""
}

// GaveUp is what giving up a bug hunt shows: the planted mistake, the fix
// as a diff from the planted code to the reference, and WHY.md's
// paragraph about it ("" when none). A hunt planted when its kit was
// packed shows nothing (Packed): the kit does not know.
type GaveUp struct {
	Mutant, Mistake string
	Diff, Why       string
	Packed          bool
}

// GiveUpHunt ends the hunt under way on kata k and says what was planted;
// nil when no hunt is under way.
func (c *Checkout) GiveUpHunt(k catalog.Kata) (*GaveUp, error) {
	if _, err := startPacked(c.Root, k, c.now(), false); err != nil {
		return nil, err
	}
	h := c.progress().Kata(k.Slug).Hunt()
	if h == nil {
		return nil, nil
	}
	if h.Mutant == hunt.PackedName {
		c.saved(state.Progress{Root: c.Root}.GiveUpHunt(k.Slug, c.now()))
		return &GaveUp{Packed: true}, nil
	}
	b, err := HuntBug(k, h.Mutant)
	if err != nil {
		return nil, err
	}
	planted, err := hunt.Plant(k.Solution, b)
	if err != nil {
		return nil, err
	}
	ref, err := hunt.Reference(k.Solution)
	if err != nil {
		return nil, err
	}
	g := &GaveUp{Mutant: b.Name, Mistake: b.Mistake, Diff: mutant.Diff(planted, ref)}
	if why, err := hunt.Why(k.Solution, b); err == nil {
		g.Why = why
	}
	c.saved(state.Progress{Root: c.Root}.GiveUpHunt(k.Slug, c.now()))
	return g, nil
}

// PackedHunt is kata k's bug hunt planted when its kit was packed
// (hunt.Packed), started in the state file if it is not under way (see
// startPacked; always, with again, even after it was solved or given up):
// its bug report, with the planted code as committed in the kit, or else
// as it is now. Its mutant and mistake are not known. It is nil when k
// has no such hunt.
func (c *Checkout) PackedHunt(ctx context.Context, k catalog.Kata, again bool) (*Planted, error) {
	p, err := startPacked(c.Root, k, c.now(), again)
	if p == nil || err != nil {
		return nil, err
	}
	files := c.Stub(ctx, k)
	if files == nil {
		files = map[string][]byte{}
		paths, err := gofiles.Regular(k.Exercise, false)
		if err != nil {
			return nil, err
		}
		for _, f := range paths {
			if files[filepath.Base(f)], err = gofiles.ReadRegular(f); err != nil {
				return nil, err
			}
		}
	}
	return &Planted{Symptom: p.Symptom, Level: p.Level, Files: files, API: hunt.API(files)}, nil
}

// startPacked starts kata k's packed hunt (hunt.Packed, one planted when
// its kit was packed) in the state file at now, unless a hunt is under
// way or, without again, the last packed one was solved or given up: the
// kata's code starts as that hunt, and a reset brings the planted code
// back. It returns the packed hunt, nil when k has none.
func startPacked(root string, k catalog.Kata, now time.Time, again bool) (*hunt.Packed, error) {
	p, err := hunt.ReadPacked(k.Solution)
	if p == nil || err != nil {
		return nil, err
	}
	s, err := state.Progress{Root: root}.Read()
	if err != nil {
		return p, err
	}
	kp := s.Kata(k.Slug)
	if kp.Hunt() != nil {
		return p, nil
	}
	if n := len(kp.Hunts); n > 0 && !again {
		if last := kp.Hunts[n-1]; last.Mutant == hunt.PackedName && (last.Solved != nil || last.GaveUp) {
			return p, nil
		}
	}
	return p, state.Progress{Root: root}.StartHunt(k.Slug, hunt.PackedName, string(p.Level), now, true)
}

// huntBackups lists, relative to the checkout, the files of kata k's
// backups that hold an earlier hunt's code, planted or fixed, which a
// checker older than this rule backed up: each resembles (hunt.Resembles)
// the reference as a hunt plants it, or the code of one of the hunts
// progress p lists. A backup of the learner's own code differs in far more
// lines. None when the kata had no hunt.
func (c *Checkout) huntBackups(k catalog.Kata, p *state.Kata, bugs []hunt.Bug) []string {
	if len(p.Hunts) == 0 {
		return nil
	}
	ref, err := hunt.Reference(k.Solution)
	if err != nil {
		return nil
	}
	versions := []map[string][]byte{ref}
	for _, b := range bugs {
		if slices.ContainsFunc(p.Hunts, func(h state.Hunt) bool { return h.Mutant == b.Name }) {
			if files, err := hunt.Plant(k.Solution, b); err == nil {
				versions = append(versions, files)
			}
		}
	}
	found, _ := filepath.Glob(filepath.Join(c.Root, state.Dir, "backup", k.Slug+"-*", "*.go"))
	var out []string
	for _, f := range found {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if fi, err := os.Lstat(f); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if data, err := os.ReadFile(f); err == nil && hunt.Resembles(filepath.Base(f), data, versions...) {
			out = append(out, rel(c.Root, f))
		}
	}
	return out
}

// removeBackup removes the backed-up file f, and its backup directory
// once nothing else is left in it.
func removeBackup(f string) error {
	if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	os.Remove(filepath.Dir(f)) // fails, as it should, while other files are there
	return nil
}

// LevelStats is how the learner's bug hunts at one level went, over every
// kata: how many were solved and how long they took, and how many were
// given up. Hunts ended by another hunt or a reset count in neither.
type LevelStats struct {
	Level   hunt.Level // "" for hunts whose level is lost: recorded before levels, their mutant since gone
	Solved  int
	GivenUp int
	// Median is the median time from a hunt's start to its solve, over the
	// solved ones.
	Median time.Duration
}

// HuntStats is the learner's bug hunts by level, easiest first, the levels
// without a solved or given-up hunt left out.
func (c *Checkout) HuntStats(cat *catalog.Catalog) []LevelStats {
	s := c.progress()
	fix := map[hunt.Level][]time.Duration{}
	gaveUp := map[hunt.Level]int{}
	for _, k := range cat.Katas {
		p := s.Kata(k.Slug)
		var bugs []hunt.Bug
		for _, h := range p.Hunts {
			if h.Level == "" && bugs == nil {
				bugs, _ = hunt.Bugs(k.Solution)
			}
			l := huntLevel(h, bugs)
			switch {
			case h.Solved != nil:
				fix[l] = append(fix[l], h.Solved.Sub(h.Started))
			case h.GaveUp:
				gaveUp[l]++
			}
		}
	}
	var out []LevelStats
	for _, l := range append(slices.Clone(hunt.Levels), "") {
		st := LevelStats{Level: l, Solved: len(fix[l]), GivenUp: gaveUp[l], Median: median(fix[l])}
		if st.Solved+st.GivenUp > 0 {
			out = append(out, st)
		}
	}
	return out
}

// median is the median of ds, 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}
