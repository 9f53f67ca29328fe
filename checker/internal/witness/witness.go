// Package witness keeps a copy of an interview that the candidate's
// machine cannot change afterwards. The interviewer's server (checker
// serve) opens a room for each interview, with its own token; the
// interview sends it each event of its record as it is logged, and the
// record itself when it is written. The server stamps every line with the
// time it came and only ever appends. Compare then lists where a record
// differs from its witness's copy: an event deleted, edited, added or
// back-dated, a record rewritten after it was sent.
//
// Paths, on the board's server:
//
//	POST /witness/open          {"kata", "candidate"}, with the
//	                            server's token: a new room; answers
//	                            {"room": ID, "token": TOKEN}
//	POST /witness/{room}/event  one record.Event, with the room's token
//	POST /witness/{room}/end    the whole record, with the room's token; once
//	GET  /witness/{room}        the room's copy (Copy, as JSON lines), with
//	                            the admin token (the server's, if it has none)
//
// A room's copy is DIR/ROOM.jsonl, one JSON line each, synced before the
// answer: first {"received", "open": Open}, then {"received", "event"}
// per event and at most one {"received", "record"}.
//
// What a witness proves: the events it holds left the candidate's
// checker at the times it stamped, and the record it holds is what the
// interview wrote. It does not prove who typed the code.
package witness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
)

// Open is what an interview tells the witness when it opens its room.
type Open struct {
	Kata      string `json:"kata"`
	Candidate string `json:"candidate"`
	// TokenSum is the hex SHA-256 of the room's token (the server keeps
	// no token itself).
	TokenSum string `json:"tokenSum,omitempty"`
}

// line is one line of a room's copy.
type line struct {
	Received time.Time       `json:"received"`
	Open     *Open           `json:"open,omitempty"`
	Event    json.RawMessage `json:"event,omitempty"`
	Record   json.RawMessage `json:"record,omitempty"`
}

// Received is an event as the witness got it.
type Received struct {
	At  time.Time       // when it came
	Raw json.RawMessage // the event as sent
}

// Copy is a room's copy: the interview it was opened for, each event in
// the order it came, and the record sent at the end (nil if none came).
type Copy struct {
	Room       string
	Open       Open
	Opened     time.Time
	Events     []Received
	Record     json.RawMessage
	RecordedAt time.Time
}

// RoomRE is what a room's name may be.
var RoomRE = regexp.MustCompile(`^[a-z0-9]{6,32}$`)

// MaxEvent is the largest event a room takes: a grade holds the code it
// graded, and a verdict's lines.
const MaxEvent = 8 << 20

// ReadCopy reads a room's copy from r. A line that cannot be read is an
// error naming it: a copy is the server's own file, so it is either whole
// or damaged.
func ReadCopy(room string, r io.Reader) (*Copy, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 80<<20) // a record is at most record.MaxSize
	c := &Copy{Room: room}
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("line %d of the witness's copy cannot be read: %v", n, shortJSONError(err))
		}
		switch {
		case n == 1 && l.Open == nil:
			return nil, errors.New("the witness's copy does not begin with the room's opening")
		case l.Open != nil && n != 1:
			return nil, fmt.Errorf("line %d of the witness's copy opens the room again", n)
		case l.Open != nil:
			c.Open, c.Opened = *l.Open, l.Received
		case l.Event != nil:
			c.Events = append(c.Events, Received{At: l.Received, Raw: l.Event})
		case l.Record != nil:
			if c.Record != nil {
				return nil, fmt.Errorf("line %d of the witness's copy holds a second record", n)
			}
			c.Record, c.RecordedAt = l.Record, l.Received
		default:
			return nil, fmt.Errorf("line %d of the witness's copy holds nothing it knows", n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("the witness's copy: %v", err)
	}
	if n == 0 {
		return nil, errors.New("the witness's copy is empty")
	}
	return c, nil
}

// shortJSONError is err without the type names encoding/json adds.
func shortJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not JSON at byte %d", se.Offset)
	}
	return "not the JSON a witness writes"
}
