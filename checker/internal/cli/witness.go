package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/record"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
	"gokata/checker/internal/witness"
)

// witnessFlags name the interviewer's witness (checker serve): where an
// interview sends its events, or where a scorecard reads the copy.
type witnessFlags struct{ url, token *string }

func defineWitness(fs *flag.FlagSet, url string) witnessFlags {
	return witnessFlags{url: fs.String("witness", "", url),
		token: fs.String("witness-token", "", "the witness's `TOKEN`: the one checker serve printed\n(default $KATA_WITNESS_TOKEN)")}
}

// tokenOr is the witness's token: the flag's, else the environment's.
func (f witnessFlags) tokenOr(c *call) string {
	if *f.token != "" {
		return *f.token
	}
	return c.env.get("KATA_WITNESS_TOKEN")
}

// named is the witness the flags or the environment name, and its token;
// "" when they name none. A token without a witness, or a witness without
// its token, is a usage error.
func (f witnessFlags) named(c *call) (base, token string, err error) {
	base, token = *f.url, f.tokenOr(c)
	if base == "" {
		base = c.env.get("KATA_WITNESS")
	}
	try := "checker " + c.verb + " --witness http://HOST:8080 --witness-token TOKEN"
	switch {
	case base == "" && *f.token != "":
		return "", "", &usageError{Msg: "--witness-token is the witness's token: name the witness too (--witness URL)", Try: try}
	case base != "" && token == "":
		return "", "", &usageError{Msg: "--witness needs the witness's token, as checker serve printed it (the interviewer gives it): --witness-token, or KATA_WITNESS_TOKEN", Try: try}
	}
	return base, token, nil
}

// dialWitness opens a room for the interview of o on the witness the
// flags or the environment name; nil when they name none. A witness
// that cannot be reached stops the interview before it begins: asked
// for, it must see all of it.
func dialWitness(c *call, f witnessFlags, candidate string) (*witness.Client, error) {
	base, token, err := f.named(c)
	if err != nil || base == "" {
		return nil, err
	}
	w, err := witness.Dial(c.ctx, base, token, witness.Open{Kata: c.kata.Slug, Candidate: candidate})
	if err != nil {
		return nil, &usageError{Msg: "the witness: " + err.Error(), Try: "checker interview " + c.kata.ID() + " (without --witness, no one else keeps a copy)"}
	}
	return w, nil
}

// witnessCopy reads the copy of the interview of r that the witness kept:
// from its server when source is an http(s) URL, else from the server's
// own files: a room's .jsonl, or the directory of them.
func witnessCopy(c *call, f witnessFlags, r *session.Record) (*witness.Copy, error) {
	source := *f.url
	_, room := r.WitnessRoom()
	try := "checker " + c.verb + " " + c.args[0] + " --witness http://HOST:8080 --witness-token TOKEN"
	if isURL(source) {
		if room == "" {
			return nil, &usageError{Msg: "the record names no witness room: the interview ran without --witness", Try: ""}
		}
		return fetchCopy(c, f, source, room)
	}
	path := absPath(c.env.Dir, source)
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		if room == "" {
			return nil, &usageError{Msg: "the record names no witness room: give the room's .jsonl itself", Try: "checker " + c.verb + " " + c.args[0] + " --witness .kata/room/witness/ROOM.jsonl"}
		}
		if !witness.RoomRE.MatchString(room) {
			return nil, &usageError{Msg: fmt.Sprintf("the record names the witness room %q, which is no room's name: give the room's .jsonl itself", room), Try: ""}
		}
		path = filepath.Join(path, room+".jsonl")
		fi, err = os.Stat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &usageError{Msg: fmt.Sprintf("--witness: %s does not exist", source), Try: try}
	case err != nil:
		return nil, &usageError{Msg: "--witness: " + err.Error(), Try: ""}
	case !fi.Mode().IsRegular():
		return nil, &usageError{Msg: fmt.Sprintf("--witness: %s is not a witness's copy", source), Try: try}
	case fi.Size() > witness.MaxRoomSize:
		return nil, &usageError{Msg: fmt.Sprintf("--witness: %s is larger than a witness's copy can be", source), Try: ""}
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, &usageError{Msg: "--witness: " + err.Error(), Try: ""}
	}
	defer file.Close()
	cp, err := witness.ReadCopy(strings.TrimSuffix(filepath.Base(path), ".jsonl"), file)
	if err != nil {
		return nil, &usageError{Msg: fmt.Sprintf("--witness %s: %v", source, err), Try: ""}
	}
	return cp, nil
}

// gradeWitness sends each grade of check and watch to the witness the
// flags or the environment name, as a take-home kit's checks do: one room
// per kata, opened at its first grade and kept in .kata/witness.json so
// that later checks go to the same room.
type gradeWitness struct {
	c                 *call
	base, token, name string

	mu      sync.Mutex
	rooms   *witness.Rooms
	clients map[string]*witness.Client // by kata slug
	failed  map[string]bool            // a room that could not be opened: said once
}

// newGradeWitness reads the flags or the environment; nil when they name
// no witness.
func newGradeWitness(c *call, f witnessFlags, name string) (*gradeWitness, error) {
	base, token, err := f.named(c)
	if err != nil || base == "" {
		return nil, err
	}
	rooms, err := witness.ReadRooms(c.cat.Root)
	if err != nil {
		return nil, &usageError{Msg: "the witness: " + err.Error(), Try: ""}
	}
	if rooms.URL != base { // another witness: its rooms are not this one's
		rooms = &witness.Rooms{URL: base, Rooms: map[string]witness.Room{}}
	}
	return &gradeWitness{c: c, base: base, token: token, name: participant(c, name, true), rooms: rooms,
		clients: map[string]*witness.Client{}, failed: map[string]bool{}}, nil
}

// show sends the grade of a Graded event, made by via.
func (w *gradeWitness) show(via string, e session.Event) {
	g, ok := e.(session.Graded)
	if w == nil || !ok || g.Result == nil {
		return
	}
	slug := g.Result.Kata.Slug
	w.mu.Lock()
	defer w.mu.Unlock()
	cl := w.clients[slug]
	if cl == nil {
		if w.failed[slug] {
			return
		}
		if r, ok := w.rooms.Rooms[slug]; ok {
			cl = witness.Resume(w.base, r.Room, r.Token)
		} else {
			var err error
			if cl, err = witness.Dial(w.c.ctx, w.base, w.token, witness.Open{Kata: slug, Candidate: w.name}); err != nil {
				w.failed[slug] = true
				fmt.Fprintf(w.c.env.Stderr, "checker: grades of %s not sent to the witness at %s: %v\n", slug, w.base, err)
				return
			}
			w.rooms.Rooms[slug] = witness.Room{Room: cl.Where().Room, Token: cl.Token()}
			if err := w.rooms.Save(w.c.cat.Root); err != nil {
				fmt.Fprintf(w.c.env.Stderr, "checker: the witness's room not kept in .kata: %v\n", err)
			}
		}
		w.clients[slug] = cl
	}
	cl.Event(session.GradeEvent(w.c.env.clock().Now(), via, g))
	w.sendFacts(slug, cl)
}

// sendFacts sends what the progress state holds of kata slug that the
// room has not had yet, each at its own time: hints read, the decisions
// read, a give-up, a bug hunt given up, the reference shown. A fact sent
// before that the state no longer holds was taken out of it, by a reset
// or by hand: that is sent too, as the state found rewritten now.
func (w *gradeWitness) sendFacts(slug string, cl *witness.Client) {
	p, err := (state.Progress{Root: w.c.cat.Root}).Read()
	if err != nil {
		return
	}
	r := w.rooms.Rooms[slug]
	var now []string
	for _, f := range session.StateFacts(p.Kata(slug)) {
		now = append(now, witness.FactKey(f))
	}
	kept := slices.DeleteFunc(slices.Clone(r.Sent), func(k string) bool { return !slices.Contains(now, k) })
	changed := len(kept) != len(r.Sent)
	if changed {
		cl.Event(record.Event{At: w.c.env.clock().Now(), Kind: record.KindStateChanged, Via: record.StateRewritten})
	}
	r.Sent = kept
	for _, f := range session.StateFacts(p.Kata(slug)) {
		if k := witness.FactKey(f); !slices.Contains(r.Sent, k) {
			cl.Event(f)
			r.Sent, changed = append(r.Sent, k), true
		}
	}
	if !changed {
		return
	}
	w.rooms.Rooms[slug] = r
	if err := w.rooms.Save(w.c.cat.Root); err != nil {
		fmt.Fprintf(w.c.env.Stderr, "checker: the witness's room not kept in .kata: %v\n", err)
	}
}

// close waits a little for the grades not sent yet, and says how many
// never reached the witness.
func (w *gradeWitness) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for slug, cl := range w.clients {
		if unsent, err := cl.Flush(10 * time.Second); unsent > 0 {
			fmt.Fprintf(w.c.env.Stderr, "checker: %d grades of %s not sent to the witness at %s: %v\n", unsent, slug, w.base, err)
		}
		cl.Close()
	}
}

// witnessedGrades says, for each returned folder regraded, what the
// take-home's witness saw of it: whether the returned code is the code it
// last saw graded. The rooms are those the returned kit's .kata/ names.
func witnessedGrades(c *call, w io.Writer, f witnessFlags, dir string, graded []regraded) error {
	root := dir
	if fi, err := os.Stat(filepath.Join(dir, "exercises")); err != nil || !fi.IsDir() {
		root = filepath.Dir(filepath.Dir(dir))
	}
	rooms, err := witness.ReadRooms(root)
	if err != nil {
		return &usageError{Msg: "--witness: the returned kit's " + err.Error(), Try: ""}
	}
	fmt.Fprintf(w, "\nWhat the witness saw of the candidate's checks:\n")
	for _, g := range graded {
		r, ok := rooms.Rooms[g.slug]
		if !ok {
			fmt.Fprintf(w, "  ⚠ %s: the returned kit names no witness room: its checks were not sent to a witness, or .kata/%s was removed\n", g.slug, witness.RoomsFile)
			continue
		}
		cp, err := takeHomeCopy(c, f, r.Room)
		if err != nil {
			return err
		}
		seen := cp.Grades()
		switch {
		case cp.Open.Kata != g.slug:
			fmt.Fprintf(w, "  ⚠ %s: the returned kit names room %s, which was opened for %s\n", g.slug, cp.Room, escape.Line(cp.Open.Kata))
		case seen == nil:
			fmt.Fprintf(w, "  ⚠ %s: room %s has no grade\n", g.slug, cp.Room)
		case seen.Grade.Fingerprint.Code == g.code:
			fmt.Fprintf(w, "  ✔ %s: the returned code is the code its last witnessed grade graded (%s), of %d grades from %s to %s\n",
				g.slug, scoreOf(seen.Grade), seen.Grades, seen.First.Format(record.DateFormat), seen.Last.Format(record.DateFormat))
		default:
			fmt.Fprintf(w, "  ⚠ %s: the returned code was never graded while the witness listened: its last grade (%s, at %s, of %d) was of other code\n",
				g.slug, scoreOf(seen.Grade), seen.Last.Format(record.DateFormat), seen.Grades)
		}
		writeFacts(w, cp)
	}
	return nil
}

// regraded is one folder's regrade, for witnessedGrades.
type regraded struct{ slug, code string }

// scoreOf is a witnessed grade's score in a few words.
func scoreOf(g *record.Grade) string {
	return fmt.Sprintf("%d/%d required", g.Required, g.RequiredTotal)
}

// takeHomeCopy reads room's copy from the witness the flags name: its
// server, or the server's directory of rooms.
func takeHomeCopy(c *call, f witnessFlags, room string) (*witness.Copy, error) {
	source := *f.url
	if isURL(source) {
		return fetchCopy(c, f, source, room)
	}
	if !witness.RoomRE.MatchString(room) {
		return nil, &usageError{Msg: fmt.Sprintf("the returned kit names the witness room %q, which is no room's name", room), Try: ""}
	}
	path := filepath.Join(absPath(c.env.Dir, source), room+".jsonl")
	file, err := os.Open(path)
	if err != nil {
		return nil, &usageError{Msg: "--witness: " + err.Error(), Try: ""}
	}
	defer file.Close()
	cp, err := witness.ReadCopy(room, io.LimitReader(file, witness.MaxRoomSize))
	if err != nil {
		return nil, &usageError{Msg: fmt.Sprintf("--witness: room %s: %v", room, err), Try: ""}
	}
	return cp, nil
}

// isURL reports whether a --witness names a server rather than its files.
func isURL(source string) bool {
	return strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://")
}

// fetchCopy reads room's copy from the witness's server at base, with the
// token the flags or the environment give.
func fetchCopy(c *call, f witnessFlags, base, room string) (*witness.Copy, error) {
	token := f.tokenOr(c)
	if token == "" {
		return nil, &usageError{Msg: "reading the witness's copy needs the token checker serve printed (its admin token, if it has one): --witness-token",
			Try: "checker " + c.verb + " " + strings.Join(c.args, " ") + " --witness " + base + " --witness-token TOKEN"}
	}
	cp, err := witness.Fetch(c.ctx, base, room, token)
	if err != nil {
		return nil, &usageError{Msg: err.Error(), Try: ""}
	}
	return cp, nil
}

// writeFacts lists what else the witness saw of a take-home's kata: the
// hints, the decisions, a give-up…, each at its own time.
func writeFacts(w io.Writer, cp *witness.Copy) {
	for _, r := range cp.Events {
		var e record.Event
		if json.Unmarshal(r.Raw, &e) != nil || e.Kind == record.KindGrade {
			continue
		}
		what := map[string]string{record.KindHint: fmt.Sprintf("hint %d read", e.Hint), record.KindDecisions: "the decisions read",
			record.KindGaveUp: "gave up", record.KindHuntGaveUp: "gave the bug hunt up", record.KindSolution: "the reference shown",
			record.KindStateChanged: "⚠ progress found reset or edited: what it held before is gone"}[e.Kind]
		if what == "" {
			continue
		}
		fmt.Fprintf(w, "      %s at %s\n", what, e.At.Format(record.DateFormat))
	}
}
