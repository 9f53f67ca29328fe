package shake

import (
	"reflect"
	"runtime"
	"unsafe"
)

// The grader also notes, around every Lock, RLock, Unlock and RUnlock
// statement of the code it grades, which goroutine asks for which lock,
// gets it and lets it go: [Locking], [Locked] and [Unlocked]. When the
// code hangs on a mutex, the harness reads the notes back ([Locks]) to
// say what each stuck goroutine holds and waits for: two locks taken in
// opposite orders, a read lock taken twice while a writer waits, a lock
// never given back.
//
// Like Point, the notes must order nothing, or they would hide the races
// the detector should report: they are plain writes to a table, one slot
// per goroutine, in functions the race detector does not see
// (//go:norace), and they are read only when every goroutine they
// describe is blocked. Two goroutines whose ids fall in one slot can spoil
// each other's notes; that costs a verdict its detail, never a grade.

// slots is how many goroutines the table keeps apart; maxHeld is how many
// locks one goroutine's notes hold at once (more are not noted).
const (
	slots   = 1 << 12
	maxHeld = 8
)

// note is one lock in a goroutine's notes: which (its address), how
// (read), and the statement's file (in the package) and line.
type note struct {
	addr uintptr
	read bool
	file string
	line int
}

type slot struct {
	g       uint64
	held    [maxHeld]note
	n       int
	wait    note
	waiting bool
}

var table [slots]slot

// Locking notes that the calling goroutine asks, at line of file, for the
// lock at p (an RLock when read): it waits until [Locked].
func Locking[T any](p *T, read bool, file string, line int) {
	locking(note{addrOf(p), read, file, line})
}

// Locked notes that the calling goroutine got the lock at p, at line of
// file.
func Locked[T any](p *T, read bool, file string, line int) { locked(note{addrOf(p), read, file, line}) }

// Unlocked notes that the calling goroutine let the lock at p go.
func Unlocked[T any](p *T, read bool) { unlocked(addrOf(p), read) }

// addrOf is the address of the lock p points to: p itself for a lock held
// by value (a sync.Mutex field, a struct embedding one), the pointer *p
// holds for a lock held by pointer (a *sync.Mutex field, a pointer to a
// struct embedding one, a sync.Locker), so that every path to one lock
// notes the same address.
func addrOf[T any](p *T) uintptr {
	v := reflect.ValueOf(p).Elem()
	if v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.UnsafePointer {
		return v.Pointer()
	}
	return uintptr(unsafe.Pointer(p))
}

// mine returns the calling goroutine's slot, claimed for it.
//
//go:norace
func mine() *slot {
	g := goid()
	s := &table[g%slots]
	if s.g != g {
		*s = slot{g: g}
	}
	return s
}

//go:norace
func locking(n note) {
	s := mine()
	s.wait, s.waiting = n, true
}

//go:norace
func locked(n note) {
	s := mine()
	s.waiting = false
	if s.n < maxHeld {
		s.held[s.n] = n
		s.n++
	}
}

//go:norace
func unlocked(addr uintptr, read bool) {
	if !mine().drop(addr, read) {
		// A lock may be unlocked by another goroutine than the one that
		// locked it: drop it from the notes of whoever holds it.
		for i := range table {
			if table[i].drop(addr, read) {
				return
			}
		}
	}
}

// drop takes the lock at addr out of the slot's held notes, the last one
// noted first; false if it holds none.
//
//go:norace
func (s *slot) drop(addr uintptr, read bool) bool {
	for i := s.n - 1; i >= 0; i-- {
		if s.held[i].addr == addr && s.held[i].read == read {
			copy(s.held[i:s.n], s.held[i+1:s.n])
			s.n--
			return true
		}
	}
	return false
}

// goid is the calling goroutine's id, as stack dumps show it. Reading it
// from a stack dump costs microseconds, too much for every lock of a busy
// test, so it is read from the runtime's descriptor of the goroutine, at
// the offset goidOffset found when the package started; where that is
// not known, from the dump.
//
//go:norace
//go:nocheckptr
func goid() uint64 {
	if goidOffset >= 0 {
		return wordAt(goidOffset)
	}
	return goidFromStack()
}

// goidOffset is where the runtime keeps a goroutine's id in its
// descriptor, -1 if unknown: the one offset, among the descriptor's first
// words, that holds the id of each of a few fresh goroutines.
var goidOffset = func() int {
	if !hasG {
		return -1
	}
	const words = 64
	found := -1
	for off := 0; off < words*8; off += 8 {
		ok := true
		for range 3 {
			match := make(chan bool)
			go func() { match <- wordAt(off) == goidFromStack() }()
			same := <-match // always received: the goroutine must end
			ok = ok && same
		}
		if ok {
			if found >= 0 {
				return -1 // two candidates: trust neither
			}
			found = off
		}
	}
	return found
}()

// wordAt reads the word at offset off in the calling goroutine's
// descriptor (outside any Go allocation, hence no checkptr).
//
//go:nocheckptr
func wordAt(off int) uint64 { return *(*uint64)(unsafe.Add(getg(), off)) }

// goidFromStack reads the calling goroutine's id from its stack dump.
func goidFromStack() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	var id uint64
	for i := len(prefix); i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + uint64(b[i]-'0')
	}
	return id
}

// Forget clears the notes: what goroutines of earlier tests hold (a lock
// a mutant never gave back) is no news to the next, and the memory of such
// a lock may be reused for another. Call it when no goroutine that takes
// notes can run: before a test starts the code.
//
//go:norace
func Forget() { clear(table[:]) }

// Lock is one lock in the notes: its address, whether it is a read lock,
// and the statement that asked for it or took it (File is the file's name
// in its package).
type Lock struct {
	Addr uintptr
	Read bool
	File string
	Line int
}

// Notes is what the notes say of one goroutine: the locks it holds, and
// the one it waits for (Waits false: none).
type Notes struct {
	Holds []Lock
	Wait  Lock
	Waits bool
}

// Locks returns the notes of every goroutine that holds or waits for a
// lock, by goroutine id, including goroutines that have ended since (a
// lock they never gave back stays in their notes). Call it only while
// the goroutines of the code are blocked.
//
//go:norace
func Locks() map[int]Notes {
	out := map[int]Notes{}
	for i := range table {
		s := table[i]
		if s.g == 0 || (s.n == 0 && !s.waiting) {
			continue
		}
		var n Notes
		for _, h := range s.held[:s.n] {
			n.Holds = append(n.Holds, h.lock())
		}
		if s.waiting {
			n.Wait, n.Waits = s.wait.lock(), true
		}
		out[int(s.g)] = n
	}
	return out
}

func (n note) lock() Lock { return Lock{Addr: n.addr, Read: n.read, File: n.file, Line: n.line} }
