package session

import (
	"path/filepath"

	"gokata/checker/internal/catalog"
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
}
