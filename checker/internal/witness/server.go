package witness

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/record"
)

// MaxRooms bounds the rooms a server keeps; MaxRoomSize a room's copy.
const (
	MaxRooms    = 1000
	MaxRoomSize = 3 * record.MaxSize
)

// Server keeps the witnesses' rooms in one directory. Its methods are
// safe for concurrent use.
type Server struct {
	dir   string
	token [sha256.Size]byte // the server's token: opens rooms, reads them
	admin *[sha256.Size]byte
	now   func() time.Time
	log   io.Writer

	mu    sync.Mutex
	rooms map[string]*room
}

// room is one interview's copy.
type room struct {
	open  Open
	sum   [sha256.Size]byte // of its token
	size  int64
	ended bool // it has its record
}

// NewServer keeps rooms in dir, creating it, and knows the rooms already
// there. token opens rooms; admin, if not "", is the only one that reads
// them (else token reads them too): a workshop's participants know token.
// now stamps every line (nil: time.Now); log gets a line per room opened
// and per record kept.
func NewServer(dir, token, admin string, now func() time.Time, log io.Writer) (*Server, error) {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, token: sha256.Sum256([]byte(token)), now: now, log: log, rooms: map[string]*room{}}
	if admin != "" {
		a := sha256.Sum256([]byte(admin))
		s.admin = &a
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !RoomRE.MatchString(name) {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		c, err := ReadCopy(name, f)
		f.Close()
		if err != nil {
			fmt.Fprintf(log, "witness: room %s not reopened: %v\n", name, err)
			continue
		}
		sum, err := hex.DecodeString(c.Open.TokenSum)
		if err != nil || len(sum) != sha256.Size {
			fmt.Fprintf(log, "witness: room %s not reopened: its token's sum cannot be read\n", name)
			continue
		}
		fi, _ := e.Info()
		r := &room{open: c.Open, ended: c.Record != nil}
		copy(r.sum[:], sum)
		if fi != nil {
			r.size = fi.Size()
		}
		s.rooms[name] = r
	}
	return s, nil
}

// Rooms is how many rooms the server keeps.
func (s *Server) Rooms() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rooms)
}

// Handler serves the witness's paths (see the package comment).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /witness/open", s.openRoom)
	mux.HandleFunc("POST /witness/{room}/event", s.append(false))
	mux.HandleFunc("POST /witness/{room}/end", s.append(true))
	mux.HandleFunc("GET /witness/{room}", s.read)
	return mux
}

// bearer is the request's bearer token's SHA-256.
func bearer(r *http.Request) [sha256.Size]byte {
	t, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return sha256.Sum256([]byte(t))
}

func same(a, b [sha256.Size]byte) bool { return subtle.ConstantTimeCompare(a[:], b[:]) == 1 }

// openRoom makes a room for an interview and answers its name and token.
func (s *Server) openRoom(w http.ResponseWriter, r *http.Request) {
	if !same(bearer(r), s.token) {
		http.Error(w, "wrong or missing token: use the server's (--witness-token, KATA_WITNESS_TOKEN)", http.StatusUnauthorized)
		return
	}
	body, ok := readBody(w, r, 64<<10)
	if !ok {
		return
	}
	var o Open
	if err := json.Unmarshal(body, &o); err != nil || o.Kata == "" || len(o.Kata) > 100 || len(o.Candidate) > 200 ||
		!utf8.ValidString(o.Kata+o.Candidate) {
		http.Error(w, "not an interview's opening: give its kata and candidate", http.StatusBadRequest)
		return
	}
	token := rand.Text()
	sum := sha256.Sum256([]byte(token))
	o.TokenSum = hex.EncodeToString(sum[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rooms) >= MaxRooms {
		http.Error(w, fmt.Sprintf("the witness keeps %d rooms already: give it another directory", MaxRooms), http.StatusInsufficientStorage)
		return
	}
	name := strings.ToLower(rand.Text()[:12])
	data, _ := json.Marshal(line{Received: s.now(), Open: &o})
	if err := s.write(name, data, true); err != nil {
		fmt.Fprintf(s.log, "witness: room not opened: %v\n", err)
		http.Error(w, "the witness cannot keep the room: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.rooms[name] = &room{open: o, sum: sum, size: int64(len(data) + 1)}
	fmt.Fprintf(s.log, "witness: room %s opened for %s, %s, from %s\n", name, escape.Line(o.Kata), escape.Line(cmp.Or(o.Candidate, "no name given")), remote(r))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"room": name, "token": token})
}

// append takes one event, or with end the record, for a room.
func (s *Server) append(end bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("room")
		s.mu.Lock()
		rm := s.rooms[name]
		s.mu.Unlock()
		if rm == nil || !same(bearer(r), rm.sum) {
			http.Error(w, "no such room, or not its token", http.StatusUnauthorized)
			return
		}
		limit := int64(MaxEvent)
		if end {
			limit = record.MaxSize
		}
		body, ok := readBody(w, r, limit)
		if !ok {
			return
		}
		l := line{}
		if end {
			rec, err := record.Parse(body)
			if err != nil {
				http.Error(w, "not an interview record: "+err.Error(), http.StatusBadRequest)
				return
			}
			l.Record = compact(body)
			defer fmt.Fprintf(s.log, "witness: room %s got its record (%d events)\n", name, len(rec.Events))
		} else {
			var e record.Event
			if err := json.Unmarshal(body, &e); err != nil || e.At.IsZero() || e.Kind == "" {
				http.Error(w, "not an event of an interview's record", http.StatusBadRequest)
				return
			}
			l.Event = compact(body)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case rm.ended:
			http.Error(w, "the room has its record already: nothing more is taken", http.StatusConflict)
			return
		case rm.size+int64(len(body))+100 > MaxRoomSize:
			http.Error(w, "the room is full", http.StatusInsufficientStorage)
			return
		}
		l.Received = s.now()
		data, _ := json.Marshal(l)
		if err := s.write(name, data, false); err != nil {
			fmt.Fprintf(s.log, "witness: room %s: %v\n", name, err)
			http.Error(w, "the witness cannot keep it: "+err.Error(), http.StatusInternalServerError)
			return
		}
		rm.size += int64(len(data) + 1)
		rm.ended = end
		w.WriteHeader(http.StatusNoContent)
	}
}

// read answers a room's copy to the admin token, or to the server's when
// there is no admin token.
func (s *Server) read(w http.ResponseWriter, r *http.Request) {
	want := s.token
	if s.admin != nil {
		want = *s.admin
	}
	if !same(bearer(r), want) {
		http.Error(w, "wrong or missing token: use the server's admin token (its token, if it has none)", http.StatusUnauthorized)
		return
	}
	name := r.PathValue("room")
	s.mu.Lock()
	_, ok := s.rooms[name]
	var data []byte
	var err error
	if ok {
		data, err = os.ReadFile(s.Path(name))
	}
	s.mu.Unlock()
	switch {
	case !ok:
		http.Error(w, "no such room", http.StatusNotFound)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write(data)
	}
}

// Dir is where the rooms are kept.
func (s *Server) Dir() string { return s.dir }

// Path is room name's copy.
func (s *Server) Path(name string) string { return filepath.Join(s.dir, name+".jsonl") }

// write appends one line to room name's copy (a new file with create) and
// syncs it.
func (s *Server) write(name string, data []byte, create bool) error {
	flags := os.O_WRONLY | os.O_APPEND
	if create {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(s.Path(name), flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readBody reads at most limit bytes of r's body, answering 413 past it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("larger than %d MiB", limit>>20), http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		http.Error(w, "the request's body could not be read", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// compact is JSON data on one line.
func compact(data []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, data) != nil {
		return data
	}
	return b.Bytes()
}

func remote(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
