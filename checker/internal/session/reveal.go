package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/state"
)

// Hint notes that hint n of kata k (from 1) is shown, and returns n; n 0
// is the next hint not yet shown. A kata without hints is the caller's
// to tell.
func (c *Checkout) Hint(k catalog.Kata, n int) (int, error) {
	shown := c.progress().Kata(k.Slug).HintsShown
	switch {
	case n == 0:
		n = min(shown+1, len(k.Hints))
	case n < 1 || n > len(k.Hints):
		return 0, &UsageError{Msg: fmt.Sprintf("kata %s has hints 1 to %d", k.ID(), len(k.Hints)), Try: fmt.Sprintf("make hint EX=%s N=1", k.ID())}
	}
	c.saved(state.Progress{Root: c.Root}.RevealHint(k.Slug, n, c.now().Truncate(time.Second), "hint"))
	return n, nil
}

// ReadDecisions notes that the learner read kata k's decisions: an
// interview's scorecard says whether that came before the interview
// showed them. It reports whether the reading counts as early: no
// interview had shown them before the first reading.
func (c *Checkout) ReadDecisions(k catalog.Kata) (early bool) {
	now := c.now().Truncate(time.Second) // in its zone, as the record shows it
	c.saved(state.Progress{Root: c.Root}.ReadDecisions(k.Slug, now))
	return c.progress().Kata(k.Slug).ReadEarly()
}

// Reference is what the solution verb shows of a kata.
type Reference struct {
	Locked    bool   // not passed, not given up: nothing is shown
	MoreHints bool   // Locked, and hints are left to show
	Files     []File // the reference's .go files, then WHY.md; none when this copy has no reference
}

// File is a file shown, and its content.
type File struct {
	Path string
	Data []byte
}

// Solution is kata k's reference and WHY.md, once the learner's code has
// passed, or after a give-up (giveUp now), which is remembered.
func (c *Checkout) Solution(k catalog.Kata, giveUp bool) (Reference, error) {
	p := c.progress().Kata(k.Slug)
	if !p.PassedOnce && !p.GaveUp && !giveUp {
		return Reference{Locked: true, MoreHints: p.HintsShown < len(k.Hints)}, nil
	}
	paths, err := filepath.Glob(filepath.Join(k.Solution, "*.go"))
	if err != nil {
		return Reference{}, err
	}
	sort.Strings(paths)
	var shown []string
	for _, f := range paths {
		if !strings.HasSuffix(f, "_test.go") {
			shown = append(shown, f)
		}
	}
	if len(shown) == 0 {
		return Reference{}, nil
	}
	c.saved(state.Progress{Root: c.Root}.ShowSolution(k.Slug, c.now().Truncate(time.Second), giveUp))
	why := filepath.Join(k.Solution, "WHY.md")
	if _, err := os.Stat(why); err == nil {
		shown = append(shown, why)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Reference{}, err
	}
	var ref Reference
	for _, f := range shown {
		data, err := os.ReadFile(f)
		if err != nil {
			return Reference{}, err
		}
		ref.Files = append(ref.Files, File{f, data})
	}
	return ref, nil
}

// MaxNote is the longest note, in characters.
const MaxNote = 300

// Note keeps an interviewer's note on kata k, made now: the record of an
// interview of k under way lists it at its time (the candidate's screen
// does not show it). A note is one line of plain text, at most MaxNote
// characters. It returns when the note was made.
func (c *Checkout) Note(k catalog.Kata, text string) (time.Time, error) {
	text = strings.TrimSpace(text)
	try := fmt.Sprintf(`make note EX=%s TEXT="asked what happens on a cancel"`, k.ID())
	switch {
	case text == "":
		return time.Time{}, &UsageError{Msg: "a note needs its text", Try: try}
	case !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl):
		return time.Time{}, &UsageError{Msg: "a note is one line of plain text: this one holds a line break, a tab or another control character", Try: try}
	case utf8.RuneCountInString(text) > MaxNote:
		return time.Time{}, &UsageError{Msg: fmt.Sprintf("a note is at most %d characters; this one has %d", MaxNote, utf8.RuneCountInString(text)), Try: try}
	}
	now := c.now().Truncate(time.Second)
	if err := (state.Progress{Root: c.Root}).AddNote(k.Slug, text, now); err != nil {
		return time.Time{}, err
	}
	return now, nil
}
