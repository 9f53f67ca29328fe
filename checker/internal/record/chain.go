package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gokata/checker/internal/escape"
)

// The hash chain of a record: each event's Prev is the SHA-256 of the
// one before it (of the header for the first), and the Seal covers the
// last event and what the interview wrote at its end. A hash is taken
// over a part's canonical JSON (its keys sorted, as encoding/json writes
// a map), so a record keeps its chain through any tool that rewrites the
// JSON without changing what it says. The rubric is outside the chain:
// the interviewer fills it in afterwards.
//
// The chain has no secret: whoever computes every hash again can forge a
// record. It shows an edit by hand, a deleted or moved event and a part
// of a forgery left undone; only a witness that saw the interview can
// vouch for the rest.

// headerKeys are the parts of a record written before its events, which
// the first event's Prev covers.
var headerKeys = []string{"schema", "kata", "title", "candidate", "minutes", "start", "keptBack", "race", "noRace",
	"items", "hints", "ask", "followUps", "startCode", "hunt"}

// endKeys are the parts written at the end, which the Seal covers.
var endKeys = []string{"end", "ending", "final", "diff", "witness"}

// Seal closes a record's chain.
type Seal struct {
	Events int    `json:"events"` // how many events the chain holds
	Last   string `json:"last"`   // the hash of the last event (of the header when there is none)
	Sum    string `json:"sum"`    // the SHA-256 of events, last and the end: end, ending, final, diff, witness
}

// ChainState is what a record's chain says of it.
type ChainState int

const (
	ChainIntact  ChainState = iota // every hash matches
	ChainMissing                   // no chain: written by an older checker
	ChainChanged                   // some hash does not match
)

// Chain is the verdict of a record's hash chain (Verify).
type Chain struct {
	State ChainState
	// Where a changed record's chain breaks: Event, from 1, or its
	// header (Event 0, End false), or what follows the last event (End).
	Event int
	End   bool
	// What, the event's kind and time when they can be read ("grade at
	// 3:10"), or why it is not there.
	What string
}

// Changed reports whether the record is not what the checker wrote.
func (c Chain) Changed() bool { return c.State == ChainChanged }

// String is the verdict in one line, safe to print.
func (c Chain) String() string {
	switch c.State {
	case ChainIntact:
		return "hash chain intact, as far as the record can tell"
	case ChainMissing:
		return "this record has no hash chain (written by an older checker): changes to it cannot be detected"
	}
	switch {
	case c.End:
		return "record changed after the last event (end, final grade or diff)"
	case c.Event == 0:
		return "record changed: its header (kata, candidate, start, items, …)"
	case c.What != "":
		return fmt.Sprintf("record changed at event %d (%s)", c.Event, escape.Line(c.What))
	}
	return fmt.Sprintf("record changed at event %d", c.Event)
}

// seal sets the chain of r from its header and its events as they are:
// each event's Seq and Prev, and the Seal. Save calls it once, as the
// record is written.
func (r *Record) seal() error {
	header, err := partsOf(r)
	if err != nil {
		return err
	}
	h, err := hashKeys(header, headerKeys, nil)
	if err != nil {
		return err
	}
	r.Seal = nil
	for i := range r.Events {
		r.Events[i].Seq, r.Events[i].Prev = i+1, h
		data, err := json.Marshal(r.Events[i])
		if err != nil {
			return err
		}
		if h, err = HashJSON(data); err != nil {
			return err
		}
	}
	all, err := partsOf(r)
	if err != nil {
		return err
	}
	seal := &Seal{Events: len(r.Events), Last: h}
	if seal.Sum, err = sealSum(all, seal); err != nil {
		return err
	}
	r.Seal, r.chain = seal, &Chain{State: ChainIntact}
	return nil
}

// Chain is the verdict of r's chain: as read (Parse) or written (Save);
// for a record made otherwise, that of its JSON.
func (r *Record) Chain() Chain {
	if r.chain != nil {
		return *r.chain
	}
	data, err := json.Marshal(r)
	if err != nil {
		return Chain{State: ChainChanged, End: true}
	}
	return Verify(data)
}

// Verify checks the hash chain of a record's JSON, data, which Parse
// has read: the first part whose hash does not match is where the
// record was changed. An edited event is found by the Prev of the next
// (by the Seal, for the last); the Seq of the event after a break tells
// an event deleted or moved (it is named) from one edited or added (the
// one before it is).
func Verify(data []byte) Chain {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return Chain{State: ChainChanged}
	}
	var raws []json.RawMessage
	if ev, ok := top["events"]; ok && json.Unmarshal(ev, &raws) != nil {
		return Chain{State: ChainChanged, Event: 1}
	}
	links := make([]link, len(raws))
	chained := top["seal"] != nil
	for i, raw := range raws {
		if json.Unmarshal(raw, &links[i]) != nil {
			return Chain{State: ChainChanged, Event: i + 1}
		}
		chained = chained || links[i].Seq != 0 || links[i].Prev != ""
	}
	start := startOf(top)
	if !chained {
		return unchained(raws, start)
	}
	changedAt := func(n int) Chain {
		c := Chain{State: ChainChanged, Event: n}
		if n <= len(raws) {
			c.What = EventWhat(raws[n-1], start)
		}
		return c
	}
	h, err := hashKeys(top, headerKeys, nil)
	if err != nil {
		return Chain{State: ChainChanged}
	}
	for i, raw := range raws {
		n, l := i+1, links[i]
		switch {
		case l.Seq == 0 || l.Prev == "": // not written by the checker
			return changedAt(n)
		case l.Prev != h && l.Seq > n: // events missing before it, or moved
			return changedAt(n)
		case l.Prev != h && n == 1:
			return Chain{State: ChainChanged}
		case l.Prev != h: // the event before it edited, or added
			return changedAt(n - 1)
		case l.Seq != n:
			return changedAt(n)
		}
		if h, err = HashJSON(raw); err != nil {
			return changedAt(i + 1)
		}
	}
	var seal Seal
	if json.Unmarshal(top["seal"], &seal) != nil || seal.Sum == "" {
		return Chain{State: ChainChanged, End: true}
	}
	switch {
	case seal.Events > len(raws):
		c := changedAt(len(raws) + 1)
		c.What = fmt.Sprintf("no longer there: the chain was sealed with %d events", seal.Events)
		return c
	case seal.Events < len(raws):
		return changedAt(seal.Events + 1)
	case seal.Last != h && len(raws) == 0:
		return Chain{State: ChainChanged}
	case seal.Last != h:
		return changedAt(len(raws))
	}
	if sum, err := sealSum(top, &seal); err != nil || sum != seal.Sum {
		return Chain{State: ChainChanged, End: true}
	}
	return Chain{State: ChainIntact}
}

// unchained is the verdict on a record without a chain: missing, but
// changed when its events are out of the time order the checker writes
// them in.
func unchained(raws []json.RawMessage, start time.Time) Chain {
	var last time.Time
	for i, raw := range raws {
		var e struct {
			At time.Time `json:"at"`
		}
		if json.Unmarshal(raw, &e) == nil && e.At.Before(last) {
			return Chain{State: ChainChanged, Event: i + 1, What: EventWhat(raw, start) + ", before the event ahead of it"}
		}
		last = e.At
	}
	return Chain{State: ChainMissing}
}

// link is what an event holds of the chain.
type link struct {
	Seq  int    `json:"seq"`
	Prev string `json:"prev"`
}

// sealSum is the hash of seal's count and last hash with the end parts
// of the record whose top-level parts are top.
func sealSum(top map[string]json.RawMessage, seal *Seal) (string, error) {
	return hashKeys(top, endKeys, map[string]any{"events": seal.Events, "last": seal.Last})
}

// partsOf is r's JSON, by top-level key.
func partsOf(r *Record) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	return top, json.Unmarshal(data, &top)
}

// hashKeys is the hash of the parts of top named by keys (those there),
// with extra.
func hashKeys(top map[string]json.RawMessage, keys []string, extra map[string]any) (string, error) {
	m := map[string]any{}
	for k, v := range extra {
		m[k] = v
	}
	for _, k := range keys {
		raw, ok := top[k]
		if !ok {
			continue
		}
		v, err := generic(raw)
		if err != nil {
			return "", err
		}
		m[k] = v
	}
	return hashValue(m)
}

// HashJSON is the hex SHA-256 of the canonical form of JSON data: its
// keys sorted, its spacing removed.
func HashJSON(data []byte) (string, error) {
	v, err := generic(data)
	if err != nil {
		return "", err
	}
	return hashValue(v)
}

// generic reads JSON as plain values, its numbers as written.
func generic(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	return v, dec.Decode(&v)
}

// hashValue is the hex SHA-256 of v's canonical JSON: encoding/json
// writes a map's keys sorted.
func hashValue(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// startOf is the record's start time, zero when it cannot be read.
func startOf(top map[string]json.RawMessage) time.Time {
	var t time.Time
	_ = json.Unmarshal(top["start"], &t)
	return t
}

// EventWhat is an event's kind and time ("grade at 3:10"), as far as
// they can be read; "" when neither can.
func EventWhat(raw json.RawMessage, start time.Time) string {
	var e struct {
		At   time.Time `json:"at"`
		Kind string    `json:"kind"`
	}
	_ = json.Unmarshal(raw, &e)
	var parts []string
	if e.Kind != "" {
		parts = append(parts, e.Kind)
	}
	switch {
	case e.At.IsZero():
	case start.IsZero() || e.At.Before(start):
		parts = append(parts, "at "+e.At.Format(DateFormat))
	default:
		parts = append(parts, "at "+ClockText(e.At.Sub(start)))
	}
	return strings.Join(parts, " ")
}
