// Package mutant reads, applies and writes mutants: known-wrong versions of
// a kata's reference solution, each kept as a small patch against the
// reference in solutions/NN-slug/testdata/mutants/NAME.patch, so that what
// a reader sees is the mistake and a change to the reference is made once.
//
// A patch file is a header, then a unified diff:
//
//	// Mistake: pauses with clk.Sleep, so a cancel has to wait until the pause is over.
//	// Fails: R4
//	// Expect: (?i)cancel.*pause
//
//	--- retry.go
//	+++ retry.go
//	@@ -146,17 +146,10 @@
//	 …
//
// The header is every line before the first "--- ": "//" comment lines
// ("// Key: value" for the fields the tools read), and one empty line
// after them. The diff names files of the reference directory without a
// directory (retry.go); each hunk's lines must match the reference exactly,
// with no fuzz: a hunk that matches nowhere is an error naming the mutant,
// the file and the hunk (see [MismatchError]). A hunk may match a few lines
// away from the line its header states, as when lines were added to the
// reference above it; [Mutant.Refresh] writes the patch again with exact
// line numbers.
//
// The mutant's source, as verify grades it and a learner may try it, is the
// reference with the diff applied and the header on top of the diff's first
// file: the header and the package clause (or the package doc comment the
// mutant keeps) are separated by the header's empty line.
package mutant

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gokata/checker/internal/gofiles"
)

// Ext is the extension of a mutant's file.
const Ext = ".patch"

// Dir is where a kata's mutants live, under its solution directory.
func Dir(solution string) string {
	return filepath.Join(solution, "testdata", "mutants")
}

// Mutant is one parsed patch file.
type Mutant struct {
	Name   string // the file name without .patch: clksleep
	Path   string // the patch file
	Header string // the comment lines and the empty line after them, as written
	Files  []FileDiff
}

// Fields returns the header's "// Key: value" lines as a map.
func (m *Mutant) Fields() map[string]string {
	return Fields([]byte(m.Header))
}

// Fields reads the leading "// Key: value" comment lines of a file (a
// mutant's source or patch, a grading fixture): a line of another shape
// ends them.
func Fields(data []byte) map[string]string {
	h := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		l, ok := strings.CutPrefix(l, "// ")
		if !ok {
			break
		}
		if k, v, ok := strings.Cut(l, ": "); ok && !strings.Contains(k, " ") {
			h[k] = strings.TrimSpace(v)
		}
	}
	return h
}

// Parse reads a patch file's content; name is the mutant's name, for
// messages.
func Parse(name string, data []byte) (*Mutant, error) {
	m := &Mutant{Name: name}
	text := string(data)
	i := strings.Index(text, "\n--- ")
	if !strings.HasPrefix(text, "//") || i < 0 {
		return nil, fmt.Errorf("mutant %s: want a header of // comment lines, an empty line, then a unified diff (--- FILE)", name)
	}
	m.Header = text[:i+1]
	if err := checkHeader(m.Header); err != nil {
		return nil, fmt.Errorf("mutant %s: %w", name, err)
	}
	files, err := parseDiff(text[i+1:], strings.Count(m.Header, "\n")+1)
	if err != nil {
		return nil, fmt.Errorf("mutant %s: %w", name, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f.Name] {
			return nil, fmt.Errorf("mutant %s: %s is patched twice; give each file one --- +++ section", name, f.Name)
		}
		seen[f.Name] = true
	}
	m.Files = files
	return m, nil
}

// checkHeader requires "//" lines followed by exactly one empty line.
func checkHeader(h string) error {
	lines := strings.Split(strings.TrimSuffix(h, "\n"), "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" {
		return errors.New("the header (// lines) must end with one empty line before the diff")
	}
	for i, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "//") {
			return fmt.Errorf("line %d of the header is not a // comment: %q", i+1, l)
		}
	}
	return nil
}

// Load reads and parses one patch file.
func Load(path string) (*Mutant, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(strings.TrimSuffix(filepath.Base(path), Ext), data)
	if err != nil {
		return nil, err
	}
	m.Path = path
	return m, nil
}

// Paths lists the patch files of the kata whose solution directory is
// solution, sorted.
func Paths(solution string) ([]string, error) {
	ps, err := filepath.Glob(filepath.Join(Dir(solution), "*"+Ext))
	sort.Strings(ps)
	return ps, err
}

// Source is one file of a mutant as the build sees it.
type Source struct {
	Name string // in the reference directory: retry.go
	Data []byte
}

// Apply applies the mutant to the reference files in dir and returns the
// files it changes, in the diff's order, the header on top of the first.
// A patch that does not apply is an error naming the mutant, the file and
// the hunk.
func (m *Mutant) Apply(dir string) ([]Source, error) {
	var out []Source
	for i, fd := range m.Files {
		ref, err := os.ReadFile(filepath.Join(dir, fd.Name))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("mutant %s: patches %s, which the reference does not have", m.Name, fd.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("mutant %s: %w", m.Name, err)
		}
		data, err := fd.apply(ref)
		if err != nil {
			return nil, fmt.Errorf("mutant %s: %w", m.Name, err)
		}
		if i == 0 {
			data = append([]byte(m.Header), data...)
		}
		out = append(out, Source{fd.Name, data})
	}
	return out, nil
}

// SplitHeader cuts a mutant's source into its header (the leading "//"
// lines and the empty line after them) and the code that follows.
func SplitHeader(src []byte) (header, code []byte, err error) {
	const want = "a mutant starts with its header: // Mistake:, // Fails:, // Expect: lines, then an empty line"
	rest, n := src, 0
	for bytes.HasPrefix(rest, []byte("//")) {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, nil, errors.New(want)
		}
		rest, n = rest[i+1:], n+1
	}
	switch {
	case n == 0:
		return nil, nil, errors.New(want)
	case !bytes.HasPrefix(rest, []byte("\n")):
		l, _, _ := bytes.Cut(rest, []byte("\n"))
		return nil, nil, fmt.Errorf("%s (line %d is %q)", want, n+1, l)
	}
	cut := len(src) - len(rest) + 1
	return src[:cut], src[cut:], nil
}

// Format writes a patch file: the header, then the diff of each file from
// the reference (ref: name → content) to the mutant's (mut, with the header
// on top of the first file, as Apply returns it). Files the mutant leaves
// as they are get no section.
func Format(ref map[string][]byte, mut []Source) ([]byte, error) {
	if len(mut) == 0 {
		return nil, errors.New("a mutant changes at least one file")
	}
	header, code, err := SplitHeader(mut[0].Data)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Write(header)
	changed := 0
	for i, s := range mut {
		r, ok := ref[s.Name]
		if !ok {
			return nil, fmt.Errorf("%s is not a file of the reference", s.Name)
		}
		data := s.Data
		if i == 0 {
			data = code
		}
		hs := diff(splitLines(r), splitLines(data))
		if len(hs) == 0 {
			continue
		}
		changed++
		writeFileDiff(&b, FileDiff{Name: s.Name, Hunks: hs})
	}
	if changed == 0 {
		return nil, errors.New("the mutant's code is the reference's: make the mistake first")
	}
	return []byte(b.String()), nil
}

// Refresh returns the patch written again against the reference in dir:
// the same header and the same resulting sources, hunks at their exact
// lines. It is what a patch that applies at an offset becomes.
func (m *Mutant) Refresh(dir string) ([]byte, error) {
	srcs, err := m.Apply(dir)
	if err != nil {
		return nil, err
	}
	ref := map[string][]byte{}
	for _, s := range srcs {
		if ref[s.Name], err = os.ReadFile(filepath.Join(dir, s.Name)); err != nil {
			return nil, err
		}
	}
	return Format(ref, srcs)
}

// Reference reads the reference's source files (its .go files that are not
// tests) in the kata's solution directory dir, sorted by name. dir is
// solutions/NN-slug in the repository; in a candidate kit it is where the
// kit's checker unpacked what it carries, laid out the same way, so one
// code path reads both.
func Reference(dir string) ([]Source, error) {
	files, err := gofiles.Regular(dir, false)
	if err != nil {
		return nil, err
	}
	var out []Source
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, Source{filepath.Base(f), data})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no reference solution in %s", dir)
	}
	return out, nil
}

// All loads every mutant of the kata whose solution directory is dir (see
// Reference), sorted by name; a patch that cannot be read is an error.
func All(dir string) ([]*Mutant, error) {
	paths, err := Paths(dir)
	if err != nil {
		return nil, err
	}
	var ms []*Mutant
	for _, p := range paths {
		m, err := Load(p)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}
