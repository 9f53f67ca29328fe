package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/record"
	"gokata/checker/internal/witness"
)

// Record is an interview's record as an interviewer reads it again after
// the interview: its scorecard, or a replay grade by grade. ref is the
// kata's reference in the checkout it is read in, nil when there is none.
type Record struct {
	r    *record.Record
	ref  record.Reference
	data []byte // as read from its file
}

// OpenRecord reads the record at path (relative to dir), and the kata's
// reference from the checkout dir is in, if any; a missing or malformed
// record is a UsageError of one line that names what to try.
func OpenRecord(dir, path string) (*Record, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, path)
	}
	data, err := record.Read(abs)
	var r *record.Record
	if err == nil {
		r, err = record.Parse(data)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &UsageError{Msg: fmt.Sprintf("%s does not exist", path), Try: "ls .kata/interviews"}
	case err != nil:
		return nil, &UsageError{Msg: fmt.Sprintf("%s: %v", path, err), Try: ""}
	}
	var ref record.Reference
	if root, err := catalog.FindRoot(dir); err == nil {
		ref = referenceOnDisk(root, r.Kata)
	}
	return &Record{r, ref, data}, nil
}

// Witness compares the record with c, its witness's copy: the scorecard
// then says what the comparison found.
func (r *Record) Witness(c *witness.Copy) error {
	diffs, err := witness.Compare(r.data, c)
	if err != nil {
		return err
	}
	r.r.Witnessed = &record.Witnessed{Events: len(c.Events), Differences: diffs}
	return nil
}

// WitnessRoom is where the record says a witness kept its copy: "" when
// it names none.
func (r *Record) WitnessRoom() (url, room string) {
	if w := r.r.Witness; w != nil {
		return w.URL, w.Room
	}
	return "", ""
}

// Differs reports whether the record is not as the interview wrote it:
// its hash chain is broken, or it differs from its witness's copy.
func (r *Record) Differs() bool {
	return r.r.Chain().Changed() || (r.r.Witnessed != nil && len(r.r.Witnessed.Differences) > 0)
}

// referenceOnDisk is the reference solution of kata slug in the checkout at
// root: the .go files of solutions/SLUG/ that are not tests, for the
// scorecard to compare a candidate's code with. It is nil where there is
// none: in a candidate kit (no solutions/ on disk), or when slug, read
// from a record, names no kata there.
func referenceOnDisk(root, slug string) record.Reference {
	entries, err := os.ReadDir(filepath.Join(root, "solutions"))
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if e.Name() != slug || !e.IsDir() {
			continue
		}
		srcs, err := mutant.Reference(filepath.Join(root, "solutions", slug))
		if err != nil {
			return nil
		}
		ref := record.Reference{}
		for _, s := range srcs {
			ref[s.Name] = string(s.Data)
		}
		return ref
	}
	return nil
}

// Scorecard is the record's Markdown scorecard, with the rubric as the
// interviewer filled it in.
func (r *Record) Scorecard() string { return record.Scorecard(r.r, r.ref) }

// Replay writes the record to w grade by grade, calling next before each.
func (r *Record) Replay(w io.Writer, next func()) { record.Replay(w, r.r, next) }

// ReplayPages is the replay cut into pages, one per grade (record.ReplayPages).
func (r *Record) ReplayPages() (head string, pages []record.Page) { return record.ReplayPages(r.r) }
