package witness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"gokata/checker/internal/record"
)

// Lag is how far an event's own time may be from when the witness got
// it, beyond the gap between the two clocks at the opening: a grade is
// sent when it ends, and may run a few minutes at most.
const (
	LagBefore = time.Minute
	LagAfter  = 5 * time.Minute
)

// Compare lists where a record, data as read from its file, differs from
// the witness's copy c, first the worst; none: they agree. A record that
// cannot be read is an error. The differences quote what the record and
// the copy say, as they say it: escape them before they reach a terminal.
func Compare(data []byte, c *Copy) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("the record is not JSON: %v", shortJSONError(err))
	}
	var head struct {
		Kata, Candidate string
		Start           time.Time
		Witness         *record.Witness
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("the record cannot be read: %v", shortJSONError(err))
	}
	var raws []json.RawMessage
	if ev, ok := top["events"]; ok {
		if err := json.Unmarshal(ev, &raws); err != nil {
			return nil, fmt.Errorf("the record's events cannot be read: %v", shortJSONError(err))
		}
	}
	var out []string
	switch {
	case head.Witness == nil:
		out = append(out, fmt.Sprintf("The record names no witness, but room %s witnessed an interview of %s.", c.Room, quote(c.Open.Candidate)))
	case head.Witness.Room != c.Room:
		out = append(out, fmt.Sprintf("The record names room %s, not %s.", quote(head.Witness.Room), c.Room))
	}
	if head.Kata != c.Open.Kata || head.Candidate != c.Open.Candidate {
		out = append(out, fmt.Sprintf("The record is of %s, %s; the room was opened for %s, %s.",
			quote(head.Kata), quote(head.Candidate), quote(c.Open.Kata), quote(c.Open.Candidate)))
	}
	if s, ok := c.start(); ok && !s.Equal(head.Start) {
		out = append(out, fmt.Sprintf("The record says the interview started at %s; the witness saw it start at %s.",
			head.Start.Format(record.DateFormat), s.Format(record.DateFormat)))
	}
	evs := events(raws, head.Start, c)
	out = append(out, evs...)
	out = append(out, end(top, head.Start, c, len(evs) == 0)...)
	if head.Witness != nil && head.Witness.Unsent > 0 && len(out) > 0 {
		out = append(out, fmt.Sprintf("The interview could not send %d of its events to the witness (the network): a record event it lacks may be one of those.", head.Witness.Unsent))
	}
	return out, nil
}

// events compares the record's events with those the witness got: each
// of the witness's must be in the record as sent, each of the record's
// that the interview sends must be in the witness, and each came about
// when it says it happened.
func events(raws []json.RawMessage, start time.Time, c *Copy) []string {
	keys := make([]string, len(raws))
	for i, raw := range raws {
		keys[i] = key(raw)
	}
	used := make([]bool, len(raws))
	offset := c.Opened.Sub(start) // the witness's clock ahead of the interview's
	if s, ok := c.start(); ok {
		offset = c.Events[0].At.Sub(s)
	}
	var out []string
	var missed []Received // the witness's events the record does not hold
	for _, got := range c.Events {
		k := key(got.Raw)
		i := slices.IndexFunc(keys, func(s string) bool { return s == k })
		for i >= 0 && used[i] {
			j := slices.IndexFunc(keys[i+1:], func(s string) bool { return s == k })
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			missed = append(missed, got)
			continue
		}
		used[i] = true
		var e record.Event
		if json.Unmarshal(got.Raw, &e) == nil && live(e) {
			lag := got.At.Sub(e.At) - offset
			if lag < -LagBefore || lag > LagAfter {
				out = append(out, fmt.Sprintf("Event %d (%s) reached the witness %s from when it says it happened: its time was changed.",
					i+1, record.EventWhat(raws[i], start), lag.Round(time.Second)))
			}
		}
	}
	for _, got := range missed { // changed, if the record holds an event of its kind and time left over
		what := record.EventWhat(got.Raw, start)
		i := slices.IndexFunc(raws, func(raw json.RawMessage) bool { return record.EventWhat(raw, start) == what })
		for i >= 0 && used[i] {
			j := slices.IndexFunc(raws[i+1:], func(raw json.RawMessage) bool { return record.EventWhat(raw, start) == what })
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i >= 0 {
			used[i] = true
			out = append(out, fmt.Sprintf("Event %d (%s) was changed after the witness got it.", i+1, what))
			continue
		}
		out = append(out, fmt.Sprintf("The witness got a %s (at %s by its clock) that the record no longer holds: deleted, or its time changed.",
			what, got.At.Format(record.DateFormat)))
	}
	for i, raw := range raws {
		if used[i] { // an interview with a witness sends every event its record holds
			continue
		}
		out = append(out, fmt.Sprintf("Event %d (%s) never reached the witness: added afterwards, or its time changed.", i+1, record.EventWhat(raw, start)))
	}
	return out
}

// end compares the record with the one the witness got at the end, event
// by event too when eachEvent (else the events were found to differ
// already, one by one).
func end(top map[string]json.RawMessage, start time.Time, c *Copy, eachEvent bool) []string {
	if c.Record == nil {
		return []string{"The witness got no record at the end: the interview was stopped before it wrote one, or could not reach the witness then."}
	}
	var theirs map[string]json.RawMessage
	if json.Unmarshal(c.Record, &theirs) != nil {
		return []string{"The record the witness got cannot be read."}
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	for k := range theirs {
		if _, ok := top[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if k == "rubric" || k == "events" { // the interviewer's own; the events are compared one by one
			continue
		}
		if key(top[k]) != key(theirs[k]) {
			out = append(out, fmt.Sprintf("The record's %s differs from the record the witness got at the end.", quote(k)))
		}
	}
	if !eachEvent {
		return out
	}
	var mine, got []json.RawMessage
	json.Unmarshal(top["events"], &mine)
	json.Unmarshal(theirs["events"], &got)
	for i := range max(len(mine), len(got)) {
		switch {
		case i >= len(mine):
			out = append(out, fmt.Sprintf("The record the witness got has %d events; this one has %d.", len(got), len(mine)))
		case i >= len(got):
			out = append(out, fmt.Sprintf("This record has %d events; the one the witness got has %d.", len(mine), len(got)))
		case key(mine[i]) != key(got[i]):
			out = append(out, fmt.Sprintf("Event %d (%s) differs from the record the witness got at the end.", i+1, record.EventWhat(mine[i], start)))
		default:
			continue
		}
		break
	}
	return out
}

// start is when the interview the witness saw started: the time of its
// first event, the start.
func (c *Copy) start() (time.Time, bool) {
	if len(c.Events) == 0 {
		return time.Time{}, false
	}
	var e record.Event
	if json.Unmarshal(c.Events[0].Raw, &e) != nil || e.Kind != record.KindStart {
		return time.Time{}, false
	}
	return e.At, true
}

// key is an event's canonical hash, its place in the chain left out:
// the witness gets events before the record is chained. "" is missing.
func key(raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		delete(m, "seq")
		delete(m, "prev")
		raw, _ = json.Marshal(m)
	}
	h, err := record.HashJSON(raw)
	if err != nil {
		return string(bytes.TrimSpace(raw))
	}
	return h
}

// live reports whether the interview logs e as it happens, rather than
// finding it in the progress state at a later look (a hint read with the
// hint verb, a note, a give-up): only those must reach the witness close
// to their time.
func live(e record.Event) bool {
	switch e.Kind {
	case record.KindHint:
		return e.Via == "interview"
	case record.KindDecisions, record.KindGaveUp, record.KindHuntGaveUp, record.KindSolution, record.KindNote, record.KindAsked:
		return false
	}
	return true
}

// quote is s in quotes, escaped.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// Graded is what a take-home's witness saw of one kata: how many grades
// came, the first and the last, and the last one's grade.
type Graded struct {
	Grades      int
	First, Last time.Time // as the witness stamped them
	Grade       *record.Grade
}

// Grades is what the copy holds of the grades sent to it: nil when none.
// An event that is not a grade, or cannot be read, is skipped.
func (c *Copy) Grades() *Graded {
	var g *Graded
	for _, r := range c.Events {
		var e record.Event
		if json.Unmarshal(r.Raw, &e) != nil || e.Kind != record.KindGrade || e.Grade == nil {
			continue
		}
		if g == nil {
			g = &Graded{First: r.At}
		}
		g.Grades++
		g.Last, g.Grade = r.At, e.Grade
	}
	return g
}
