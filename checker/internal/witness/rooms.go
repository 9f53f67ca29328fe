package witness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"gokata/checker/internal/record"
)

// Rooms are the rooms a take-home kit's checks send their grades to, one
// per kata, kept in the kit's .kata/RoomsFile so that every check and
// watch of a kata goes to the same room.
type Rooms struct {
	URL   string          `json:"url"`
	Rooms map[string]Room `json:"rooms"` // by kata slug
}

// Room is one room and its token, and the facts of the progress state
// sent to it so far (hints read, a give-up…), each as FactKey says.
type Room struct {
	Room  string   `json:"room"`
	Token string   `json:"token"`
	Sent  []string `json:"sent,omitempty"`
}

// FactKey names a fact of the progress state, to send it once.
func FactKey(e record.Event) string {
	return fmt.Sprintf("%s %s %d %d %s %s", e.Kind, e.At.UTC().Format(time.RFC3339Nano), e.Hint, e.Question, e.Via, e.Note)
}

// RoomsFile is where, in a checkout's .kata/, its Rooms are kept.
const RoomsFile = "witness.json"

// ReadRooms reads the Rooms kept in the checkout dir's .kata/; none (and
// no error) when there is no such file. A link, a file that is not
// regular or larger than 64 KiB, or one that is not Rooms is an error.
func ReadRooms(dir string) (*Rooms, error) {
	path := filepath.Join(dir, ".kata", RoomsFile)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Rooms{Rooms: map[string]Room{}}, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > 64<<10:
		return nil, fmt.Errorf("%s is larger than a file of witness rooms can be", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Rooms
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s cannot be read: %s", path, shortJSONError(err))
	}
	if r.Rooms == nil {
		r.Rooms = map[string]Room{}
	}
	return &r, nil
}

// Save writes the Rooms into the checkout dir's .kata/.
func (r *Rooms) Save(dir string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, ".kata"), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".kata", RoomsFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ".kata", RoomsFile))
}
