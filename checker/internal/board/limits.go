package board

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Limits a board sets unless its Config says otherwise. A participant's
// check pushes at most about once a second (make watch, on every save),
// and a line of the room's file is about a kilobyte: 64 MiB keeps 100
// participants pushing every 30 seconds for five hours.
const (
	DefaultMaxPushes = 60       // per participant per minute
	DefaultMaxStored = 4 << 20  // bytes of the room's file per participant
	DefaultMaxData   = 64 << 20 // bytes of the room's file
)

// limitError is a push refused by a limit: its status, its reason (one
// line, for the pusher), and for a rate limit when to try again.
type limitError struct {
	status     int
	retryAfter int // seconds; 0: none
	reason     string
}

func (e limitError) Error() string { return e.reason }

// write answers a push refused by a limit.
func (e limitError) write(w http.ResponseWriter) {
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.retryAfter))
	}
	http.Error(w, e.reason, e.status)
}

// limits are what the board counts to apply its limits. Guarded by the
// Server's mu.
type limits struct {
	recent map[string][]time.Time // per participant: the pushes kept in the last minute
	stored map[string]int64       // per participant: bytes of the room's file
	size   int64                  // bytes of the room's file
}

// key is a participant's name as the limits count it: names that differ
// only in case are one participant (one row).
func key(name string) string { return strings.ToLower(name) }

// withinLimits refuses a push of line by name that would go over a limit.
// Called with s.mu held.
func (s *Server) withinLimits(name string, line []byte) error {
	now, k := s.cfg.Now(), key(name)
	recent := s.lim.recent[k]
	for len(recent) > 0 && now.Sub(recent[0]) >= time.Minute {
		recent = recent[1:]
	}
	s.lim.recent[k] = recent
	n := int64(len(line))
	switch {
	case len(recent) >= s.cfg.MaxPushes:
		wait := int((recent[0].Add(time.Minute).Sub(now) + time.Second - 1) / time.Second)
		return limitError{http.StatusTooManyRequests, max(wait, 1),
			fmt.Sprintf("too many pushes: at most %d a minute per participant; try again in %d s", s.cfg.MaxPushes, max(wait, 1))}
	case s.lim.size+n > s.cfg.MaxData:
		return limitError{http.StatusInsufficientStorage, 0,
			fmt.Sprintf("the room's data file is full (%s): the facilitator can raise it (serve --max-data) or start a new room (serve --dir)", sizeText(s.cfg.MaxData))}
	case s.lim.stored[k]+n > s.cfg.MaxStored:
		return limitError{http.StatusInsufficientStorage, 0,
			fmt.Sprintf("your grades fill your share of the room's data file (%s): the facilitator can raise it (serve --max-stored)", sizeText(s.cfg.MaxStored))}
	}
	return nil
}

// counted counts a line kept for name; pushed: just now (replayed lines
// count only towards the sizes). Called with s.mu held.
func (s *Server) counted(name string, n int, pushed bool) {
	k := key(name)
	s.lim.size += int64(n)
	s.lim.stored[k] += int64(n)
	if pushed {
		s.lim.recent[k] = append(s.lim.recent[k], s.cfg.Now())
	}
}

// sizeText is n bytes in the largest binary unit that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
