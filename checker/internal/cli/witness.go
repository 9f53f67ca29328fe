package cli

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gokata/checker/internal/session"
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

// dialWitness opens a room for the interview of o on the witness the
// flags or the environment name; nil when they name none. A witness
// that cannot be reached stops the interview before it begins: asked
// for, it must see all of it.
func dialWitness(c *call, f witnessFlags, candidate string) (*witness.Client, error) {
	base := *f.url
	if base == "" {
		base = c.env.get("KATA_WITNESS")
	}
	token := f.tokenOr(c)
	try := "checker interview " + c.kata.ID() + " --witness http://HOST:8080 --witness-token TOKEN"
	switch {
	case base == "" && *f.token != "":
		return nil, &usageError{Msg: "--witness-token is the witness's token: name the witness too (--witness URL)", Try: try}
	case base == "":
		return nil, nil
	case token == "":
		return nil, &usageError{Msg: "--witness needs the token checker serve printed: --witness-token (or KATA_WITNESS_TOKEN)", Try: try}
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
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		token := f.tokenOr(c)
		switch {
		case room == "":
			return nil, &usageError{Msg: "the record names no witness room: the interview ran without --witness", Try: ""}
		case token == "":
			return nil, &usageError{Msg: "reading the witness's copy needs the token checker serve printed (its admin token, if it has one): --witness-token", Try: try}
		}
		cp, err := witness.Fetch(c.ctx, source, room, token)
		if err != nil {
			return nil, &usageError{Msg: err.Error(), Try: ""}
		}
		return cp, nil
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
