package katatest

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing/synctest"

	"gokata/internal/failure"
	"gokata/internal/katatest/shake"
)

// settleRounds bounds how often Settle looks at the bubble before it falls
// back to synctest.Wait. Code that settles at all does so in a few rounds.
const settleRounds = 10000

// Settle is synctest.Wait that does not hang on a mutex. It returns nil once
// every other goroutine in the bubble is durably blocked, exactly like
// synctest.Wait (whose happens-before edges it then provides). Call it from
// the test body's goroutine.
//
// A goroutine waiting to lock a sync.Mutex or sync.RWMutex is not durably
// blocked (nor is one waiting on a channel made outside the bubble, such
// as a package-level channel used as a lock), so when code holds a mutex
// while it waits for the clock or a channel, the goroutines queued on that
// mutex make synctest.Wait (and H.Advance) wait forever. Settle notices that state instead: every other
// goroutine is either durably blocked or waiting for a mutex, so nothing
// can change until the test acts. It then returns one line per goroutine
// waiting for the mutex, with the learner's line (and, in a graded build,
// who holds the lock, see describeStuck), and the test should
// report the failure and release the holder (cancel its context) before it
// settles again.
//
// Settle reads the goroutine states from a stack dump until they are
// quiet, yielding in between; if they never are (a busy loop), it ends in
// synctest.Wait. A dump costs time in proportion to the goroutines in the
// process, so call Settle where a mutex can be contended and synctest.Wait
// elsewhere.
func (h *H) Settle() (stuck []string) {
	h.rep.Helper()
	self, bubble := h.root, h.bubble
	for i := 0; bubble != 0 && i < settleRounds; i++ {
		yield(i)
		d := takeDump()
		busy, onMutex := false, 0
		for _, g := range d.headers() {
			switch {
			case g.id == self:
			case g.bubble == 0:
				// The runtime leaves the bubble out of the header while a
				// goroutine works for the GC, so one of ours may look
				// foreign: only a plainly blocked one is someone else's.
				busy = busy || !idleElsewhere(g.state)
			case g.bubble != bubble:
			case bytes.HasSuffix(g.state, []byte("(durable)")):
			case onMutexState(g.state):
				onMutex++
			default:
				busy = true
			}
		}
		if busy {
			d.release()
			continue
		}
		if onMutex == 0 {
			d.release()
			synctest.Wait()
			return nil
		}
		// Parse only the blocks of the bubble's goroutines: it is slow.
		var blocks []string
		for block := range bytes.SplitSeq(d.buf, []byte("\n\n")) {
			if hs := (dump{buf: block}).headers(); len(hs) == 1 && hs[0].bubble == bubble && hs[0].id != self {
				blocks = append(blocks, string(block))
			}
		}
		d.release()
		return h.describeStuck(failure.Parse(strings.Join(blocks, "\n\n")))
	}
	synctest.Wait()
	return nil
}

// describeStuck returns a line for each goroutine of gs (the bubble's)
// that waits for a mutex, at most five, with who holds the lock when the
// lock notes say. A deadlock that no step of the test can undo (locks
// taken in opposite orders, a lock asked for again by its holder, one
// never unlocked) is reported first, once per test, as the mistake.
func (h *H) describeStuck(gs []failure.Goroutine) []string {
	locks := diagnoseLocks(gs, shake.Locks(), h.dir)
	if locks.certain != "" && !h.lockHang {
		h.lockHang = true
		h.rep.Errorf("%s%s", failure.Tag(failure.Deadlock), locks.certain)
	}
	var lines []string
	for _, g := range gs {
		if !onMutexState([]byte(g.State)) {
			continue
		}
		if len(lines) == 5 {
			return append(lines, "…")
		}
		if l := failure.Describe([]failure.Goroutine{g}, h.dir, 1); len(l) == 1 {
			lines = append(lines, l[0]+locks.holders[g.ID()])
		}
	}
	return lines
}

// yieldsPerDump is how often Settle yields before it first looks at the
// bubble. A dump stops the world and walks every stack, which costs far
// more than a yield, and code that has just been woken takes a few yields
// to block again. While the bubble stays busy the yields between dumps
// double every four rounds, up to 64 times as many: with several Ps,
// frequent dumps keep stopping the goroutines they wait for.
const yieldsPerDump = 8

func yield(round int) {
	for range yieldsPerDump << min(round/4, 6) {
		runtime.Gosched()
	}
}

// dump is a stack dump of every goroutine, in a buffer that is reused:
// Settle may take many, and allocating each would keep the GC (and so
// the goroutines helping it) busy.
type dump struct{ buf []byte }

var (
	dumpMu  sync.Mutex
	dumpBuf = make([]byte, 64<<10)
)

// takeDump locks the shared buffer until release.
func takeDump() dump {
	dumpMu.Lock()
	for {
		n := runtime.Stack(dumpBuf, true)
		if n < len(dumpBuf) {
			return dump{dumpBuf[:n]}
		}
		dumpBuf = make([]byte, 2*len(dumpBuf))
	}
}

func (dump) release() { dumpMu.Unlock() }

// header is what Settle needs from a goroutine's first line in a dump,
// "goroutine 7 [select (durable), 2 minutes, synctest bubble 3]:".
// (failure.Parse reads whole dumps; this is the fast path for the loop.)
type header struct {
	id, bubble int
	state      []byte
}

func (d dump) headers() []header {
	var hs []header
	for line := range bytes.Lines(d.buf) {
		rest, ok := bytes.CutPrefix(line, []byte("goroutine "))
		if !ok {
			continue
		}
		num, rest, ok := bytes.Cut(rest, []byte(" ["))
		if !ok {
			continue
		}
		inside, _, _ := bytes.Cut(rest, []byte("]"))
		g := header{id: atoi(num)}
		g.state, _, _ = bytes.Cut(inside, []byte(","))
		if _, b, ok := bytes.Cut(inside, []byte("synctest bubble ")); ok {
			g.bubble = atoi(b)
		}
		hs = append(hs, g)
	}
	return hs
}

func atoi(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return -1
	}
	return n
}

// Goroutine returns the id of the goroutine that calls it, as goroutine
// dumps name it, inside a bubble or outside. The runtime never gives an id
// twice, so two calls that get the same id ran on one goroutine, and two
// that get different ids ran on different goroutines, even if one of them
// ended before the other started. A fake (a hook, a callback, a fn) compares
// it with the caller's to check on which goroutine the code runs it, or
// with the other calls' to check that each got a goroutine of its own. The
// hidden tests use it instead of a helper of their own.
func Goroutine() int {
	id, _ := ownGoroutine()
	return id
}

// ownGoroutine returns the id and the bubble of the calling goroutine.
func ownGoroutine() (id, bubble int) {
	var buf [128]byte // the first line is all it needs
	hs := dump{buf[:runtime.Stack(buf[:], false)]}.headers()
	if len(hs) == 0 {
		return -1, 0
	}
	return hs[0].id, hs[0].bubble
}

// Goroutines is how many goroutines are in the test's bubble now, the
// test body's own included. Unlike runtime.NumGoroutine it counts no
// goroutine of the runtime, of the harness outside the bubble, or left
// behind by an earlier test (goroutines a mutant left blocked, say), so a
// test that bounds how many goroutines the code starts cannot fail a
// correct design because of them.
func (h *H) Goroutines() int { return len(bubbleGoroutines(h.bubble)) }

// bubbleGoroutines returns the ids of the goroutines in bubble (none for
// bubble 0, outside any bubble).
func bubbleGoroutines(bubble int) map[int]bool {
	ids := map[int]bool{}
	if bubble == 0 {
		return ids
	}
	d := takeDump()
	defer d.release()
	for _, g := range d.headers() {
		if g.bubble == bubble {
			ids[g.id] = true
		}
	}
	return ids
}

// onMutexState reports whether a goroutine of the bubble in this state
// is blocked, but not durably: waiting for a sync.Mutex or RWMutex, or on
// a channel made outside the bubble (a package-level channel used as a
// lock, say), which synctest cannot tell will never be ready.
func onMutexState(state []byte) bool {
	if bytes.HasPrefix(state, []byte("sync.Mutex.")) || bytes.HasPrefix(state, []byte("sync.RWMutex.")) {
		return true
	}
	for _, op := range []string{"chan send", "chan receive", "select"} {
		if bytes.HasPrefix(state, []byte(op)) && !bytes.HasSuffix(state, []byte("(durable)")) {
			return true
		}
	}
	return false
}

// idleElsewhere reports whether a goroutine the dump shows outside any
// bubble is plainly blocked (the test's parent goroutines are), rather
// than one of the bubble's own caught working for the GC. (A goroutine of the
// bubble in a syscall keeps its bubble in the header; one outside it in a
// syscall, like the CPU profiler's writer, is not the bubble's business.)
func idleElsewhere(state []byte) bool {
	for _, p := range []string{"chan receive", "chan send", "select", "sleep", "IO wait", "sync.", "syscall"} {
		if bytes.HasPrefix(state, []byte(p)) {
			return true
		}
	}
	return false
}
