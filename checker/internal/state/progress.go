package state

import (
	"fmt"
	"time"
)

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

// StartHunt starts a bug hunt of mutant, at level, on the kata
// (State.StartHunt).
func (p Progress) StartHunt(slug, mutant, level string, now time.Time, interview bool) error {
	return p.apply(func(s *State) { s.StartHunt(slug, mutant, level, now, interview) })
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

// ShowDecisions notes that an interview showed the kata's decisions
// (State.ShowDecisions).
func (p Progress) ShowDecisions(slug string, now time.Time) error {
	return p.apply(func(s *State) { s.ShowDecisions(slug, now) })
}

// ShowSolution notes that the solution verb showed the reference
// (State.ShowSolution).
func (p Progress) ShowSolution(slug string, now time.Time, giveUp bool) error {
	return p.apply(func(s *State) { s.ShowSolution(slug, now, giveUp) })
}

// AddAsked keeps the questions the candidate asked about the kata, ticked
// at now.
func (p Progress) AddAsked(slug string, asked []Asked) error {
	return p.apply(func(s *State) { k := s.Kata(slug); k.Asked = append(k.Asked, asked...) })
}

// AddNote keeps an interviewer's note on the kata, made at now.
func (p Progress) AddNote(slug, text string, now time.Time) error {
	return p.apply(func(s *State) { k := s.Kata(slug); k.Notes = append(k.Notes, Note{At: now, Text: text}) })
}

// Reset starts the kata over (State.Reset).
func (p Progress) Reset(slug string, now time.Time) error {
	return p.apply(func(s *State) { s.Reset(slug, now) })
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

// StartHunt ends the kata's hunt under way, if any, starts one of mutant
// at level, and forgets the last grade (the planted code replaced the
// learner's); a hunt that gives up on the kata (HuntGivesUp) is noted as
// a give-up.
func (s *State) StartHunt(slug, mutant, level string, now time.Time, interview bool) {
	k := s.Kata(slug)
	if k.HuntGivesUp(interview) {
		k.GaveUp, k.GaveUpAt, k.GaveUpVia = true, &now, GaveUpBughunt
	}
	k.Last = nil
	k.startHunt(mutant, level, now)
}

// ReadDecisions notes the first time the decisions verb showed the kata's
// decisions; later reads change nothing.
func (s *State) ReadDecisions(slug string, now time.Time) {
	if k := s.Kata(slug); k.DecisionsRead == nil {
		k.DecisionsRead = &now
	}
}

// The verbs that give up on a kata (Kata.GaveUpVia).
const (
	GaveUpSolution = "solution" // solution --give-up
	GaveUpBughunt  = "bughunt"  // a bug hunt planted before any pass: its code is nearly the reference
)

// ShowDecisions notes the first time an interview showed the kata's
// decisions; later ones change nothing.
func (s *State) ShowDecisions(slug string, now time.Time) {
	if k := s.Kata(slug); k.DecisionsShown == nil {
		k.DecisionsShown = &now
	}
}

// ReadEarly reports whether the decisions verb showed the kata's decisions
// before any interview did: what an interview's scorecard flags.
func (k *Kata) ReadEarly() bool {
	return k.DecisionsRead != nil && (k.DecisionsShown == nil || k.DecisionsRead.Before(*k.DecisionsShown))
}

// ShowSolution notes the first time the reference was shown; with
// giveUp, before any pass, the learner gave up on the kata.
func (s *State) ShowSolution(slug string, now time.Time, giveUp bool) {
	k := s.Kata(slug)
	if giveUp && !k.GaveUp && !k.PassedOnce {
		k.GaveUp, k.GaveUpAt, k.GaveUpVia = true, &now, GaveUpSolution
	}
	if k.SolutionShown == nil {
		k.SolutionShown = &now
	}
}

// Reset starts the kata over: it forgets what Forgets lists, so that the
// reference needs a new pass or give-up and hints start at 1 again, and
// keeps what Keeps lists, the record list shows: how the kata passed (as
// PassedBeforeReset) and its bug hunts, the one under way ended at now.
func (s *State) Reset(slug string, now time.Time) {
	k, ok := s.Katas[slug]
	if !ok {
		return
	}
	kept := &Kata{PassedBeforeReset: k.PassedBeforeReset, Hunts: k.Hunts}
	if p := k.Pass(); p.Better(kept.PassedBeforeReset) {
		kept.PassedBeforeReset = p
	}
	kept.EndHunt(now, false)
	if kept.PassedBeforeReset == NotPassed && len(kept.Hunts) == 0 {
		delete(s.Katas, slug)
		return
	}
	s.Katas[slug] = kept
}

// Forgets says what a reset of the kata forgets, one phrase each (its
// grades, 2 hints shown, the give-up, …); none when there is nothing to
// forget.
func (k *Kata) Forgets() []string {
	var out []string
	if k.Last != nil || k.PassedOnce {
		out = append(out, "its grades")
	}
	switch n := max(k.HintsShown, len(k.HintLog)); n {
	case 0:
	case 1:
		out = append(out, "1 hint shown")
	default:
		out = append(out, fmt.Sprintf("%d hints shown", n))
	}
	if k.DecisionsRead != nil {
		out = append(out, "decisions read")
	}
	switch {
	case k.GaveUp || k.GaveUpAt != nil:
		out = append(out, "the give-up")
	case k.SolutionShown != nil:
		out = append(out, "solution read")
	}
	if c := k.Catch; c != nil {
		out = append(out, fmt.Sprintf("the catch score (%d of %d)", c.Caught, c.Mutants))
	}
	if k.Hunt() != nil {
		out = append(out, "the bug hunt under way")
	}
	switch n := len(k.Notes); n {
	case 0:
	case 1:
		out = append(out, "1 note")
	default:
		out = append(out, fmt.Sprintf("%d notes", n))
	}
	switch n := len(k.Asked); n {
	case 0:
	case 1:
		out = append(out, "1 question ticked")
	default:
		out = append(out, fmt.Sprintf("%d questions ticked", n))
	}
	return out
}

// Keeps says what a reset of the kata keeps for list, one phrase each
// (that it passed, 3 bug hunts); none when nothing.
func (k *Kata) Keeps() []string {
	var out []string
	p := k.Pass()
	if k.PassedBeforeReset.Better(p) {
		p = k.PassedBeforeReset
	}
	switch p {
	case PassedAlone:
		out = append(out, "that it passed")
	case PassedAfterSolution:
		out = append(out, "that it passed after the solution was shown")
	}
	if len(k.Hunts) > 0 {
		out = append(out, "its bug hunts")
	}
	return out
}
