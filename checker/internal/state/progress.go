package state

import "time"

// Progress is the one writer of a checkout's progress file: every change
// is a named operation that takes the file's lock, loads its latest
// content, applies the operation's rule and saves it. The rules live here,
// once, each as a method of State too, which works without files.
type Progress struct{ Root string }

// Read returns the progress; a file that cannot be read returns an error
// and no progress, which the caller may show as a warning and go on with.
func (p Progress) Read() (*State, error) {
	s, err := Load(p.Root)
	if err != nil {
		return &State{Schema: 1, Katas: map[string]*Kata{}}, err
	}
	return s, nil
}

func (p Progress) apply(change func(*State)) error {
	return update(p.Root, func(s *State) error { change(s); return nil })
}

// RecordGrade keeps g as the kata's last grade (State.Record).
func (p Progress) RecordGrade(slug string, g Grade) error {
	return p.apply(func(s *State) { s.Record(slug, g) })
}

// StartHunt starts a bug hunt of mutant on the kata (State.StartHunt).
func (p Progress) StartHunt(slug, mutant string, now time.Time, interview bool) error {
	return p.apply(func(s *State) { s.StartHunt(slug, mutant, now, interview) })
}

// SolveHunt marks the kata's hunt under way solved.
func (p Progress) SolveHunt(slug string, now time.Time) error {
	return p.apply(func(s *State) { s.Kata(slug).SolveHunt(now) })
}

// GiveUpHunt ends the kata's hunt under way: the learner asked for the answer.
func (p Progress) GiveUpHunt(slug string, now time.Time) error {
	return p.apply(func(s *State) { s.Kata(slug).EndHunt(now, true) })
}

// RevealHint notes that hint n was shown at now by verb via ("hint",
// "interview").
func (p Progress) RevealHint(slug string, n int, now time.Time, via string) error {
	return p.apply(func(s *State) { s.Kata(slug).ShowHint(n, now, via) })
}

// ReadDecisions notes that the decisions verb showed the kata's decisions
// (State.ReadDecisions).
func (p Progress) ReadDecisions(slug string, now time.Time) error {
	return p.apply(func(s *State) { s.ReadDecisions(slug, now) })
}

// ShowSolution notes that the solution verb showed the reference
// (State.ShowSolution).
func (p Progress) ShowSolution(slug string, now time.Time, giveUp bool) error {
	return p.apply(func(s *State) { s.ShowSolution(slug, now, giveUp) })
}

// Reset forgets everything about the kata.
func (p Progress) Reset(slug string) error {
	return p.apply(func(s *State) { s.Reset(slug) })
}

// RecordCatch keeps the score of the last catch run of the learner's tests.
func (p Progress) RecordCatch(slug string, c Catch) error {
	return p.apply(func(s *State) { s.Kata(slug).Catch = &c })
}

// The rules, without files.

// HuntGivesUp reports whether starting a bug hunt on the kata counts as
// giving up on it: outside an interview, the planted code is the reference
// but for one mistake, so a kata neither passed nor given up is given up.
func (k *Kata) HuntGivesUp(interview bool) bool {
	return !interview && !k.PassedOnce && !k.GaveUp
}

// StartHunt ends the kata's hunt under way, if any, starts one of mutant,
// and forgets the last grade (the planted code replaced the learner's);
// a hunt that gives up on the kata (HuntGivesUp) is noted as a give-up.
func (s *State) StartHunt(slug, mutant string, now time.Time, interview bool) {
	k := s.Kata(slug)
	if k.HuntGivesUp(interview) {
		k.GaveUp, k.GaveUpAt = true, &now
	}
	k.Last = nil
	k.startHunt(mutant, now)
}

// ReadDecisions notes the first time the decisions verb showed the kata's
// decisions; later reads change nothing.
func (s *State) ReadDecisions(slug string, now time.Time) {
	if k := s.Kata(slug); k.DecisionsRead == nil {
		k.DecisionsRead = &now
	}
}

// ShowSolution notes the first time the reference was shown; with
// giveUp, before any pass, the learner gave up on the kata.
func (s *State) ShowSolution(slug string, now time.Time, giveUp bool) {
	k := s.Kata(slug)
	if giveUp && !k.GaveUp && !k.PassedOnce {
		k.GaveUp, k.GaveUpAt = true, &now
	}
	if k.SolutionShown == nil {
		k.SolutionShown = &now
	}
}

// Reset forgets everything about the kata: grades, hints, give-ups, hunts
// and catch scores.
func (s *State) Reset(slug string) { delete(s.Katas, slug) }
