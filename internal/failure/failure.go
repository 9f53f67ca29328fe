// Package failure is the vocabulary of failures shared by the hidden-test
// harness, which writes them, and the checker, which reads them back.
//
// The harness starts every failure it reports with a tag such as "[leak]";
// the checker classifies a failed test by the first tag in its output.
// Stack dumps are reduced to the learner's frames: the non-test files in the
// package under test.
package failure

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Kind classifies why a requirement failed (or that it passed).
type Kind string

// The kinds, in the order a report explains them.
const (
	Pass           Kind = "pass"
	NotImplemented Kind = "not-implemented" // a panic("TODO ...") from the stub
	Compile        Kind = "compile"         // the learner's code does not compile
	API            Kind = "api"             // the exported API differs from the stub's
	Forbidden      Kind = "forbidden"       // the static gate refused to run the code
	Assertion      Kind = "assertion"       // a hidden test's expectation was not met
	Panic          Kind = "panic"           // the code under test panicked
	Race           Kind = "race"            // the race detector reported a data race
	Leak           Kind = "leak"            // goroutines outlived the call under test
	Deadlock       Kind = "deadlock"        // every goroutine blocked: something never returned
	MutexHang      Kind = "mutex-hang"      // stuck on a sync.Mutex: the test could not finish
	Timeout        Kind = "timeout"         // still running at the time limit: a busy loop?
	RealClock      Kind = "real-clock"      // progress without the injected clock moving
	Exit           Kind = "exit"            // the test process ended without a verdict
	Unproven       Kind = "unproven"        // a pass the harness gave no valid receipt for: the test did not really run
	NotRun         Kind = "not-run"         // skipped: its requirement had already failed in another test
)

// HangHint starts a line a hidden test writes before a step that may hang
// (katatest's H.IfItHangs): what a hang there would mean. It is not a
// failure: the checker shows the last one only when the test hangs.
const HangHint = "[if it hangs] "

// Tag returns the marker the harness puts before a failure message.
func Tag(k Kind) string { return "[" + string(k) + "] " }

// tagged lists the kinds the harness reports with a [Tag]. [FirstTag]
// recognises these and no others: a kind the harness starts to write goes
// here, and the checker reads it back from then on.
var tagged = []Kind{NotImplemented, Panic, Leak, Deadlock, RealClock}

var tagRE = tagPattern(tagged)

// tagPattern matches the tag of any of kinds.
func tagPattern(kinds []Kind) *regexp.Regexp {
	alts := make([]string, len(kinds))
	for i, k := range kinds {
		alts[i] = regexp.QuoteMeta(string(k))
	}
	return regexp.MustCompile(`\[(` + strings.Join(alts, "|") + `)\] `)
}

// FirstTag returns the kind named by the first harness tag in out.
func FirstTag(out string) (Kind, bool) {
	m := tagRE.FindStringSubmatch(out)
	if m == nil {
		return "", false
	}
	return Kind(m[1]), true
}

// Frame is one call in a goroutine's stack.
type Frame struct {
	Func    string // e.g. "Do[...]", the package path removed
	File    string // absolute path as the runtime printed it
	Line    int
	Creator bool // the "created by" line: where the goroutine was started
}

func (f Frame) String() string {
	s := fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Func)
	if f.Creator {
		s = "started by " + s
	}
	return s
}

// Goroutine is one entry of a stack dump.
type Goroutine struct {
	Header string // e.g. "goroutine 7 [chan receive (durable), synctest bubble 3]"
	State  string // e.g. "chan receive (durable)"
	Bubble int    // the synctest bubble it belongs to, 0 for none
	Frames []Frame
}

var (
	// A runtime dump says "goroutine 7 [chan receive]:" (with GOTRACEBACK
	// set to system or crash: "goroutine 7 gp=0x… m=0 mp=0x… [chan receive]:");
	// goleak's error says "Goroutine 7 in state chan receive, with f on top
	// of the stack:".
	headerRE = regexp.MustCompile(`^\[?(?:goroutine \d+ (?:gp=\S+ m=\S+ (?:mp=\S+ )?)?\[([^\],]*)|Goroutine \d+ in state ([^,]*),)`)
	bubbleRE = regexp.MustCompile(`synctest bubble (\d+)`)
	fileRE   = regexp.MustCompile(`^\t(.+\.go):(\d+)`)
)

// Parse reads the goroutines in a Go stack dump (runtime.Stack, a panic, a
// test timeout, or goleak's report). Lines that are not part of a dump are
// skipped.
func Parse(dump string) []Goroutine {
	var gs []Goroutine
	var cur *Goroutine
	var fn string
	for _, line := range strings.Split(dump, "\n") {
		if m := headerRE.FindStringSubmatch(line); m != nil {
			gs = append(gs, Goroutine{Header: strings.TrimSuffix(line, ":"), State: strings.TrimSpace(m[1] + m[2])})
			cur = &gs[len(gs)-1]
			if b := bubbleRE.FindStringSubmatch(line); b != nil {
				fmt.Sscan(b[1], &cur.Bubble)
			}
			fn = ""
			continue
		}
		if cur == nil {
			continue
		}
		if line == "" {
			cur = nil
			continue
		}
		if m := fileRE.FindStringSubmatch(line); m != nil && fn != "" {
			var n int
			fmt.Sscan(m[2], &n)
			cur.Frames = append(cur.Frames, Frame{Func: ShortFunc(fn), File: m[1], Line: n, Creator: strings.HasPrefix(fn, "created by ")})
			fn = ""
			continue
		}
		if !strings.HasPrefix(line, "\t") {
			fn = line
		}
	}
	return gs
}

// ShortFunc turns "gokata/exercises/06-retry.Do[...](0x1, ...)" into "Do[...]"
// and "created by gokata/x.F in goroutine 5" into "F".
func ShortFunc(s string) string {
	s = strings.TrimPrefix(s, "created by ")
	if i := strings.Index(s, " in goroutine"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.Index(s, "."); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, "("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	// A generic function's frame names its GC shape: Do[go.shape.*uint8].func1.
	if i, j := strings.Index(s, "[go.shape"), strings.LastIndex(s, "]"); i >= 0 && j > i {
		s = s[:i] + "[...]" + s[j+1:]
	}
	return s
}

// IsLearner reports whether file is one of the learner's source files: a
// non-test .go file directly in dir.
func IsLearner(file, dir string) bool {
	return filepath.Dir(file) == filepath.Clean(dir) && !strings.HasSuffix(file, "_test.go")
}

// ID is the goroutine's number in its header, 0 if the header has none.
func (g Goroutine) ID() int {
	m := idRE.FindStringSubmatch(g.Header)
	if m == nil {
		return 0
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

var idRE = regexp.MustCompile(`^\[?[Gg]oroutine (\d+)`)

// LearnerFrames returns the frames of g that lie in the learner's files.
func (g Goroutine) LearnerFrames(dir string) []Frame {
	var out []Frame
	for _, f := range g.Frames {
		if IsLearner(f.File, dir) {
			out = append(out, f)
		}
	}
	return out
}

// Describe renders goroutines, at most max, one line each with the state
// and the innermost learner frame. If none runs the learner's code, each is
// shown with the place that started it instead.
func Describe(gs []Goroutine, dir string, max int) []string {
	var lines []string
	add := func(g Goroutine, f Frame) bool {
		if len(lines) == max {
			lines = append(lines, "…")
			return false
		}
		if f.Creator {
			lines = append(lines, fmt.Sprintf("%s, %s", g.State, f))
		} else {
			lines = append(lines, fmt.Sprintf("%s at %s", g.State, f))
		}
		return true
	}
	for _, g := range gs {
		if fs := g.LearnerFrames(dir); len(fs) > 0 && !add(g, fs[0]) {
			return lines
		}
	}
	if len(lines) > 0 {
		return lines
	}
	for _, g := range gs {
		if len(g.Frames) > 0 && !add(g, g.Frames[len(g.Frames)-1]) {
			break
		}
	}
	return lines
}
