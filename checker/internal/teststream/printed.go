package teststream

import (
	"bytes"
	"regexp"
	"unicode/utf8"

	"gokata/checker/internal/escape"
)

// Printed is what the code under test printed during a test (and its
// subtests), on stdout or stderr, with fmt or the log package: every line
// of the test's output that the testing package, the race detector and the
// runtime did not write. Those are told apart by their shape:
//
//   - t.Log and t.Error messages, the hidden tests' and the harness's, start
//     with four spaces and the file:line of the caller ("    retry_test.go:41: "),
//     and their continuation lines with eight spaces;
//   - a race report runs from a line of '=' followed by "WARNING: DATA RACE"
//     to the next line of '=';
//   - a line that starts with "panic: " or "fatal error: " begins the
//     runtime's dump of a dying process: everything after it is the dump.
//
// A line printed without its newline ends where the next test message or
// frame begins. Only the first and the last PrintedLines lines are kept,
// each cut to MaxPrintedLine bytes; Cut counts the lines dropped between
// them. Control characters are shown escaped (a terminal must not obey
// them).
type Printed struct {
	Head []string `json:"head"`
	Cut  int      `json:"cut,omitempty"`
	Tail []string `json:"tail,omitempty"`
}

// Lines is how many lines Printed holds, Cut not included.
func (p Printed) Lines() int { return len(p.Head) + len(p.Tail) }

// Empty reports whether nothing was printed.
func (p Printed) Empty() bool { return p.Lines() == 0 }

// IsZero reports whether nothing was printed (for encoding/json's omitzero).
func (p Printed) IsZero() bool { return p.Total() == 0 }

// Total is how many lines were printed.
func (p Printed) Total() int { return p.Lines() + p.Cut }

const (
	// PrintedLines is how many lines Printed keeps from the start and,
	// separately, from the end of what was printed.
	PrintedLines = 10
	// MaxPrintedLine is the longest line Printed keeps, in bytes; longer
	// ones end in "…".
	MaxPrintedLine = 300
)

// printed collects Printed from a test's output as it arrives, piece by
// piece: memory stays bounded however much is printed, and a flood costs
// no allocation per line.
type printed struct {
	head      []line
	tail      [PrintedLines]line // a ring: the oldest line is at next
	next      int
	tailLen   int
	cut       int
	line      []byte // the line being read, up to MaxPrintedLine bytes
	long      bool   // the line being read is longer than that
	inMessage bool   // the last line was (part of) a test message
	rule      bool   // the last line was a row of '=': a race report may start
	inRace    bool
	inDump    bool
}

// line is one line kept, raw.
type line struct {
	text []byte
	long bool // cut at MaxPrintedLine
}

var (
	rule      = []byte("==================")
	messageIn = regexp.MustCompile(`    \S+\.go:\d+: `)
)

// add takes the next piece of the test's output.
func (p *printed) add(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		piece := b
		if i >= 0 {
			piece = b[:i]
		}
		if room := MaxPrintedLine - len(p.line); room < len(piece) {
			p.line = append(p.line, piece[:max(room, 0)]...)
			p.long = true
		} else {
			p.line = append(p.line, piece...)
		}
		if i < 0 {
			return
		}
		p.flush()
		b = b[i+1:]
	}
}

// flush ends the line being read: a newline came, or a frame, which always
// starts a line of its own.
func (p *printed) flush() {
	if len(p.line) == 0 && !p.long {
		return
	}
	p.classify(bytes.TrimSuffix(p.line, []byte("\r")), p.long)
	p.line, p.long = p.line[:0], false
}

// classify decides whether one line is the code's, and keeps it if so.
func (p *printed) classify(l []byte, long bool) {
	if p.inDump {
		return
	}
	if p.rule {
		p.rule = false
		if bytes.HasPrefix(l, []byte("WARNING: DATA RACE")) {
			p.inRace = true
			return
		}
		p.keep(rule, false) // the code printed it
	}
	switch {
	case p.inRace:
		p.inRace = !bytes.Equal(l, rule)
		return
	case bytes.Equal(l, rule):
		p.rule = true
		return
	case bytes.HasPrefix(l, []byte("    ")) && MessageAt(l) == 0:
		p.inMessage = true
		return
	case p.inMessage && bytes.HasPrefix(l, []byte("        ")):
		return
	}
	p.inMessage = false
	if bytes.HasPrefix(l, []byte("panic: ")) || bytes.HasPrefix(l, []byte("fatal error: ")) {
		p.inDump = true
		return
	}
	if at := MessageAt(l); at > 0 {
		// Printed without a newline, then a test message on the same line.
		p.inMessage = true
		l, long = l[:at], false
	}
	p.keep(l, long)
}

// MessageAt is where a test message ("    retry_test.go:41: ") begins in
// line l, or -1: at 0, or further on when the code printed something
// without a newline just before it.
func MessageAt(l []byte) int {
	if !bytes.Contains(l, []byte(".go:")) { // most lines: no need for the regexp
		return -1
	}
	if loc := messageIn.FindIndex(l); loc != nil {
		return loc[0]
	}
	return -1
}

// keep adds a line of the code's to the head, or to the tail, pushing the
// oldest line of the tail into the cut.
func (p *printed) keep(l []byte, long bool) {
	if len(p.head) < PrintedLines {
		p.head = append(p.head, line{bytes.Clone(l), long})
		return
	}
	slot := &p.tail[p.next]
	p.next = (p.next + 1) % PrintedLines
	if p.tailLen == PrintedLines {
		p.cut++
	} else {
		p.tailLen++
	}
	slot.text, slot.long = append(slot.text[:0], l...), long
}

// finish flushes what is left at the end of the output.
func (p *printed) finish() {
	p.flush()
	if p.rule {
		p.rule = false
		p.keep(rule, false)
	}
}

// result is what was kept, as it is shown.
func (p *printed) result() Printed {
	var out Printed
	for _, l := range p.head {
		out.Head = append(out.Head, l.show())
	}
	for i := range p.tailLen {
		out.Tail = append(out.Tail, p.tail[(p.next-p.tailLen+i+PrintedLines)%PrintedLines].show())
	}
	out.Cut = p.cut
	return out
}

// show is the line as it is shown: its control characters escaped, so
// that printing a line cannot steer a terminal.
func (l line) show() string {
	if l.long {
		return escape.Line(cutRune(string(l.text))) + "…"
	}
	return escape.Line(string(l.text))
}

// cutRune drops an incomplete UTF-8 sequence from the end of s, left by
// cutting a long line at a byte count.
func cutRune(s string) string {
	for k := 1; k <= utf8.UTFMax && k <= len(s); k++ {
		if utf8.RuneStart(s[len(s)-k]) {
			if !utf8.FullRuneInString(s[len(s)-k:]) {
				return s[:len(s)-k]
			}
			break
		}
	}
	return s
}
