// Package board is the live room board of a workshop: a small HTTP server
// (standard library only) that takes the participants' grades as they are
// made and shows the room grid (package room, the one the report draws)
// updating by itself.
//
// Paths, and nothing else:
//
//	GET  /          the board: the room grid in large type
//	GET  /board.js  its script: follows /events and swaps in each new table
//	GET  /events    Server-Sent Events: the grid's table now and after every change
//	POST /push      one JSON grade, as `checker check --json` prints it, with
//	                "Authorization: Bearer TOKEN"
//	POST /admin/hide  {"participant": NAME}, with the admin token: the row
//	                  is taken off the board (room.Control)
//	POST /admin/drop  {"participant": NAME, "kata": SLUG}, with the admin
//	                  token: their grades so far on the kata are dropped
//	/witness/…        interviews' witness copies (package witness), when
//	                  Config.Witness is set: checker serve sets it
//
// A push is checked before anything is kept: the token (compared in
// constant time; 401), the size (MaxBody; 413), then the grade against
// the catalog (400, with the reason in the body): its kata, its items,
// its score, the participant's name (see accept); on a board with join
// codes, the participant's code (403); then the limits: pushes a minute
// per participant (429, with Retry-After), bytes of the room's file per
// participant and in all (507). What the board keeps
// of an accepted grade (room.Grade: unknown fields dropped, long texts
// cut) is appended to the room's file as one line, stamped with the time
// it was received, and synced to disk before the answer. Open replays
// that file, so a restarted server shows the same room. One server at a
// time holds a room's directory (a lock file, LockName).
//
// Every page carries a Content-Security-Policy that allows the board's own
// script and style and nothing from any other origin. The token is never
// in a page or a log line, nor is the admin token.
//
// Serve is `checker serve`: it checks the facilitator's choices, opens
// the room and serves it. A Pusher is the participants' side: it sends
// each grade of check and watch to the board.
package board

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
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

	"gokata/checker/internal/escape"
	"gokata/checker/internal/room"
)

// MaxBody is the largest push accepted. A grade keeps at most 20 lines of
// 300 bytes of what the code printed per test, so the largest a kata's
// grade can be (24 tests, every byte one that JSON escapes as \u00XX) is
// under 900 KB; a real one whose code printed on every call measured
// 158 KB (docs/facilitator.md).
const MaxBody = 1 << 20

// MaxStreams bounds the /events streams open at once: a projector and a
// page per participant, with room to spare.
const MaxStreams = 200

// FileName is the room's file in its directory: one accepted grade per
// line, as `checker report` also reads it.
const FileName = "pushes.json"

// Config is what a board needs.
type Config struct {
	// Catalog is every kata a grade may be for, with its items and the
	// fingerprint of its hidden tests: a grade for another kata, or that
	// does not list the kata's items, is refused. Nil: Katas.
	Catalog []room.Kata
	// Katas are the room's columns, the agenda: a grade for another kata
	// of the catalog is kept but not shown.
	Katas []room.Kata
	Dir   string // where FileName is kept
	Token string // the join token
	// Codes, when set, are the participants' join codes, by name (see
	// ReadCodes): a push must carry its participant's (CodeHeader; 403).
	Codes map[string]string
	// AdminToken, when set, is the facilitator's: it allows POST
	// /admin/hide and /admin/drop. It must differ from Token.
	AdminToken string
	// VerifiedOnly refuses a grade made by other hidden tests than the
	// catalog's; without it such a grade is kept and marked.
	VerifiedOnly bool
	// MaxPushes is how many pushes a participant may make in a minute
	// (429 past it); MaxStored how many bytes of the room's file their
	// grades may take, and MaxData how large the file may grow (507 past
	// either). 0: DefaultMaxPushes, DefaultMaxStored, DefaultMaxData.
	MaxPushes          int
	MaxStored, MaxData int64
	// QuietAfter dims the row of a participant who pushed nothing for so
	// long (0: never); StuckAfter is when the summary counts one stuck
	// (0: room.DefaultStuckAfter).
	QuietAfter, StuckAfter time.Duration
	// Log gets one line per accepted or refused push, per board that
	// connects, and per line of the file skipped on replay. Never the token.
	Log io.Writer
	Now func() time.Time // nil: time.Now
	// Witness, when set, serves /witness/ (package witness): the copies
	// interviews send as they happen.
	Witness http.Handler
}

// Server is one room's board. Its methods are safe for concurrent use.
type Server struct {
	cfg   Config
	token [sha256.Size]byte
	admin [sha256.Size]byte            // of the admin token
	codes map[string][sha256.Size]byte // hashed, by key of the name; nil: none
	csp   string

	mu      sync.Mutex
	grid    *room.Grid
	file    *os.File
	version int                        // of the grid: one more per accepted push
	table   []byte                     // the grid's table at tableOf
	tableOf int                        // the version table shows; -1: none yet
	names   []string                   // every participant's name, to tell look-alikes
	minute  time.Time                  // the minute the grid's table was rendered at
	lock    *os.File                   // held while the room is open: one server per directory
	subs    map[chan struct{}]struct{} // a board following /events each
	done    chan struct{}              // closed by endStreams: /events streams end
	ending  bool                       // done is closed
	closed  bool                       // the file is closed

	maxStreams int    // /events streams open at once; more are refused (503)
	lim        limits // what the push limits count

	// connected, when set, is called each time a board starts following
	// /events, after the first table is sent (tests wait on it).
	connected func()
}

// Open opens the room in cfg.Dir, creating it if need be, and replays its
// file: a line that cannot be read is skipped with a line on cfg.Log, and a
// half-written last line (the server stopped while writing it) is cut off.
func Open(cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("the board needs a token")
	}
	if cfg.AdminToken == cfg.Token {
		return nil, errors.New("the admin token must differ from the participants' token")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Catalog == nil {
		cfg.Catalog = cfg.Katas
	}
	cfg.MaxPushes = cmp.Or(cfg.MaxPushes, DefaultMaxPushes)
	cfg.MaxStored = cmp.Or(cfg.MaxStored, DefaultMaxStored)
	cfg.MaxData = cmp.Or(cfg.MaxData, DefaultMaxData)
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockRoom(cfg.Dir)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, token: sha256.Sum256([]byte(cfg.Token)), admin: sha256.Sum256([]byte(cfg.AdminToken)), grid: room.New(cfg.Katas), lock: lock, maxStreams: MaxStreams,
		tableOf: -1, subs: map[chan struct{}]struct{}{}, done: make(chan struct{}),
		lim: limits{recent: map[string][]time.Time{}, stored: map[string]int64{}}}
	s.grid.QuietAfter, s.grid.StuckAfter = cfg.QuietAfter, cfg.StuckAfter
	if len(cfg.Codes) > 0 {
		s.codes = hashCodes(cfg.Codes)
	}
	sum := sha256.Sum256([]byte(room.Stylesheet))
	s.csp = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'sha256-" +
		base64.StdEncoding.EncodeToString(sum[:]) + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	f, err := os.OpenFile(filepath.Join(cfg.Dir, FileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		lock.Close()
		return nil, err
	}
	if err := s.replay(f); err != nil {
		f.Close()
		lock.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	s.file = f
	return s, nil
}

// Path is the room's file.
func (s *Server) Path() string { return s.file.Name() }

// Participants is how many rows the grid has.
func (s *Server) Participants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.grid.Rows)
}

// Grid calls f with the grid, which it must not keep or change, as it is
// shown now.
func (s *Server) Grid(f func(*room.Grid)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grid.Now = s.cfg.Now()
	f(s.grid)
}

// Close ends every /events stream and closes the room's file. Call it
// when the HTTP server shuts down (http.Server.RegisterOnShutdown): a
// stream never goes idle by itself.
func (s *Server) Close() error {
	s.endStreams()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.file.Close()
	s.lock.Close() // the room is free for another server
	return err
}

// endStreams ends every /events stream, and refuses new ones.
func (s *Server) endStreams() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ending {
		s.ending = true
		close(s.done)
	}
}

// Serve answers on l until ctx is done, then shuts down: the /events
// streams end, requests under way finish (for up to shutdownGrace), and
// the room's file is closed. A clean shutdown returns nil.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(s.endStreams) // pushes under way are still kept
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	go s.tick(ctx)
	select {
	case err := <-served:
		s.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-served
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// shutdownGrace bounds how long a shutdown waits for pushes under way.
const shutdownGrace = 3 * time.Second

// tick sends the boards a new table when the minute changes, until ctx is
// done: a cell says for how many minutes it has been stuck.
func (s *Server) tick(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		if m := s.cfg.Now().Truncate(time.Minute); !m.Equal(s.minute) && s.tableOf == s.version {
			s.changed()
		}
		s.mu.Unlock()
	}
}

// Handler serves the board's paths, and 404 for any other.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /board.js", s.script)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /push", s.push)
	mux.HandleFunc("POST /admin/hide", s.control(room.Hide))
	mux.HandleFunc("POST /admin/drop", s.control(room.Drop))
	if s.cfg.Witness != nil {
		mux.Handle("/witness/", s.cfg.Witness)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", s.csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	var b bytes.Buffer
	s.mu.Lock()
	s.grid.Now = s.cfg.Now()
	err := s.grid.LivePage(&b, "/board.js")
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

//go:embed board.js
var boardJS []byte

func (s *Server) script(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Write(boardJS)
}

// events streams the grid's table: at once, then after each change. A
// board that falls behind gets the newest table, not every one.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	wake := make(chan struct{}, 1)
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		http.Error(w, "the board is shutting down", http.StatusServiceUnavailable)
		return
	}
	if len(s.subs) >= s.maxStreams {
		s.mu.Unlock()
		fmt.Fprintf(s.cfg.Log, "refused a board from %s: %d boards open already\n", remote(r), s.maxStreams)
		http.Error(w, fmt.Sprintf("the board is open in %d places already: close one", s.maxStreams), http.StatusServiceUnavailable)
		return
	}
	s.subs[wake] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, wake)
		s.mu.Unlock()
	}()
	fmt.Fprintf(s.cfg.Log, "board opened from %s\n", remote(r))
	first := true
	for {
		table, err := s.currentTable()
		if err != nil {
			return
		}
		if _, err := w.Write(sseEvent("grid", table)); err != nil {
			return
		}
		flusher.Flush()
		if first && s.connected != nil {
			s.connected()
		}
		first = false
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}

// currentTable renders the grid's table once per version.
func (s *Server) currentTable() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tableOf != s.version {
		var b bytes.Buffer
		s.grid.Now = s.cfg.Now()
		s.minute = s.grid.Now.Truncate(time.Minute)
		if err := s.grid.Table(&b); err != nil {
			return nil, err
		}
		s.table, s.tableOf = b.Bytes(), s.version
	}
	return s.table, nil
}

// sseEvent frames data as one Server-Sent Event: a "data:" line per line.
func sseEvent(name string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}

// push takes one grade: token, size, JSON and kata checked, then stored
// and synced before the answer, then shown.
func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	from := remote(r)
	if !s.tokenOK(r) {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s: wrong or missing token\n", from)
		http.Error(w, "wrong or missing token: use the one the facilitator gave (KATA_TOKEN, --token)", http.StatusUnauthorized)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s: over %d MiB\n", from, MaxBody>>20)
		http.Error(w, fmt.Sprintf("a grade is at most %d MiB", MaxBody>>20), http.StatusRequestEntityTooLarge)
		return
	}
	if err != nil {
		http.Error(w, "reading the grade: "+err.Error(), http.StatusBadRequest)
		return
	}
	gr, line, err := s.accept(data)
	if err != nil {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s: %s\n", from, escape.Line(err.Error()))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !s.codeOK(r, gr.Participant) {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s as %s: wrong or missing join code\n", from, escape.Line(gr.Participant))
		http.Error(w, "wrong or missing join code for this name: push with the code the facilitator gave you (KATA_CODE, --code)", http.StatusForbidden)
		return
	}
	var limit limitError
	if err := s.store(gr, line); errors.As(err, &limit) {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s: %s\n", from, escape.Line(err.Error()))
		limit.write(w)
		return
	} else if errors.As(err, new(refused)) {
		fmt.Fprintf(s.cfg.Log, "refused a push from %s: %s\n", from, escape.Line(err.Error()))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	} else if err != nil {
		fmt.Fprintf(s.cfg.Log, "could not keep a push from %s: %v\n", from, err)
		http.Error(w, "the board could not keep the grade: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// The log is a terminal: what a push names is shown, never obeyed.
	who, kata := escape.Line(room.Name(gr.Participant)), escape.Line(gr.Kata)
	fmt.Fprintf(s.cfg.Log, "%s %s: %s %s\n", gr.Received.Format("15:04:05"), who, kata, score(gr))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "kept: %s, %s %s\n", who, kata, score(gr))
}

// tokenOK compares the request's token with the room's in constant time
// (both hashed first, so that not even the length shows).
func (s *Server) tokenOK(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

// store appends line to the room's file and syncs it, then puts the grade
// in the grid and wakes the boards. Under one lock, so the file's order is
// the grid's.
func (s *Server) store(gr room.Grade, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("the board is shutting down")
	}
	if err := s.sameName(gr.Participant); err != nil {
		return err
	}
	if err := s.withinLimits(gr.Participant, line); err != nil {
		return err
	}
	if _, err := s.file.Write(line); err != nil {
		return err
	}
	if err := s.file.Sync(); err != nil {
		return err
	}
	s.counted(gr.Participant, len(line), true)
	s.kept(gr)
	return nil
}

// refused is an error a pusher gets as a 400, with its reason.
type refused struct{ error }

// sameName refuses a name that looks like another participant's
// without being it. Called with s.mu held.
func (s *Server) sameName(name string) error {
	for _, n := range s.names {
		if room.LooksLike(name, n) {
			return refused{fmt.Errorf("the name %q looks like %q, already on the board, but is written with other letters: push with that name, or one that reads differently", name, n)}
		}
	}
	return nil
}

// kept puts a grade kept in the grid, if its kata is on the agenda, and
// wakes the boards. Called with s.mu held.
func (s *Server) kept(gr room.Grade) {
	if !s.known(gr.Participant) {
		s.names = append(s.names, gr.Participant)
	}
	if !s.onAgenda(gr.Kata) {
		return
	}
	s.grid.Put(gr, "")
	s.changed()
}

// changed makes the next table a new one and wakes the boards. Called
// with s.mu held.
func (s *Server) changed() {
	s.version++
	for wake := range s.subs {
		select {
		case wake <- struct{}{}:
		default: // already woken: it will send the newest table
		}
	}
}

func score(gr room.Grade) string {
	if gr.Passed {
		return "passed"
	}
	return fmt.Sprintf("%d/%d", gr.Score.Required, gr.Score.RequiredTotal)
}

func remote(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
