package session

import (
	"bytes"
	"maps"
	"slices"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/record"
)

// toRecord is the ended interview as its record: the session's events, with
// the facts the state file held at some look merged in (hints read with
// the hint verb, before or during the session; the decisions read; a
// give-up; the reference shown; a bug hunt given up during the session),
// in time order.
func (r *interviewer) toRecord(facts []record.Event) *record.Record {
	iv := r.iv
	rec := newRecord(iv, r.Kata)
	rec.Events = mergedEvents(iv, facts)
	for _, e := range rec.Events {
		switch e.Kind {
		case record.KindEnd:
			rec.End = e.At
		case record.KindFinal:
			rec.Final = e.Grade
		}
	}
	rec.StartCode = r.startCode(rec)
	if iv.Last != nil {
		rec.Race, rec.NoRace = iv.Last.Race, iv.Last.NoRace
	}
	if h := iv.Hunt; h != nil {
		rec.Hunt = &record.Hunt{Mutant: h.Mutant, Mistake: h.Mistake, Symptom: h.Symptom, Fixed: iv.HuntFixed}
	}
	if last := lastCode(rec); last != nil && r.Stub != nil {
		rec.Diff = mutant.Diff(r.Stub, last)
	}
	if r.Stub != nil {
		rec.StartFiles = map[string]string{}
		for n, c := range r.Stub {
			rec.StartFiles[n] = string(c)
		}
	}
	rec.Copy = record.CopyRepository
	if r.Kit {
		rec.Copy = record.CopyKit
	}
	return rec
}

// newRecord is the record of interview iv on kata k before anything that
// happened in it: who, when, how long, and what the kata asks.
func newRecord(iv *Interview, k catalog.Kata) *record.Record {
	rec := &record.Record{Schema: record.Schema, Kata: k.Slug, Title: k.Title, Candidate: iv.Candidate,
		Minutes: int(iv.Limit.Minutes()), Start: iv.Start, Ending: iv.How, KeptBack: iv.KeptBack,
		Hints: len(k.Hints), Ask: k.Ask, FollowUps: followUps(k), Rubric: record.NewRubric()}
	if rec.Ask == nil {
		rec.Ask = []string{}
	}
	for _, it := range k.Items() {
		rec.Items = append(rec.Items, record.Item{ID: it.ID, Text: it.Text, Bonus: slices.Contains(k.Bonus, it)})
	}
	return rec
}

// startCode is what the first grade graded: the stub untouched, or code
// already changed; unknown without a grade or a stub to compare with.
func (r *interviewer) startCode(rec *record.Record) string {
	gs := rec.Grades()
	if len(gs) == 0 || r.Stub == nil {
		return record.StartUnknown
	}
	if sameFiles(gs[0].Grade.Files(), r.Stub) {
		return record.StartStub
	}
	return record.StartChanged
}

// lastCode is the code of the final grade, else of the last grade.
func lastCode(rec *record.Record) map[string][]byte {
	if rec.Final != nil {
		return rec.Final.Files()
	}
	if gs := rec.Grades(); len(gs) > 0 {
		return gs[len(gs)-1].Grade.Files()
	}
	return nil
}

func sameFiles(a, b map[string][]byte) bool {
	return maps.EqualFunc(a, b, bytes.Equal)
}

// GradeEvent is grade e, made at at because of via ("check", "watch"), as
// a record's event: what a take-home kit's checks send their witness.
func GradeEvent(at time.Time, via string, e Graded) record.Event {
	return record.Event{At: at, Kind: record.KindGrade, Via: via, Grade: recordGrade(e)}
}

// recordGrade is a grade as the record keeps it.
func recordGrade(e Graded) *record.Grade {
	res := e.Result
	g := &record.Grade{Passed: res.Passed(), Runs: max(res.Runs, 1), Fingerprint: e.Fingerprint, Code: map[string]string{}}
	g.Required, g.RequiredTotal, g.Bonus, g.BonusTotal = res.Score()
	if res.Build != nil {
		g.Build = res.Build.Lines
		if len(g.Build) == 0 {
			g.Build = []string{string(res.Build.Kind)}
		}
	}
	for _, f := range res.Gate {
		g.Gate = append(g.Gate, f.String())
	}
	for _, it := range res.Items {
		g.Items = append(g.Items, record.Verdict{ID: it.ID, Passed: it.Passed(), Kind: string(it.Kind),
			Message: it.Message, Detail: it.Detail, Runs: it.Runs, Passes: it.Passes})
	}
	for n, c := range e.Code {
		g.Code[n] = string(c)
	}
	return g
}
