package katatest

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gokata/internal/failure"
	"gokata/internal/katatest/shake"
)

// A lock hang, read from the goroutine dump and the lock notes the grader
// adds around the code's Lock and Unlock statements (package shake): who
// waits for which lock, and who holds it. The notes exist only in a graded
// build; without them (go test of a reference) nothing is diagnosed.

// lockHang is what the notes say about goroutines stuck on locks.
type lockHang struct {
	// certain is a deadlock no step of the test can undo: a cycle of
	// goroutines each waiting for a lock another of them holds (one that
	// waits for a lock it holds itself included), or a lock whose every
	// holder has ended. "" when there is none.
	certain string
	// holders says, for each stuck goroutine's line in Settle's result,
	// who holds the lock it waits for and where that goroutine took it.
	holders map[int]string
}

// waiter is a goroutine of the bubble stuck on a lock, with its notes.
type waiter struct {
	g     failure.Goroutine
	notes shake.Notes
}

// diagnoseLocks reads the lock notes (shake.Locks) of the goroutines gs of
// one bubble (every goroutine of it, the stuck and the others) for the
// source in dir.
func diagnoseLocks(gs []failure.Goroutine, notes map[int]shake.Notes, dir string) lockHang {
	h := lockHang{holders: map[int]string{}}
	if len(notes) == 0 {
		return h
	}
	alive := map[int]failure.Goroutine{}
	waiters := map[int]waiter{}
	for _, g := range gs {
		alive[g.ID()] = g
		if n, ok := notes[g.ID()]; ok && n.Waits && onMutexState([]byte(g.State)) {
			waiters[g.ID()] = waiter{g, n}
		}
	}
	// blockers: who keeps each waiter from its lock. An ended goroutine
	// that still holds the lock in its notes counts: it never unlocked.
	blockers := map[int][]int{}
	for id, w := range waiters {
		for other, n := range notes {
			if other == id {
				for _, l := range n.Holds {
					if l.Addr == w.notes.Wait.Addr && !(l.Read && w.notes.Wait.Read) {
						blockers[id] = append(blockers[id], id) // it holds the lock it waits for
					}
				}
				continue
			}
			for _, l := range n.Holds {
				if l.Addr == w.notes.Wait.Addr && !(l.Read && w.notes.Wait.Read) {
					blockers[id] = append(blockers[id], other)
					break
				}
			}
			// A writer waiting for the lock lets no new reader in.
			if ow, ok := waiters[other]; ok && w.notes.Wait.Read && !ow.notes.Wait.Read && ow.notes.Wait.Addr == w.notes.Wait.Addr {
				blockers[id] = append(blockers[id], other)
			}
		}
	}
	for id, w := range waiters {
		h.holders[id] = holderLine(w, blockers[id], notes, alive, dir)
	}
	h.certain = certainLockHang(waiters, blockers, notes, alive, dir)
	return h
}

// certainLockHang names a deadlock among the waiters that nothing outside
// can break, or returns "".
func certainLockHang(waiters map[int]waiter, blockers map[int][]int, notes map[int]shake.Notes, alive map[int]failure.Goroutine, dir string) string {
	ids := sortedIDs(waiters)
	for _, id := range ids {
		if cycle := findCycle(id, waiters, blockers); cycle != nil {
			return describeCycle(cycle, waiters, dir)
		}
	}
	for _, id := range ids {
		bs := blockers[id]
		if len(bs) == 0 {
			continue
		}
		ended := true
		for _, b := range bs {
			if _, ok := alive[b]; ok {
				ended = false
			}
		}
		if ended {
			w := waiters[id]
			l := heldBy(notes[bs[0]], w.notes.Wait.Addr)
			return fmt.Sprintf("a lock is never unlocked: it was taken at %s by a goroutine that has ended without unlocking it "+
				"(a return or an error path that skips Unlock?), and a goroutine waits for it at %s. Unlock on every "+
				"way out of the function: defer the Unlock right after the Lock", place(l, dir), place(w.notes.Wait, dir))
		}
	}
	return ""
}

// findCycle follows from id the goroutines each waiter waits for, and
// returns the first cycle met, or nil if the chain ends at a goroutine that
// is not waiting for a lock (it may still let its locks go).
func findCycle(id int, waiters map[int]waiter, blockers map[int][]int) []int {
	var path []int
	on := map[int]int{}
	var walk func(int) []int
	walk = func(g int) []int {
		if i, ok := on[g]; ok {
			return path[i:]
		}
		if _, ok := waiters[g]; !ok {
			return nil
		}
		on[g] = len(path)
		path = append(path, g)
		for _, b := range blockers[g] {
			if c := walk(b); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		delete(on, g)
		return nil
	}
	return walk(id)
}

// describeCycle names a cycle of waiters: one goroutine locking a lock it
// holds, a read lock asked for again while a writer waits, or locks taken
// in opposite orders.
func describeCycle(cycle []int, waiters map[int]waiter, dir string) string {
	if len(cycle) == 1 {
		w := waiters[cycle[0]]
		return fmt.Sprintf("a lock is locked twice: a goroutine holds the lock it took at %s and asks for it again at "+
			"%s, so it waits for itself. A sync.Mutex is not reentrant: lock it once per path, and have helpers "+
			"called under the lock not lock it again", place(heldBy(w.notes, w.notes.Wait.Addr), dir), place(w.notes.Wait, dir))
	}
	for _, id := range cycle {
		w := waiters[id]
		if !w.notes.Wait.Read {
			continue
		}
		if l := heldBy(w.notes, w.notes.Wait.Addr); l.Read {
			var writer waiter
			for _, o := range cycle {
				if ow := waiters[o]; !ow.notes.Wait.Read && ow.notes.Wait.Addr == w.notes.Wait.Addr {
					writer = ow
				}
			}
			return fmt.Sprintf("recursive read lock: a goroutine holds a read lock it took at %s and asks for it again "+
				"at %s while another waits to write-lock it at %s. A waiting writer lets no new reader in, so the "+
				"second RLock waits for the writer, and the writer for the first RLock. Take the read lock once per "+
				"path: helpers called under it must not RLock again", place(l, dir), place(w.notes.Wait, dir), place(writer.notes.Wait, dir))
		}
	}
	var lines []string
	for _, id := range cycle {
		w := waiters[id]
		var held []string
		for _, l := range w.notes.Holds {
			held = append(held, place(l, dir))
		}
		lines = append(lines, fmt.Sprintf("a goroutine holds the lock taken at %s and waits at %s for a lock another of them holds",
			strings.Join(held, " and "), place(w.notes.Wait, dir)))
	}
	return fmt.Sprintf("lock-order deadlock: %d goroutines each hold a lock and wait for one another of them holds, "+
		"so none can go on: they take the same locks in different orders. Take locks in one fixed order everywhere "+
		"(sort them by a key of their own), or never hold two at once:\n\t%s", len(cycle), strings.Join(lines, "\n\t"))
}

// holderLine says who holds the lock a waiter waits for, to follow its
// line in Settle's result; "" when the notes do not say.
func holderLine(w waiter, bs []int, notes map[int]shake.Notes, alive map[int]failure.Goroutine, dir string) string {
	for _, b := range bs {
		l := heldBy(notes[b], w.notes.Wait.Addr)
		if l.Addr == 0 {
			continue // a writer waiting, not a holder
		}
		g, ok := alive[b]
		switch {
		case b == w.g.ID():
			return fmt.Sprintf("; it holds that lock itself, taken at %s", place(l, dir))
		case !ok:
			return fmt.Sprintf("; the lock was taken at %s by a goroutine that has ended without unlocking it", place(l, dir))
		}
		where := ""
		if fs := g.LearnerFrames(dir); len(fs) > 0 {
			where = " at " + fs[0].String()
		}
		return fmt.Sprintf("; the lock was taken at %s by a goroutine that holds it while it waits: %s%s", place(l, dir), g.State, where)
	}
	return ""
}

// heldBy is the note of the lock at addr among the goroutine's held locks,
// the last taken; zero if it holds none.
func heldBy(n shake.Notes, addr uintptr) shake.Lock {
	for i := len(n.Holds) - 1; i >= 0; i-- {
		if n.Holds[i].Addr == addr {
			return n.Holds[i]
		}
	}
	return shake.Lock{}
}

// place is where a note was taken, as the learner's frames are shown: the
// notes name the file within its package, dir.
func place(l shake.Lock, dir string) string {
	if l.File == "" {
		return "an unknown line"
	}
	return fmt.Sprintf("%s:%d", filepath.Join(dir, l.File), l.Line)
}

func sortedIDs(ws map[int]waiter) []int { return slices.Sorted(maps.Keys(ws)) }

// neverWoken names a goroutine of gs, all blocked for good, that waits in
// sync.Cond.Wait or sync.WaitGroup.Wait in the learner's code: nothing
// left can wake it, which is the mistake to name, not the hang it causes.
// "" when none does.
func neverWoken(gs []failure.Goroutine, dir string) string {
	for _, g := range gs {
		fs := g.LearnerFrames(dir)
		if len(fs) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(g.State, "sync.Cond.Wait"):
			return fmt.Sprintf("a goroutine waits in Cond.Wait at %s and nothing left will Signal or Broadcast: a Cond "+
				"keeps no memory, so a change made with no Signal after it (on an error path, a stop, a close), or "+
				"signalled before the waiter waited, is never seen. Signal after every change a waiter waits for, "+
				"and wait in a for loop over the condition", fs[0])
		case strings.HasPrefix(g.State, "sync.WaitGroup.Wait"):
			return fmt.Sprintf("a goroutine waits in WaitGroup.Wait at %s and the count never reaches zero: an Add "+
				"has no Done (a path that returns before Done: defer it), or Wait runs where it waits for itself", fs[0])
		}
	}
	return ""
}
