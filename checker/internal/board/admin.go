package board

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/room"
)

// maxControl is the largest body an admin request may have.
const maxControl = 4 << 10

// adminOK compares the request's token with the room's admin token in
// constant time; false when the board has none.
func (s *Server) adminOK(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.cfg.AdminToken == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], s.admin[:]) == 1
}

// control answers POST /admin/hide and /admin/drop: with the admin token,
// a JSON body {"participant": NAME} (and "kata": SLUG for a drop).
func (s *Server) control(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		from := remote(r)
		if !s.adminOK(r) {
			fmt.Fprintf(s.cfg.Log, "refused an admin request from %s: wrong or missing admin token\n", from)
			http.Error(w, "wrong or missing admin token: use the one the board was started with (serve --admin-token)", http.StatusUnauthorized)
			return
		}
		c := room.Control{Control: kind}
		err := json.NewDecoder(io.LimitReader(r.Body, maxControl)).Decode(&c)
		c.Control, c.Received = kind, s.cfg.Now().Truncate(time.Second)
		if err != nil {
			err = errors.New(`the body is not JSON such as {"participant": "Their Name"}`)
		} else {
			c.Participant = room.Name(c.Participant)
			err = s.applyNew(c)
		}
		if err != nil {
			fmt.Fprintf(s.cfg.Log, "refused an admin request from %s: %s\n", from, escape.Line(err.Error()))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		what := escape.Line(c.Participant)
		if kind == room.Drop {
			what += "'s grades on " + escape.Line(c.Kata)
		}
		fmt.Fprintf(s.cfg.Log, "%s admin from %s: %s %s\n", c.Received.Format("15:04:05"), from, kind, what)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "done: %s %s\n", kind, what)
	}
}

// applyNew checks a control, appends it to the room's file, synced, and
// applies it to the grid.
func (s *Server) applyNew(c room.Control) error {
	if c.Participant == "" {
		return errors.New(`name the participant: {"participant": "Their Name"}`)
	}
	if _, ok := s.kata(c.Kata); c.Control == room.Drop && !ok {
		return fmt.Errorf("this room has no kata %.40q: name one, as {\"participant\": \"Their Name\", \"kata\": \"06-retry\"}", c.Kata)
	}
	if c.Control == room.Hide {
		c.Kata = ""
	}
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return errors.New("the board is shutting down")
	case !s.known(c.Participant):
		return fmt.Errorf("no participant %q has pushed to this board", c.Participant)
	}
	if _, err := s.file.Write(line); err != nil {
		return err
	}
	if err := s.file.Sync(); err != nil {
		return err
	}
	s.lim.size += int64(len(line))
	s.grid.Apply(c)
	s.changed()
	return nil
}

// known reports whether a participant of that name pushed. Called with
// s.mu held.
func (s *Server) known(name string) bool {
	for _, n := range s.names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
