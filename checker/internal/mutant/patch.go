package mutant

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// line is one line of a file: its text without the newline, and whether a
// newline ends it (only the last line of a file may lack one).
type line struct {
	text string
	eol  bool
}

// splitLines cuts data into lines.
func splitLines(data []byte) []line {
	var ls []line
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			ls = append(ls, line{string(data), false})
			break
		}
		ls = append(ls, line{string(data[:i]), true})
		data = data[i+1:]
	}
	return ls
}

func joinLines(ls []line) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l.text)
		if l.eol {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// FileDiff is the change a patch makes to one file of the reference.
type FileDiff struct {
	Name  string // the file's name in the reference directory: retry.go
	Hunks []Hunk
}

// Hunk is one "@@ -a,b +c,d @@" section of a unified diff.
type Hunk struct {
	At       int // line of the "@@" in the patch file, 1-based, for messages
	OldStart int // first line of the reference it covers, 1-based (the line before it when OldCount is 0)
	OldCount int
	NewStart int
	NewCount int
	Ops      []Op
}

// Op is one line of a hunk: ' ' (context), '-' (only in the reference) or
// '+' (only in the mutant).
type Op struct {
	Kind byte
	line
}

func (h Hunk) header() string {
	return fmt.Sprintf("@@ -%s +%s @@", span(h.OldStart, h.OldCount), span(h.NewStart, h.NewCount))
}

func span(start, count int) string {
	if count == 1 {
		return strconv.Itoa(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// parseDiff reads the unified diff that follows a mutant's header; first
// is the number of the diff's first line in the patch file. Every hunk must
// hold exactly as many lines as its "@@" line says.
func parseDiff(text string, first int) ([]FileDiff, error) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	d := &diffReader{lines: lines, n: first - 1}
	var files []FileDiff
	for len(d.lines) > 0 {
		l, _ := d.next()
		if strings.TrimSpace(l) == "" {
			continue
		}
		fd, err := d.file(l)
		if err != nil {
			return nil, err
		}
		files = append(files, fd)
	}
	return files, nil
}

// diffReader hands out a diff's lines one at a time, and knows the number
// of the last one in the patch file, for messages.
type diffReader struct {
	lines []string // still to read, each with its newline
	n     int
}

// next reads a line; false when none is left.
func (d *diffReader) next() (string, bool) {
	if len(d.lines) == 0 {
		return "", false
	}
	l := d.lines[0]
	d.lines = d.lines[1:]
	d.n++
	return l, true
}

// at reports whether the next line starts with prefix.
func (d *diffReader) at(prefix string) bool {
	return len(d.lines) > 0 && strings.HasPrefix(d.lines[0], prefix)
}

// file reads one file's diff, whose "--- NAME" line l was just read: the
// "+++ NAME" line, then its hunks, at least one.
func (d *diffReader) file(l string) (FileDiff, error) {
	oldName, ok := fileName(l, "--- ")
	if !ok {
		return FileDiff{}, fmt.Errorf("line %d: want a file header (--- NAME), got %q", d.n, strings.TrimRight(l, "\n"))
	}
	l, _ = d.next()
	newName, ok := fileName(l, "+++ ")
	if !ok || newName != oldName {
		return FileDiff{}, fmt.Errorf("line %d: want +++ %s after --- %s", d.n, oldName, oldName)
	}
	if oldName == "" || strings.ContainsAny(oldName, `/\`) || oldName == "/dev/null" {
		return FileDiff{}, fmt.Errorf("line %d: %q: a patch changes files of the reference, named without a directory", d.n, oldName)
	}
	fd := FileDiff{Name: oldName}
	for d.at("@@ ") {
		l, _ = d.next()
		h, err := d.hunk(strings.TrimRight(l, "\n"))
		if err != nil {
			return FileDiff{}, err
		}
		fd.Hunks = append(fd.Hunks, h)
	}
	if len(fd.Hunks) == 0 {
		return FileDiff{}, fmt.Errorf("line %d: %s has no hunk (@@ -a,b +c,d @@)", d.n, oldName)
	}
	return fd, nil
}

// opLines is how many lines of the reference and of the mutant an op of
// each kind covers.
var opLines = map[byte][2]int{' ': {1, 1}, '-': {1, 0}, '+': {0, 1}}

// hunk reads one hunk, whose "@@" line header was just read, up to as
// many lines of the reference and of the mutant as header announces.
func (d *diffReader) hunk(header string) (Hunk, error) {
	h, err := parseHunkHeader(header)
	if err != nil {
		return Hunk{}, fmt.Errorf("line %d: %w", d.n, err)
	}
	h.At = d.n
	old, neu := 0, 0
	for old < h.OldCount || neu < h.NewCount {
		op, err := d.op(h.At)
		if err != nil {
			return Hunk{}, err
		}
		c := opLines[op.Kind]
		old, neu = old+c[0], neu+c[1]
		if old > h.OldCount || neu > h.NewCount {
			return Hunk{}, fmt.Errorf("line %d: more lines than the hunk at line %d announces (%s)", d.n, h.At, h.header())
		}
		if d.at(`\ `) { // "\ No newline at end of file"
			d.next()
			op.eol = false
		}
		h.Ops = append(h.Ops, op)
	}
	return h, nil
}

// op reads one line of the hunk at line at: context, removed or added.
func (d *diffReader) op(at int) (Op, error) {
	l, ok := d.next()
	if !ok {
		return Op{}, fmt.Errorf("line %d: the patch ends inside the hunk at line %d", d.n, at)
	}
	body, eol := strings.CutSuffix(l, "\n")
	if body == "" && eol { // an empty context line whose space was trimmed
		body = " "
	}
	op := Op{Kind: body[0], line: line{body[1:], true}}
	if _, ok := opLines[op.Kind]; !ok {
		return Op{}, fmt.Errorf("line %d: a hunk line starts with ' ', '-' or '+', not %q", d.n, op.Kind)
	}
	return op, nil
}

// fileName reads "--- NAME" (or "+++ NAME"), with an optional tab and
// timestamp after the name.
func fileName(l, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), prefix)
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "\t")
	return strings.TrimSpace(name), true
}

func parseHunkHeader(l string) (Hunk, error) {
	var h Hunk
	bad := fmt.Errorf("%q is not a hunk header like @@ -146,17 +146,10 @@", l)
	rest, ok := strings.CutPrefix(l, "@@ -")
	if !ok {
		return h, bad
	}
	ranges, _, ok := strings.Cut(rest, " @@")
	if !ok {
		return h, bad
	}
	oldR, newR, ok := strings.Cut(ranges, " +")
	if !ok {
		return h, bad
	}
	var err1, err2 error
	h.OldStart, h.OldCount, err1 = parseRange(oldR)
	h.NewStart, h.NewCount, err2 = parseRange(newR)
	if err1 != nil || err2 != nil {
		return h, bad
	}
	return h, nil
}

func parseRange(s string) (start, count int, err error) {
	a, b, found := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("bad range %q", s)
	}
	count = 1
	if found {
		if count, err = strconv.Atoi(b); err != nil || count < 0 {
			return 0, 0, fmt.Errorf("bad range %q", s)
		}
	}
	return start, count, nil
}

// MismatchError is a hunk whose lines are nowhere in the reference file:
// the reference changed since the patch was made.
type MismatchError struct {
	File string // the reference file
	Hunk Hunk
	Want string // the first line of the hunk that differs at its stated place
	Got  string // what the reference has there ("" past its end)
	Line int    // that line of the reference
}

func (e *MismatchError) Error() string {
	msg := fmt.Sprintf("%s: the hunk at line %d of the patch (%s) does not match the reference", e.File, e.Hunk.At, e.Hunk.header())
	if e.Line > 0 {
		msg += fmt.Sprintf(": its line %d is %q, the patch expects %q", e.Line, e.Got, e.Want)
	}
	return msg
}

// apply applies fd to src. Every context and removed line must match the
// reference exactly (no fuzz). A hunk is looked for at the line its header
// states first, then at the nearest place after the previous hunk where
// all its lines match (an offset, as when lines were added to the
// reference above it); the hunks of a file must come in order.
func (fd FileDiff) apply(src []byte) ([]byte, error) {
	ref := splitLines(src)
	var out []line
	pos := 0 // next reference line not yet copied
	for _, h := range fd.Hunks {
		var old, neu []line
		for _, op := range h.Ops {
			if op.Kind != '+' {
				old = append(old, op.line)
			}
			if op.Kind != '-' {
				neu = append(neu, op.line)
			}
		}
		want := h.OldStart - 1
		if h.OldCount == 0 {
			want = h.OldStart
		}
		at := find(ref, old, want, pos)
		if at < 0 {
			return nil, mismatch(fd.Name, h, ref, old, max(want, pos))
		}
		out = append(out, ref[pos:at]...)
		out = append(out, neu...)
		pos = at + len(old)
	}
	out = append(out, ref[pos:]...)
	return joinLines(out), nil
}

// find returns where old lies in ref at or after from, nearest to want;
// -1 when nowhere.
func find(ref, old []line, want, from int) int {
	for d := 0; ; d++ {
		lo, hi := want-d, want+d
		if lo < from && hi+len(old) > len(ref) {
			return -1
		}
		if lo >= from && matches(ref, old, lo) {
			return lo
		}
		if d > 0 && hi >= from && matches(ref, old, hi) {
			return hi
		}
	}
}

func matches(ref, old []line, at int) bool {
	if at < 0 || at+len(old) > len(ref) {
		return false
	}
	for i, l := range old {
		if ref[at+i] != l {
			return false
		}
	}
	return true
}

// mismatch describes the first line where the hunk differs from the
// reference at its stated place.
func mismatch(file string, h Hunk, ref, old []line, at int) error {
	e := &MismatchError{File: file, Hunk: h}
	for i, l := range old {
		got, n := "", at+i
		if n < len(ref) {
			got = ref[n].text
			if ref[n] == l {
				continue
			}
			if ref[n].text == l.text {
				got += " (without the newline the patch expects, or with one it does not)"
			}
		}
		e.Want, e.Got, e.Line = l.text, got, n+1
		break
	}
	return e
}
