// Package catalog finds the katas of a checkout and reads their metadata.
//
// A kata is a directory exercises/NN-slug holding a task README.md, the
// stub's .go files and kata.json, the one source of truth for what is
// public: its title, difficulty, minutes, tags, ask-first questions,
// requirements, bonus follow-ups, declared stub passes and extra imports.
// Its reference, hidden tests, WHY.md and mutants live in
// solutions/NN-slug, and so does reveal.json: what the checker shows only
// on request, the decisions and the hints. Keeping those out of the
// learner's files is what makes a hint asked for (and counted) mean
// something; a candidate kit carries reveal.json inside its checker, with
// the hidden tests.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Item is one requirement or bonus follow-up.
type Item struct {
	ID   string `json:"id"`   // "R1" … or "B1" …
	Text string `json:"text"` // one line, as the README shows it
}

// Hint is one progressive hint and the requirements it helps with.
type Hint struct {
	Covers []string `json:"covers"`
	Text   string   `json:"text"`
}

// StubPass declares a requirement the untouched stub legitimately passes.
type StubPass struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// Meta is the content of kata.json: what the learner may read at once.
type Meta struct {
	Title        string     `json:"title"`
	Difficulty   string     `json:"difficulty"`
	Minutes      int        `json:"minutes"`
	Tags         []string   `json:"tags"`
	Ask          []string   `json:"ask"`
	Requirements []Item     `json:"requirements"`
	Bonus        []Item     `json:"bonus"`
	StubPasses   []StubPass `json:"stubPasses,omitempty"`
	// Imports are what the kata's code may import beyond the gate's
	// default allowlist: a package path ("os/signal"), or one name of a
	// package ("os.Signal").
	Imports []string `json:"imports,omitempty"`
}

// RevealFile is the name, in a kata's solutions directory, of what the
// checker reveals only on request.
const RevealFile = "reveal.json"

// Reveal is the content of reveal.json: what is shown only on request.
// The README repeats the decisions (an interview kit's README keeps them
// back); hints are shown one at a time, and counted.
type Reveal struct {
	Decisions []string `json:"decisions"` // the answers to the ask-first questions that the hidden tests assume
	Hints     []Hint   `json:"hints"`
}

// Kata is one exercise of the checkout.
type Kata struct {
	Meta
	Reveal          // empty when the checkout has no reveal.json for the kata
	Num      int    // 6
	Slug     string // "06-retry"
	Package  string // "retry"
	Exercise string // absolute path of exercises/06-retry
	Solution string // absolute path of solutions/06-retry
}

// ID is the kata's two-digit number, as users type it.
func (k Kata) ID() string { return fmt.Sprintf("%02d", k.Num) }

// Items returns the requirements followed by the bonus follow-ups.
func (k Kata) Items() []Item { return append(append([]Item{}, k.Requirements...), k.Bonus...) }

// HintsFor returns the 1-based numbers of the hints that cover id.
func (k Kata) HintsFor(id string) []int {
	var ns []int
	for i, h := range k.Hints {
		for _, c := range h.Covers {
			if c == id {
				ns = append(ns, i+1)
				break
			}
		}
	}
	return ns
}

// Catalog is the set of katas under one root.
type Catalog struct {
	Root   string   // the checkout: holds go.mod and exercises/
	Katas  []Kata   // ordered by number
	Broken []Broken // katas whose kata.json cannot be read: unusable, the others still are
}

// Broken is a kata that cannot be used: its kata.json is missing or
// damaged, or its reveal.json is damaged.
type Broken struct {
	Kata        // only the names and paths are set
	Err  error  // what is wrong with the file
	File string // the file to restore
}

// ErrNoRoot means no checkout was found above the working directory.
var ErrNoRoot = errors.New("not inside the kata checkout (no go.mod with an exercises/ directory above this directory)")

// FindRoot walks up from dir to the directory holding go.mod and exercises/.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if isFile(filepath.Join(dir, "go.mod")) && isDir(filepath.Join(dir, "exercises")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRoot
		}
		dir = parent
	}
}

var slugRE = regexp.MustCompile(`^(\d\d)-([a-z0-9-]+)$`)

// Load reads every kata under root.
func Load(root string) (*Catalog, error) {
	entries, err := os.ReadDir(filepath.Join(root, "exercises"))
	if err != nil {
		return nil, err
	}
	c := &Catalog{Root: root}
	for _, e := range entries {
		m := slugRE.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		num, _ := strconv.Atoi(m[1])
		k := Kata{
			Num:      num,
			Slug:     e.Name(),
			Package:  strings.ReplaceAll(m[2], "-", ""),
			Exercise: filepath.Join(root, "exercises", e.Name()),
			Solution: filepath.Join(root, "solutions", e.Name()),
		}
		if err := readMeta(&k); err != nil {
			c.Broken = append(c.Broken, Broken{k, err, filepath.Join(k.Exercise, "kata.json")})
			continue
		}
		if err := ReadReveal(&k); err != nil {
			c.Broken = append(c.Broken, Broken{k, err, filepath.Join(k.Solution, RevealFile)})
			continue
		}
		c.Katas = append(c.Katas, k)
	}
	sort.Slice(c.Katas, func(i, j int) bool { return c.Katas[i].Num < c.Katas[j].Num })
	return c, nil
}

// readMeta reads k's kata.json.
func readMeta(k *Kata) error {
	return readJSON(filepath.Join(k.Exercise, "kata.json"), &k.Meta)
}

// ReadReveal reads k's reveal.json from k.Solution, replacing k.Reveal. A
// kata without one (a candidate kit's, before its checker unpacks its
// own) has nothing to reveal; a damaged one is an error.
func ReadReveal(k *Kata) error {
	k.Reveal = Reveal{}
	err := readJSON(filepath.Join(k.Solution, RevealFile), &k.Reveal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// readJSON reads one JSON object with the known fields only from the
// regular file p.
func readJSON(p string, v any) error {
	name := filepath.Base(p)
	if fi, err := os.Stat(p); err != nil {
		return err
	} else if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return fmt.Errorf("%s is not a %s file", p, name)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if dec.More() {
		return fmt.Errorf("%s: more than one JSON value", name)
	}
	return nil
}

// FindBroken resolves what a user typed among the unusable katas.
func (c *Catalog) FindBroken(name string) (Broken, bool) {
	name = strings.TrimSpace(strings.ToLower(name))
	for _, b := range c.Broken {
		if n, err := strconv.Atoi(name); (err == nil && n == b.Num) || name == b.Slug || name == b.Package || name == strings.TrimPrefix(b.Slug, b.ID()+"-") {
			return b, true
		}
	}
	return Broken{}, false
}

// Find resolves what a user typed ("06", "6", "06-retry", "retry").
func (c *Catalog) Find(name string) (Kata, bool) {
	name = strings.TrimSpace(strings.ToLower(name))
	for _, k := range c.Katas {
		if n, err := strconv.Atoi(name); err == nil && n == k.Num {
			return k, true
		}
		if name == k.Slug || name == k.Package || name == strings.TrimPrefix(k.Slug, k.ID()+"-") {
			return k, true
		}
	}
	return Kata{}, false
}

// Names lists the katas as "06-retry" for messages.
func (c *Catalog) Names() string {
	var s []string
	for _, k := range c.Katas {
		s = append(s, k.Slug)
	}
	return strings.Join(s, ", ")
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && !fi.IsDir() }
func isDir(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
