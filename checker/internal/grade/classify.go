package grade

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"gokata/checker/internal/teststream"
	"gokata/internal/failure"
)

// Verdict is the outcome of one test or requirement.
type Verdict struct {
	Kind    failure.Kind `json:"kind"`
	Message string       `json:"message,omitempty"` // what went wrong, for the learner
	Detail  []string     `json:"detail,omitempty"`  // where: the learner's frames, values
}

// Passed reports whether the verdict is a pass.
func (v Verdict) Passed() bool { return v.Kind == failure.Pass }

var logLineRE = regexp.MustCompile(`^    (\S+\.go:\d+): (.*)$`)

// classifyFailure explains a test that ran to its end and failed.
func classifyFailure(out, dir string) Verdict {
	if strings.Contains(out, "WARNING: DATA RACE") || strings.Contains(out, "race detected during execution of test") {
		return raceVerdict(out, dir)
	}
	// The first message is the verdict, with one exception each way: a
	// failure the harness classified (a panic, a deadlock, the real clock)
	// explains more than the test's own message, so it wins wherever it is;
	// a leak reported after the test's message is usually the fallout of
	// the test stopping early, so it does not.
	blocks := logBlocks(out)
	var first *Verdict
	for _, b := range blocks {
		v := blockVerdict(b)
		if v.Kind != failure.Assertion && v.Kind != failure.Leak {
			return v
		}
		if first == nil {
			first = &v
		}
	}
	if first != nil {
		return *first
	}
	return Verdict{Kind: failure.Assertion, Message: "the test failed without a message"}
}

// blockVerdict reads one message: a harness tag, a testify failure, or the
// test's own words.
func blockVerdict(b []string) Verdict {
	if kind, ok := failure.FirstTag(b[0]); ok {
		i := strings.Index(b[0], failure.Tag(kind))
		return Verdict{Kind: kind, Message: b[0][i+len(failure.Tag(kind)):], Detail: trimDetail(b[1:])}
	}
	if v, ok := testifyVerdict(b); ok {
		return v
	}
	return Verdict{Kind: failure.Assertion, Message: b[0], Detail: trimDetail(b[1:])}
}

// logBlocks splits test output into its t.Log/t.Error messages: the first
// line without the "file_test.go:NN: " prefix, then the continuation lines.
// A message may follow what the code printed without a newline, on the
// same line. Hang hints (failure.HangHint) are left out: they explain only
// a hang (lastHangHint).
func logBlocks(out string) [][]string {
	var blocks [][]string
	for _, b := range allLogBlocks(out) {
		if !strings.HasPrefix(b[0], failure.HangHint) {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// lastHangHint is the last hang hint in a test's output, without its
// marker: what the step the test hung in was waiting for.
func lastHangHint(out string) (string, bool) {
	bs := allLogBlocks(out)
	for i := len(bs) - 1; i >= 0; i-- {
		if hint, ok := strings.CutPrefix(bs[i][0], failure.HangHint); ok {
			return hint, true
		}
	}
	return "", false
}

func allLogBlocks(out string) [][]string {
	var blocks [][]string
	for _, line := range strings.Split(out, "\n") {
		if n := len(blocks); n > 0 && strings.HasPrefix(line, "        ") {
			blocks[n-1] = append(blocks[n-1], strings.TrimPrefix(line, "        "))
			continue
		}
		if at := teststream.MessageAt([]byte(line)); at >= 0 {
			if m := logLineRE.FindStringSubmatch(line[at:]); m != nil {
				blocks = append(blocks, []string{m[2]})
			}
		}
	}
	return blocks
}

var testifyFieldRE = regexp.MustCompile(`^\t?([A-Za-z ]+):\s*\t(.*)$`)

// testifyVerdict reads a testify failure: its Messages are the teaching
// text, its Error the values.
func testifyVerdict(b []string) (Verdict, bool) {
	fields := map[string][]string{}
	var cur string
	for _, l := range b[1:] {
		if m := testifyFieldRE.FindStringSubmatch(l); m != nil {
			cur = m[1]
			fields[cur] = append(fields[cur], m[2])
		} else if cur != "" {
			fields[cur] = append(fields[cur], strings.TrimLeft(l, "\t "))
		}
	}
	if fields["Error Trace"] == nil {
		return Verdict{}, false
	}
	errLines := fields["Error"]
	if msg := fields["Messages"]; len(msg) > 0 {
		return Verdict{Kind: failure.Assertion, Message: strings.Join(msg, " "), Detail: trimDetail(errLines)}, true
	}
	if len(errLines) == 0 {
		errLines = []string{"assertion failed"}
	}
	return Verdict{Kind: failure.Assertion, Message: errLines[0], Detail: trimDetail(errLines[1:])}, true
}

func trimDetail(ls []string) []string {
	var out []string
	for _, l := range ls {
		if l = strings.TrimRight(l, " \t"); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > 8 {
		out = append(out[:8:8], "…")
	}
	return out
}

var raceAccessRE = regexp.MustCompile(`^(Previous )?(Read|Write|read|write) at 0x[0-9a-f]+ by (goroutine \d+|main goroutine)`)
var raceFrameRE = regexp.MustCompile(`^\s+(/\S+\.go):(\d+)`)

// raceVerdict names the two conflicting accesses in the learner's code.
func raceVerdict(out, dir string) Verdict {
	var detail []string
	var access string
	var fn string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if m := raceAccessRE.FindStringSubmatch(line); m != nil {
			access = strings.ToLower(m[2])
			if m[1] != "" {
				access = "previous " + access
			}
			continue
		}
		if m := raceFrameRE.FindStringSubmatch(line); m != nil && access != "" {
			if failure.IsLearner(m[1], dir) {
				d := fmt.Sprintf("%s at %s:%s %s", access, m[1], m[2], fn)
				if !seen[access] {
					detail = append(detail, d)
					seen[access] = true
				}
			}
			continue
		}
		fn = failure.ShortFunc(strings.TrimSpace(line))
	}
	return Verdict{Kind: failure.Race,
		Message: "data race: two goroutines touch the same memory without synchronisation",
		Detail:  detail}
}

var timeoutRE = regexp.MustCompile(`panic: test timed out after (\S+)`)

// What testing/synctest panics with when a bubble deadlocks: every
// goroutine in it blocked, or the test's function returned with some
// still blocked.
const (
	synctestDeadlock    = "deadlock: all goroutines in bubble are blocked"
	synctestLeftBlocked = "deadlock: main bubble goroutine has exited but blocked goroutines remain"
)

// classifyCrash explains a test that was running when the binary died.
func classifyCrash(out, dir string, e exit, limit time.Duration) Verdict {
	gs := failure.Parse(out)
	switch {
	case e.watched:
		return Verdict{Kind: failure.Timeout, Message: fmt.Sprintf("the test process stopped responding and was killed after %v: a busy loop?", limit)}
	case timeoutRE.MatchString(out):
		return hangVerdict(gs, dir, limit)
	case strings.Contains(out, "fatal error: all goroutines are asleep - deadlock!"):
		return Verdict{Kind: failure.Deadlock, Message: "deadlock: every goroutine is blocked", Detail: failure.Describe(gs, dir, 5)}
	case strings.Contains(out, "panic: "+synctestDeadlock):
		return Verdict{Kind: failure.Deadlock, Message: "deadlock: every goroutine of the test's synctest bubble is blocked and no timer can wake them: something waits for an event that never comes", Detail: failure.Describe(gs, dir, 5)}
	case strings.Contains(out, "panic: "+synctestLeftBlocked):
		return Verdict{Kind: failure.Leak, Message: "the test finished but goroutines of its synctest bubble are still blocked", Detail: failure.Describe(gs, dir, 5)}
	case strings.Contains(out, "fatal error: concurrent map"):
		return Verdict{Kind: failure.Race, Message: "the runtime caught goroutines using a map concurrently without a lock", Detail: failure.Describe(gs, dir, 3)}
	case strings.Contains(out, "from outside bubble"):
		// Each scenario runs in a synctest bubble of its own, and the
		// runtime stops a goroutine touching another bubble's channel or
		// timer: one made for an earlier instance and kept since.
		i := strings.Index(out, "from outside bubble")
		line, _, _ := strings.Cut(out[strings.LastIndex(out[:i], "\n")+1:], "\n")
		return Verdict{Kind: failure.Panic, Message: "your code used a channel or timer that an earlier instance made: " +
			"it keeps them in package-level state (a global variable, a package-level sync.Pool or cache), which " +
			"every instance shares. Keep them per instance, in the struct New returns, or make them per call",
			Detail: append([]string{line}, failure.Describe(gs, dir, 3)...)}
	case strings.Contains(out, "unexpected call to os.Exit"):
		return Verdict{Kind: failure.Exit, Message: "the code called os.Exit during the test: return an error instead"}
	}
	if i := strings.Index(out, "panic: "); i >= 0 {
		line, _, _ := strings.Cut(out[i+len("panic: "):], "\n")
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(strings.TrimSuffix(line, " [recovered]"), " [recovered, repanicked]")
		var where []string
		if len(gs) > 0 {
			for _, f := range gs[0].LearnerFrames(dir) {
				if !f.Creator {
					where = append(where, "at "+f.String())
				} else {
					where = append(where, f.String())
				}
			}
		}
		if strings.HasPrefix(line, "TODO") {
			return Verdict{Kind: failure.NotImplemented, Message: line, Detail: trimDetail(where)}
		}
		return Verdict{Kind: failure.Panic, Message: "panic: " + line, Detail: trimDetail(where)}
	}
	if i := strings.Index(out, "fatal error: "); i >= 0 {
		line, _, _ := strings.Cut(out[i:], "\n")
		return Verdict{Kind: failure.Panic, Message: line, Detail: failure.Describe(gs, dir, 3)}
	}
	return Verdict{Kind: failure.Exit, Message: fmt.Sprintf("the test process exited (status %d) before the test finished: does the code call os.Exit or log.Fatal?", e.code)}
}

// hangVerdict reads the goroutine dump of a test that hit the time limit.
//
// A goroutine of the learner's that is running or runnable then has not
// stopped for the whole time limit: it spins, or it keeps others busy (idle
// workers that wake each other with Broadcast before each Wait), even when
// others wait for a lock it takes over and over. Only when none runs is a
// goroutine waiting for a mutex stuck on a lock that is never unlocked.
func hangVerdict(gs []failure.Goroutine, dir string, limit time.Duration) Verdict {
	for _, g := range gs {
		fs := g.LearnerFrames(dir)
		if len(fs) == 0 || (g.State != "running" && g.State != "runnable") {
			continue
		}
		if g.Frames[0] == fs[0] {
			return Verdict{Kind: failure.Timeout,
				Message: fmt.Sprintf("still running after %v: a busy loop that never waits on a channel or the clock?", limit),
				Detail:  []string{"at " + fs[0].String()}}
		}
		return Verdict{Kind: failure.Timeout,
			Message: fmt.Sprintf("still running after %v: your goroutines never all wait: one was still %s when the time ran out: do they wake each other in a loop (a Broadcast or Signal before every Wait), or retry without blocking?", limit, g.State),
			Detail:  failure.Describe(gs, dir, 5)}
	}
	if v, ok := readLockAgain(gs, dir); ok {
		return v
	}
	for _, g := range gs {
		fs := g.LearnerFrames(dir)
		if len(fs) == 0 {
			continue
		}
		if waitsOnMutex(g) && !harnessLock(g) {
			return Verdict{Kind: failure.MutexHang,
				Message: "stuck waiting for a sync.Mutex that is never unlocked (locked twice, or held while waiting for something else?)",
				Detail:  []string{"at " + fs[0].String()}}
		}
	}
	return Verdict{Kind: failure.Timeout,
		Message: fmt.Sprintf("did not finish within %v; the code was waiting here:", limit),
		Detail:  failure.Describe(gs, dir, 5)}
}

// readLockAgain names the deadlock of a read lock taken twice on one path:
// with a writer waiting in Lock, a sync.RWMutex lets no new reader in, so
// a goroutine that holds a read lock and asks for another waits for the
// writer, which waits for it. The dump shows both: learner code waiting
// in RLock, and learner code waiting in Lock.
func readLockAgain(gs []failure.Goroutine, dir string) (Verdict, bool) {
	var reader, writer []failure.Frame
	for _, g := range gs {
		fs := g.LearnerFrames(dir)
		switch {
		case len(fs) == 0:
		case reader == nil && strings.HasPrefix(g.State, "sync.RWMutex.RLock"):
			reader = fs
		case writer == nil && strings.HasPrefix(g.State, "sync.RWMutex.Lock"):
			writer = fs
		}
	}
	if reader == nil || writer == nil {
		return Verdict{}, false
	}
	return Verdict{Kind: failure.MutexHang,
		Message: "stuck on a sync.RWMutex: a goroutine waits in RLock while another waits in Lock. A waiting writer " +
			"lets no new reader in, so a read lock taken again on a path that already holds one (RLock in a helper " +
			"called under RLock) waits for the writer, which waits for it: take the lock once per path",
		Detail: []string{"RLock at " + reader[0].String(), "Lock at " + writer[0].String()}}, true
}

// harnessLock reports whether the lock g waits for is taken by the mock
// clock or the harness, not by the learner's code: the learner's code
// never holds those across a wait, so a goroutine queued there at the
// time limit (a timer's Stop while the test moves the clock) is only slow,
// on a loaded machine, and the test is a plain timeout.
func harnessLock(g failure.Goroutine) bool {
	for _, f := range g.Frames {
		if strings.Contains(f.File, "/src/runtime/") || strings.Contains(f.File, "/src/internal/") ||
			strings.Contains(f.File, "/src/sync/") {
			continue
		}
		// The first frame outside the runtime and package sync took the lock.
		return strings.Contains(f.File, "/github.com/benbjohnson/clock@") || strings.Contains(f.File, "/internal/katatest/")
	}
	return false
}

func waitsOnMutex(g failure.Goroutine) bool {
	if strings.Contains(g.State, "sync.Mutex") || strings.Contains(g.State, "sync.RWMutex") {
		return true
	}
	for _, f := range g.Frames {
		if strings.HasPrefix(f.Func, "(*Mutex).Lock") || strings.HasPrefix(f.Func, "(*RWMutex).") {
			return true
		}
	}
	return false
}
