// Package escape makes text that came from outside the checker safe to
// show: an interview record (anyone can write one), a grade pushed to the
// room board, a candidate's returned code and what it prints. In a
// terminal no control character gets through (an ESC sequence could clear
// the screen, retitle the window or plant a link); in Markdown nothing
// becomes HTML, a link or an image, and a table keeps its columns.
//
// Control characters (but newlines and tabs, in text of several lines)
// and invalid UTF-8 are shown as Go escapes (\x1b, \a, \xff), and so are
// the Unicode controls that reorder text on screen.
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Terminal is s with its control characters but newlines and tabs, and
// its invalid UTF-8, shown as Go escapes.
func Terminal(s string) string { return escape(s, "\n\t") }

// Line is Terminal for text meant as one line: a newline is shown
// escaped too.
func Line(s string) string { return escape(s, "\t") }

func escape(s, keep string) string {
	if safe(s, keep) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case control(r) && !strings.ContainsRune(keep, r):
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safe reports whether s needs no escaping: the common case, checked
// without allocating.
func safe(s, keep string) bool {
	for _, r := range s {
		if r == utf8.RuneError || control(r) && !strings.ContainsRune(keep, r) {
			return false
		}
	}
	return true
}

// control reports whether r steers a terminal or the order text is shown
// in: C0 and C1 controls, DEL, and the bidirectional overrides and
// isolates.
func control(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Markdown is s as Markdown that shows s as it reads: its code spans
// (`x`) stay code spans, everything else is text. No HTML, autolink,
// link, image or table cell separator survives: outside code spans
// < > & are written as entities and \ ` [ ] | are escaped with a
// backslash. Lines stay lines (a list stays a list); a code span that
// runs over a line end is put on one line, as Markdown shows it anyway.
func Markdown(s string) string { return markdown(Terminal(s), false) }

// Inline is Markdown for text meant as one line: runs of white space,
// line ends included, become one space.
func Inline(s string) string { return markdown(oneLine(Terminal(s)), false) }

// Cell is Inline for a cell of a Markdown table: a | inside a code span
// is escaped too, as tables require.
func Cell(s string) string { return markdown(oneLine(Terminal(s)), true) }

// Code is s (one line) as a code span, whatever backticks it holds.
func Code(s string) string { return codeSpan(oneLine(Line(s)), false) }

// Block is s as a fenced code block of language lang, fenced so that no
// line of s can end it.
func Block(s, lang string) string {
	s = Terminal(s)
	fence := strings.Repeat("`", max(3, longestRun(s)+1))
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + lang + "\n" + s + fence + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// markdown writes s as text with code spans: a run of n backticks opens a
// span that the next run of exactly n closes; a run that nothing closes
// is text.
func markdown(s string, cell bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			j := strings.IndexByte(s[i:], '`')
			if j < 0 {
				j = len(s) - i
			}
			text(&b, s[i:i+j])
			i += j
			continue
		}
		n := run(s[i:])
		end := closing(s[i+n:], n)
		if end < 0 {
			text(&b, s[i:i+n])
			i += n
			continue
		}
		code := s[i+n : i+n+end]
		b.WriteString(codeSpan(joinLines(code), cell))
		i += n + end + n
	}
	return b.String()
}

// run is the length of the run of backticks s starts with.
func run(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// closing is where in s the first run of exactly n backticks begins, or
// -1.
func closing(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:])
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func longestRun(s string) int {
	longest := 0
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:])
		longest = max(longest, m)
		i += m
	}
	return longest
}

// joinLines puts a code span's lines on one line, as Markdown shows them.
func joinLines(s string) string {
	lines := strings.Split(s, "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = strings.TrimLeft(lines[i], " \t")
	}
	return strings.Join(lines, " ")
}

// codeSpan writes s (one line) as a code span, fenced by more backticks
// than any run inside it.
func codeSpan(s string, cell bool) string {
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	fence := strings.Repeat("`", longestRun(s)+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " " // Markdown strips one space on each side
	}
	return fence + pad + s + pad + fence
}

// text writes s as plain Markdown text. A | is escaped everywhere:
// outside a table it shows as itself.
func text(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '[', ']', '|':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
}
