package session

import (
	"slices"
	"time"

	"gokata/checker/internal/hunt"
	"gokata/checker/internal/record"
	"gokata/checker/internal/state"
)

// stateWatch follows the progress state file through an interview. The
// record takes from it what was done outside the interview's screen (a
// hint read, a give-up, the reference shown), so whatever else changes
// it can hide them: an edit by hand, an older copy put back, the file
// deleted, a reset. The checker's own writes, here or in another
// terminal, are told apart by their count and sum (state.Look); and what
// the file once held stays in the record even after it is gone.
type stateWatch struct {
	root, slug string
	looked     bool
	last       state.Snapshot
	lastFacts  []record.Event // the kata's facts at the last look
	facts      []record.Event // every fact seen at a look, in the order first seen
}

func newStateWatch(root, slug string) *stateWatch { return &stateWatch{root: root, slug: slug} }

// look reads the state file: how it changed since the last look, if not
// by the checker alone (record.StateRemoved or StateRewritten), "" if
// it did not. The first look sees how the interview found it.
func (w *stateWatch) look() (via string) {
	cur := state.Look(w.root)
	var facts []record.Event
	if cur.State != nil {
		facts = StateFacts(cur.State.Kata(w.slug))
	}
	if w.looked {
		via = changedBy(w.last, cur, lost(w.lastFacts, facts))
	}
	w.looked, w.last, w.lastFacts = true, cur, facts
	for _, f := range facts {
		if !slices.ContainsFunc(w.facts, sameFact(f)) {
			w.facts = append(w.facts, f)
		}
	}
	return via
}

// changedBy says how the state file changed from prev to cur if not by
// the checker alone: removed; or rewritten, when it is not as the
// checker wrote it, took fewer writes to make than before (an older copy,
// or written afresh after it was deleted), or lost a fact (lost: a hint,
// a give-up, as a reset forgets them). "" when it is unchanged or only
// the checker changed it.
func changedBy(prev, cur state.Snapshot, lost bool) string {
	switch {
	case !cur.Found && prev.Found:
		return record.StateRemoved
	case !cur.Found || cur.Digest == prev.Digest:
		return ""
	case cur.State == nil || !cur.Checker:
		return record.StateRewritten
	case prev.State != nil && cur.State.Writes < prev.State.Writes:
		return record.StateRewritten
	case lost:
		return record.StateRewritten
	}
	return ""
}

// lost reports whether a fact of before is not among now.
func lost(before, now []record.Event) bool {
	for _, f := range before {
		if !slices.ContainsFunc(now, sameFact(f)) {
			return true
		}
	}
	return false
}

// sameFact matches the facts that are f.
func sameFact(f record.Event) func(record.Event) bool {
	return func(g record.Event) bool {
		return g.At.Equal(f.At) && g.Kind == f.Kind && g.Hint == f.Hint && g.Via == f.Via && g.Note == f.Note && g.Question == f.Question
	}
}

// StateFacts are the facts of the state file's progress p that an
// interview's record takes: every hint shown, the decisions read, a
// give-up, each bug hunt given up, the reference shown, the
// interviewer's notes.
func StateFacts(p *state.Kata) []record.Event {
	var out []record.Event
	for _, h := range p.HintLog {
		out = append(out, record.Event{At: h.At, Kind: record.KindHint, Hint: h.N, Via: h.Via})
	}
	if p.DecisionsRead != nil {
		out = append(out, record.Event{At: *p.DecisionsRead, Kind: record.KindDecisions})
	}
	if p.GaveUp && p.GaveUpAt != nil {
		out = append(out, record.Event{At: *p.GaveUpAt, Kind: record.KindGaveUp, Via: p.GaveUpVia})
	}
	for _, h := range p.Hunts {
		if h.GaveUp && h.Ended != nil {
			e := record.Event{At: *h.Ended, Kind: record.KindHuntGaveUp}
			if h.Mutant == hunt.PackedName {
				e.Via = "packed"
			}
			out = append(out, e)
		}
	}
	if p.SolutionShown != nil {
		out = append(out, record.Event{At: *p.SolutionShown, Kind: record.KindSolution})
	}
	for _, n := range p.Notes {
		out = append(out, record.Event{At: n.At, Kind: record.KindNote, Note: n.Text})
	}
	for _, a := range p.Asked {
		out = append(out, record.Event{At: a.At, Kind: record.KindAsked, Question: a.Question, Note: a.Text})
	}
	return out
}

// mergedEvents are the session's events and the state file's facts it
// does not hold already, in time order: not this session's own hints,
// nor a bug hunt given up or a note made before it began (perhaps about
// another candidate),
// nor the reference shown by a give-up, which is one event.
func mergedEvents(iv *Interview, facts []record.Event) []record.Event {
	events := slices.Clone(iv.Events)
	for _, f := range facts {
		if kept(iv, facts, f) {
			events = append(events, f)
		}
	}
	slices.SortStableFunc(events, func(a, b record.Event) int { return a.At.Compare(b.At) })
	return events
}

// kept reports whether the record takes fact f, one of facts.
func kept(iv *Interview, facts []record.Event, f record.Event) bool {
	switch f.Kind {
	case record.KindHint:
		return f.Via != "interview" || f.At.Before(iv.Start)
	case record.KindHuntGaveUp, record.KindNote, record.KindAsked:
		return !f.At.Before(iv.Start)
	case record.KindSolution:
		return !slices.ContainsFunc(facts, func(g record.Event) bool { return g.Kind == record.KindGaveUp && g.At.Equal(f.At) })
	}
	return true
}

// stateChanged logs, at now, how the state file changed since the last
// look if not by the checker alone.
// With a witness, it sends the facts the record takes that this look
// found first.
func (r *interviewer) stateChanged(now time.Time) {
	if via := r.state.look(); via != "" {
		r.iv.StateChanged(now, via)
	}
	if r.Witness == nil {
		return
	}
	for _, f := range r.state.facts[r.factsSent:] {
		if kept(r.iv, r.state.facts, f) {
			r.Witness.Event(f)
		}
	}
	r.factsSent = len(r.state.facts)
}
