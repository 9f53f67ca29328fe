// Package teststream decodes what a Go test binary prints when it runs with
// -test.v=test2json: the same stream cmd/test2json turns into JSON, read
// here directly so that no extra process is needed. Lines that begin with
// the ^V (0x16) marker frame the tests ("=== RUN   TestX", "--- PASS: TestX
// (0.01s)", the final "PASS" or "FAIL"); every other line is output of the
// test named last.
//
// The code under test shares the binary's stdout, so it can print the
// marker too, and without a newline: a frame is what follows the last
// marker of a line, everything before it is output. Frames that cannot come from the testing package are forged:
// a test starting while another one runs, a result for a test that is not
// running, a final PASS or FAIL while a test runs. They are kept as output,
// never obeyed, and recorded against the test that was running (Forged).
//
// The harness's receipts, the proof that a test really ran, are frames too
// ("receipt …"): they are collected in the order printed, for the caller
// to verify.
//
// Output is kept per test up to a limit, its head and its tail, so a test
// that floods its output cannot exhaust memory and its final failure message
// is still there; what is cut from the middle is counted. Apart from it, the
// lines that the code under test printed itself (fmt, log) are picked out
// of each test's output, their first and last few kept ([Test.Printed]).
package teststream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gokata/internal/receipt"
)

const marker = "\x16"

// maxReceipts bounds the receipts kept: a run has one per test it ran, and
// one more.
const maxReceipts = 1 << 16

// Test is what the stream said about one test.
type Test struct {
	Name    string
	Action  string   // "fail" if any run failed, else the last run's "pass" or "skip"; "" if it never finished
	Results []string // one per finished run ("pass", "fail", "skip"), for -test.count > 1
	open    bool     // started and not finished
	Elapsed float64  // seconds
	out     capped
	subs    []*Test // its subtests (t.Run), in the order they started
	root    *Test   // the top-level test it belongs to (itself if it is one)
	printed printed // what the code printed: kept in the top-level test only
}

// Printed is what the code under test printed during the test and its
// subtests (see [Printed]); nothing for a nil Test.
func (t *Test) Printed() Printed {
	if t == nil {
		return Printed{}
	}
	return t.root.printed.result()
}

// Finished reports whether the test's last run ended with a result.
func (t *Test) Finished() bool { return !t.open }

// Output is the test's output, with a marker where the middle was cut,
// followed by its subtests' output: a failure inside t.Run is reported in
// the subtest's output, and it is the parent's failure too.
func (t *Test) Output() string {
	out := t.out.String()
	for _, sub := range t.subs {
		out += sub.Output()
	}
	return out
}

// Run is the decoded stream of one test binary.
type Run struct {
	Tests   map[string]*Test
	Order   []string // tests in the order they started
	Package string   // the binary's final word: "pass", "fail", or "" if it died first
	// Forged maps a test to the first forged frame printed while it ran
	// (or naming it, when no test ran).
	Forged map[string]string
	// Receipts are the harness's receipt frames, in the order printed
	// (see package receipt); a malformed one is kept as a zero Receipt.
	// Decode does not verify them.
	Receipts []receipt.Receipt
	out      capped // output outside any test (panics, build lines)
	top      *Test  // the top-level test running now
}

// Output is the output printed outside any test.
func (r *Run) Output() string { return r.out.String() }

// Running returns the tests that started but never finished.
func (r *Run) Running() []string {
	var out []string
	for _, name := range r.Order {
		if r.Tests[name].open {
			out = append(out, name)
		}
	}
	return out
}

// DiedIn returns the test the binary died in after it had ended, or "":
// the last top-level test to start, when it has ended with a failure and
// the binary never printed its final word. That is how a panic on a
// test's own goroutine ends a run (a synctest bubble's deadlock is one):
// the testing package reports the test as failed, then panics again and
// the process dies, with no test left running.
func (r *Run) DiedIn() string {
	t := r.top
	if t == nil || t.open || r.Package != "" || len(t.Results) == 0 || t.Results[len(t.Results)-1] != "fail" {
		return ""
	}
	return t.Name
}

// Decode reads the stream from rd until EOF, keeping at most limit bytes of
// output per test and for the package.
//
// It reads in chunks, not lines: a line without end (1 GiB printed without
// a newline) costs no more memory than a short one. A frame longer than
// maxFrame is not the testing package's and is kept as output.
func Decode(rd io.Reader, limit int) (*Run, error) {
	r := &Run{Tests: map[string]*Test{}, Forged: map[string]string{}, out: capped{limit: limit}}
	br := bufio.NewReaderSize(rd, chunkSize)
	var (
		cur     *Test
		frame   []byte // the frame being read: from its marker on
		inFrame bool
	)
	text := func(b []byte) {
		if cur != nil {
			cur.out.add(b)
			cur.root.printed.add(b)
		} else {
			r.out.add(b)
		}
	}
	for {
		b, err := br.ReadSlice('\n') // a line, or a piece of a long one
		for len(b) > 0 {
			if inFrame {
				j := bytes.IndexByte(b, '\n')
				end := j
				if j < 0 {
					end = len(b)
				}
				// A second marker before the line ends: what came
				// since the first one was output glued to a marker (a
				// print without a newline), and a frame starts here.
				if k := bytes.Index(b[:end], []byte(marker)); k >= 0 {
					text(append(frame, b[:k]...))
					inFrame = false
					b = b[k:]
					continue
				}
				frame = append(frame, b[:end]...)
				if len(frame) > maxFrame { // no frame is this long: output
					text(frame)
					inFrame = false
				} else if j >= 0 {
					if cur != nil {
						cur.root.printed.flush() // a frame starts a line
					}
					cur = r.frame(string(frame[len(marker):]), cur)
					inFrame = false
				}
				if j < 0 {
					break
				}
				b = b[j+1:]
				continue
			}
			// A marker that does not start the line follows output that
			// lacked a newline: split there.
			i := bytes.Index(b, []byte(marker))
			if i < 0 {
				text(b)
				break
			}
			if i > 0 {
				text(b[:i])
			}
			frame, inFrame = append(frame[:0], marker...), true
			b = b[i+len(marker):]
		}
		switch {
		case err == nil || errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if inFrame { // a last frame without its newline
				cur = r.frame(string(frame[len(marker):]), cur)
			}
			for _, t := range r.Tests {
				t.printed.finish()
			}
			return r, nil
		default:
			return r, fmt.Errorf("read test output: %w", err)
		}
	}
}

const (
	chunkSize = 64 << 10 // bytes read at a time
	maxFrame  = 16 << 10 // the longest frame believed: test names are short
	maxTests  = 10000    // distinct test names believed: far more than any kata has
)

// frame applies one framing line and returns the test that output now
// belongs to.
func (r *Run) frame(f string, cur *Test) *Test {
	if strings.HasPrefix(f, receipt.Prefix) {
		if len(r.Receipts) < maxReceipts { // more come only from a flood of imitations
			rc, _ := receipt.Parse(f)
			r.Receipts = append(r.Receipts, rc)
		}
		return cur
	}
	if blame, forged := r.forged(f); forged {
		if _, seen := r.Forged[blame]; !seen && blame != "" {
			r.Forged[blame] = f
		}
		if cur != nil {
			cur.out.add([]byte(f + "\n"))
			cur.root.printed.add([]byte(f + "\n"))
		} else {
			r.out.add([]byte(f + "\n"))
		}
		return cur
	}
	switch {
	case f == "PASS" || f == "FAIL":
		r.Package = strings.ToLower(f)
		return nil
	case strings.HasPrefix(f, "=== "):
		verb, name, _ := strings.Cut(strings.TrimPrefix(f, "=== "), " ")
		name = strings.TrimSpace(name)
		switch verb {
		case "RUN", "CONT", "NAME", "PAUSE":
			if name == "" { // "=== NAME" alone: back to the package
				return nil
			}
			t := r.test(name)
			if verb == "RUN" {
				t.open = true
				if !strings.Contains(name, "/") {
					r.top = t
				}
			}
			return t
		}
		return cur // ARTIFACTS, ATTR, …
	case strings.HasPrefix(f, "--- "):
		verb, rest, _ := strings.Cut(strings.TrimPrefix(f, "--- "), ": ")
		name, dur, _ := strings.Cut(rest, " (")
		t := r.test(name)
		result := strings.ToLower(verb)
		t.Results = append(t.Results, result)
		t.open = false
		if t.Action != "fail" { // a failure is final, whatever is printed later
			t.Action = result
		}
		t.Elapsed, _ = strconv.ParseFloat(strings.TrimSuffix(dur, "s)"), 64)
		return t
	}
	r.out.add([]byte(f + "\n"))
	return cur
}

// forged reports whether frame f cannot have come from the testing
// package, and which test to blame for it.
func (r *Run) forged(f string) (blame string, forged bool) {
	running := ""
	if r.top != nil && r.top.open {
		running = r.top.Name
	}
	switch {
	case f == "PASS" || f == "FAIL":
		return running, running != ""
	case strings.HasPrefix(f, "=== RUN "):
		name := strings.TrimSpace(strings.TrimPrefix(f, "=== RUN "))
		if r.Tests[name] == nil && len(r.Tests) >= maxTests { // a flood of names
			return running, true
		}
		if running == "" {
			return "", strings.Contains(name, "/")
		}
		return running, !strings.HasPrefix(name, running+"/")
	case strings.HasPrefix(f, "--- "):
		_, rest, _ := strings.Cut(strings.TrimPrefix(f, "--- "), ": ")
		name, _, _ := strings.Cut(rest, " (")
		if t := r.Tests[name]; t != nil && t.open {
			return "", false
		}
		if running == "" && r.Tests[name] != nil {
			running = name // a second result for a test that already ended
		}
		return running, true
	}
	return "", false
}

func (r *Run) test(name string) *Test {
	t := r.Tests[name]
	if t == nil {
		t = &Test{Name: name, out: capped{limit: r.out.limit}}
		t.root = t
		if top, _, sub := strings.Cut(name, "/"); sub {
			if parent := r.Tests[top]; parent != nil {
				t.root = parent
			}
		}
		r.Tests[name] = t
		r.Order = append(r.Order, name)
		if i := strings.LastIndex(name, "/"); i > 0 {
			if parent := r.Tests[name[:i]]; parent != nil {
				parent.subs = append(parent.subs, t)
			}
		}
	}
	return t
}

// capped keeps the first and the last limit/2 bytes of what is added and,
// from the middle, the test's own messages (t.Error and t.Log lines with
// their continuation lines, data race reports, and the first line of a
// panic or fatal error) up to limit/2 more, so that output flooded by other
// goroutines cannot hide why a test failed.
type capped struct {
	limit      int
	head, tail []byte
	total      int // bytes added
	cut        int // bytes dropped from the middle
	kept       []keptLine
	keptBytes  int
	inMessage  bool // the last line was (part of) a message
	inRace     bool // inside a race report
}

type keptLine struct {
	at   int // offset of the line in everything added
	text string
}

func (c *capped) add(s []byte) {
	c.keep(s)
	c.total += len(s)
	if room := c.limit/2 - len(c.head); room > 0 {
		n := min(room, len(s))
		c.head = append(c.head, s[:n]...)
		s = s[n:]
	}
	c.tail = append(c.tail, s...)
	if len(c.tail) > c.limit { // compact now and then, not on every add
		c.trim()
	}
}

// keep remembers a line that is part of a message or a race report.
func (c *capped) keep(line []byte) {
	has := func(prefix string) bool { return bytes.HasPrefix(line, []byte(prefix)) }
	switch {
	case has("WARNING: DATA RACE"):
		c.inRace = true
	case c.inRace && has("=================="):
		c.inRace = false
	case has("panic: ") || has("fatal error: "):
		c.inMessage = false // one line: the dump that follows is in the tail
	case has("    ") && MessageAt(line) == 0: // the prefix first: cheaper than the regexp
		c.inMessage = true
	case !has("        ") && MessageAt(line) > 0: // after a print without a newline
		c.inMessage = true
	case c.inMessage && has("        "):
	default:
		c.inMessage = false
		if !c.inRace {
			return
		}
	}
	if c.keptBytes+len(line) <= c.limit/2 {
		c.kept = append(c.kept, keptLine{c.total, string(line)})
		c.keptBytes += len(line)
	}
}

func (c *capped) trim() {
	if extra := len(c.tail) - c.limit/2; extra > 0 {
		c.cut += extra
		c.tail = append(c.tail[:0], c.tail[extra:]...)
	}
}

func (c *capped) String() string {
	c.trim()
	if c.cut == 0 {
		return string(c.head) + string(c.tail)
	}
	var b strings.Builder
	b.Write(c.head)
	fmt.Fprintf(&b, "\n… [%d bytes of output cut; the test's messages from them follow] …\n", c.cut)
	for _, k := range c.kept {
		if k.at >= len(c.head) && k.at < c.total-len(c.tail) { // only what was cut
			b.WriteString(k.text)
		}
	}
	b.WriteString("\n… [end of the cut] …\n")
	b.Write(c.tail)
	return b.String()
}
