package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"gokata/checker/internal/record"
)

// Record is an interview's record as an interviewer reads it again after
// the interview: its scorecard, or a replay grade by grade.
type Record struct{ r *record.Record }

// OpenRecord reads the record at path (relative to dir); a missing or
// malformed one is a UsageError of one line that names what to try.
func OpenRecord(dir, path string) (*Record, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, path)
	}
	r, err := record.Load(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &UsageError{Msg: fmt.Sprintf("%s does not exist", path), Try: "ls .kata/interviews"}
	case err != nil:
		return nil, &UsageError{Msg: fmt.Sprintf("%s: %v", path, err), Try: ""}
	}
	return &Record{r}, nil
}

// Changed reports whether the record is not as the interview wrote it,
// as far as its hash chain can tell.
func (r *Record) Changed() bool { return r.r.Chain().Changed() }

// Scorecard is the record's Markdown scorecard, with the rubric as the
// interviewer filled it in.
func (r *Record) Scorecard() string { return record.Scorecard(r.r) }

// Replay writes the record to w grade by grade, calling next before each.
func (r *Record) Replay(w io.Writer, next func()) { record.Replay(w, r.r, next) }
