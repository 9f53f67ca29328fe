package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A Control is a facilitator's decision, kept in the board's file among
// the grades as one line: {"control":"hide","participant":"Ada"} takes a
// participant's row off the grid, for good (their later grades are kept
// but not shown); {"control":"drop","participant":"Ada","kata":"06-retry"}
// drops the grades they pushed so far on a kata (a later one shows).
type Control struct {
	Control     string    `json:"control"` // "hide" or "drop"
	Participant string    `json:"participant"`
	Kata        string    `json:"kata,omitempty"` // drop's
	Received    time.Time `json:"received"`
}

// Controls are the controls there are.
const (
	Hide = "hide"
	Drop = "drop"
)

// ParseControl reads one line of a board's file as a control: ok is false
// when it is not one (a grade, say), err when it is one but malformed.
func ParseControl(data []byte) (c Control, ok bool, err error) {
	var probe struct {
		Control *string `json:"control"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Control == nil {
		return c, false, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, true, err
	}
	return c, true, c.check()
}

func (c Control) check() error {
	switch {
	case c.Control != Hide && c.Control != Drop:
		return fmt.Errorf("no control %.20q: hide or drop", c.Control)
	case Name(c.Participant) == "":
		return errors.New("the control names no participant")
	case c.Control == Drop && c.Kata == "":
		return errors.New("a drop names no kata")
	}
	return nil
}

// Apply applies a control to the grid.
func (g *Grid) Apply(c Control) {
	who := strings.ToLower(Name(c.Participant))
	if c.Control == Hide {
		if g.hidden == nil {
			g.hidden = map[string]bool{}
		}
		g.hidden[who] = true
	}
	for k := range g.since {
		if k.who == who && (c.Control == Hide || k.kata == c.Kata) {
			delete(g.since, k)
		}
	}
	g.Rows = slices.DeleteFunc(g.Rows, func(r Row) bool {
		if strings.ToLower(r.Participant) != who {
			return false
		}
		if c.Control == Drop {
			delete(r.Cells, c.Kata)
		}
		return len(r.Cells) == 0 || c.Control == Hide
	})
	for i := range g.Rows { // a dropped cell may have been the latest
		r := &g.Rows[i]
		if strings.ToLower(r.Participant) == who {
			r.Last = time.Time{}
			for _, cell := range r.Cells {
				if cell.At.After(r.Last) {
					r.Last = cell.At
				}
			}
		}
	}
}

// Hidden reports whether the participant's row was hidden.
func (g *Grid) Hidden(participant string) bool {
	return g.hidden[strings.ToLower(Name(participant))]
}
