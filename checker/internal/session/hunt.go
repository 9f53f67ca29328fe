package session

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/exercise"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/state"
)

// Hunt is what a grade means for the bug hunt under way on its kata
// (checker bughunt): once Fixed, the hunt is solved and the planted
// mistake can be named.
type Hunt struct {
	Mutant  string
	Mistake string   // the mutant's Mistake line: shown once Fixed
	Why     string   // the WHY.md paragraph about it; "" when none is named
	Fixed   bool     // this grade shows the mistake fixed: the hunt is solved
	Bonus   []string // the bonus items the mistake breaks, which a fix must pass too
}

// hunt looks at a grade of kata k in the light of its hunt under way: nil
// when there is none; a fixed one is marked solved in the state file.
func (g *Grader) hunt(k catalog.Kata, r *grade.Result) (*Hunt, error) {
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
	out := &Hunt{Mutant: b.Name, Fixed: hunt.Fixed(b, r)}
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
	out.Mistake = b.Mistake
	if out.Why, err = hunt.Why(k.Solution, b); err != nil {
		return nil, err
	}
	now := g.now()
	return out, state.Progress{Root: g.Root}.SolveHunt(k.Slug, now)
}

// HuntBug reads the mutant named name of kata k as a bug hunt sees it.
func HuntBug(k catalog.Kata, name string) (hunt.Bug, error) {
	m, err := mutant.Load(filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext))
	if err != nil {
		return hunt.Bug{}, err
	}
	return hunt.Read(m)
}

// Planted is the bug hunt an interview starts from (interview --bughunt):
// planted before the clock starts, so the record diffs the candidate's
// fix from the planted code, and the scorecard says when it was fixed.
type Planted struct {
	Mutant, Mistake, Symptom string
	Files                    map[string][]byte // the planted code, name → content
	API                      []string          // what the planted code declares, for its bug report
}

// Plant replaces kata k's exercise with a bug hunt's code (the mutant
// named pick, or a random one): it emits Replacing, asks unless force,
// backs up the learner's files, writes, and starts the hunt in the state
// file. On a kata the learner has not passed, the planted code is nearly
// its solution, so that counts as giving up on it, except in an interview
// (inInterview), where the interviewer chose it. It returns nil when the
// learner said no.
func (c *Checkout) Plant(k catalog.Kata, pick string, force, inInterview bool) (*Planted, error) {
	bugs, err := hunt.Bugs(k.Solution)
	if err != nil {
		return nil, err
	}
	p := c.progress().Kata(k.Slug)
	var b hunt.Bug
	if pick != "" {
		if b, err = hunt.Find(bugs, pick); err != nil {
			return nil, &UsageError{Msg: err.Error(), Try: ""}
		}
	} else if b, err = hunt.Pick(bugs, "", p.LastHunt(), rand.IntN); errors.Is(err, hunt.ErrNoHunt) {
		return nil, fmt.Errorf("kata %s: %w", k.Slug, err)
	} else if err != nil {
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
	if _, ok, err := c.replace(k, ch, force, Replacing{GivesUp: p.HuntGivesUp(inInterview)}); err != nil || !ok {
		return nil, err
	}
	c.saved(state.Progress{Root: c.Root}.StartHunt(k.Slug, b.Name, c.now(), inInterview))
	return &Planted{Mutant: b.Name, Mistake: b.Mistake, Symptom: b.Symptom, Files: files, API: hunt.API(files)}, nil
}

// GaveUp is what giving up a bug hunt shows: the planted mistake, the fix
// as a diff from the planted code to the reference, and WHY.md's
// paragraph about it ("" when none).
type GaveUp struct {
	Mutant, Mistake string
	Diff, Why       string
}

// GiveUpHunt ends the hunt under way on kata k and says what was planted;
// nil when no hunt is under way.
func (c *Checkout) GiveUpHunt(k catalog.Kata) (*GaveUp, error) {
	h := c.progress().Kata(k.Slug).Hunt()
	if h == nil {
		return nil, nil
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
