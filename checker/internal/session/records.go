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
)

// Record is an interview's record as an interviewer reads it again after
// the interview: its scorecard, or a replay grade by grade. ref is the
// kata's reference in the checkout it is read in, nil when there is none.
type Record struct {
	r   *record.Record
	ref record.Reference
}

// OpenRecord reads the record at path (relative to dir), and the kata's
// reference from the checkout dir is in, if any; a missing or malformed
// record is a UsageError of one line that names what to try.
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
	var ref record.Reference
	if root, err := catalog.FindRoot(dir); err == nil {
		ref = referenceOnDisk(root, r.Kata)
	}
	return &Record{r, ref}, nil
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

// Changed reports whether the record is not as the interview wrote it,
// as far as its hash chain can tell.
func (r *Record) Changed() bool { return r.r.Chain().Changed() }

// Scorecard is the record's Markdown scorecard, with the rubric as the
// interviewer filled it in.
func (r *Record) Scorecard() string { return record.Scorecard(r.r, r.ref) }

// Replay writes the record to w grade by grade, calling next before each.
func (r *Record) Replay(w io.Writer, next func()) { record.Replay(w, r.r, next) }

// ReplayPages is the replay cut into pages, one per grade (record.ReplayPages).
func (r *Record) ReplayPages() (head string, pages []record.Page) { return record.ReplayPages(r.r) }
