package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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

// checkLine checks text, what ("a note"), as one line of plain text of at
// most MaxNote characters; try is what to run instead.
func checkLine(what, text, try string) error {
	switch {
	case text == "":
		return &UsageError{Msg: what + " needs its text", Try: try}
	case !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl):
		return &UsageError{Msg: what + " is one line of plain text: this one holds a line break, a tab or another control character", Try: try}
	case utf8.RuneCountInString(text) > MaxNote:
		return &UsageError{Msg: fmt.Sprintf("%s is at most %d characters; this one has %d", what, MaxNote, utf8.RuneCountInString(text)), Try: try}
	}
	return nil
}

// Asked ticks the questions the candidate asked about kata k, now: each
// of args is an Ask-first question's number ("2", or "1,3"), or, when
// they are not all numbers, args are the words of another question. The
// record of an interview of k under way lists them at their time.
func (c *Checkout) Asked(k catalog.Kata, args []string) (time.Time, []state.Asked, error) {
	now := c.now().Truncate(time.Second)
	var asked []state.Asked
	for _, a := range args {
		for _, f := range strings.FieldsFunc(a, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
			n, err := strconv.Atoi(f)
			if err != nil {
				asked = nil
				break
			}
			if n < 1 || n > len(k.Ask) {
				return time.Time{}, nil, &UsageError{Msg: fmt.Sprintf("%s has Ask-first questions 1 to %d; there is no question %d", k.Slug, len(k.Ask), n), Try: fmt.Sprintf("make asked EX=%s (lists them)", k.ID())}
			}
			asked = append(asked, state.Asked{At: now, Question: n})
		}
		if asked == nil {
			break
		}
	}
	if asked == nil {
		text := strings.TrimSpace(strings.Join(args, " "))
		if err := checkLine("a question", text, fmt.Sprintf(`make asked EX=%s Q=2, or TEXT="what if op panics?"`, k.ID())); err != nil {
			return time.Time{}, nil, err
		}
		asked = []state.Asked{{At: now, Text: text}}
	}
	if err := (state.Progress{Root: c.Root}).AddAsked(k.Slug, asked); err != nil {
		return time.Time{}, nil, err
	}
	return now, asked, nil
}

// MaxNote is the longest note, in characters.
const MaxNote = 300

// Note keeps an interviewer's note on kata k, made now: the record of an
// interview of k under way lists it at its time (the candidate's screen
// does not show it). A note is one line of plain text, at most MaxNote
// characters. It returns when the note was made.
func (c *Checkout) Note(k catalog.Kata, text string) (time.Time, error) {
	text = strings.TrimSpace(text)
	if err := checkLine("a note", text, fmt.Sprintf(`make note EX=%s TEXT="asked what happens on a cancel"`, k.ID())); err != nil {
		return time.Time{}, err
	}
	now := c.now().Truncate(time.Second)
	if err := (state.Progress{Root: c.Root}).AddNote(k.Slug, text, now); err != nil {
		return time.Time{}, err
	}
	return now, nil
}
