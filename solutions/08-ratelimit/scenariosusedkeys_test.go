package ratelimit

// B2: every call uses its key, whatever it answers. "A key is forgotten
// once its bucket is full again and no Allow or Wait has used it for at
// least idle": an Allow that answers false, a Wait that fails at once with
// ErrWouldExceedDeadline and a Wait cancelled while it waits use the key
// as much as a call that takes a token. Each scenario is a drawn sequence
// of such calls on two keys, one at a time, with the clock moving between
// them; Len is checked after every step and at every instant where the
// README changes its answer (a bucket full again, idle passed since a
// call), and 1ns before, against a model of the README.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

const (
	testUseAllow    = iota // Allow(key)
	testUseWait            // Wait(ctx, key), no deadline
	testUseDeadline        // Wait(ctx, key), ctx with a deadline d away
	testUseCancel          // cancel a waiting Wait, the pick-th (mod how many wait)
	testUseMove            // the clock moves d
)

type testUseStep struct {
	kind int
	key  int
	d    time.Duration
	pick int
}

type testUseScenario struct {
	r     float64
	burst int
	idle  time.Duration
	steps []testUseStep
}

func (s testUseScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "k := NewKeyed(clk, %v per second, burst %d, idle %v); one call at a time, each Wait on a "+
		"goroutine of its own:", s.r, s.burst, s.idle)
	for _, st := range s.steps {
		key := testKeys[st.key]
		switch st.kind {
		case testUseAllow:
			fmt.Fprintf(&b, " Allow(%q);", key)
		case testUseWait:
			fmt.Fprintf(&b, " Wait(ctx, %q);", key)
		case testUseDeadline:
			fmt.Fprintf(&b, " Wait(ctx with a deadline %v away, %q);", st.d, key)
		case testUseCancel:
			fmt.Fprintf(&b, " cancel waiting Wait #%d (by position among those still waiting, oldest first);", st.pick)
		case testUseMove:
			fmt.Fprintf(&b, " the clock moves %v;", st.d)
		}
	}
	b.WriteString(" then the clock runs on until every key is forgotten. Len is called after every step, and " +
		"at every instant where a key may go, and 1ns before")
	return b.String()
}

func testDrawUse(r *rapid.T) testUseScenario {
	s := testUseScenario{
		r:     rapid.SampledFrom([]float64{10, 4, 3, 2, 1}).Draw(r, "rate"),
		burst: rapid.SampledFrom([]int{1, 1, 2}).Draw(r, "burst"),
	}
	iv := testDue(s.r, 0, 1)
	s.idle = iv / 2 * time.Duration(rapid.SampledFrom([]int{0, 1, 2, 3, 4, 6, 8}).Draw(r, "idle, in half intervals"))
	keys := rapid.SampledFrom([]int{1, 1, 2}).Draw(r, "keys")
	for range rapid.IntRange(4, 10).Draw(r, "steps") {
		st := testUseStep{
			kind: rapid.SampledFrom([]int{testUseAllow, testUseAllow, testUseAllow, testUseWait, testUseDeadline,
				testUseDeadline, testUseCancel, testUseMove, testUseMove}).Draw(r, "step"),
			key: rapid.IntRange(0, keys-1).Draw(r, "key"),
		}
		switch st.kind {
		case testUseDeadline:
			st.d = iv / 4 * time.Duration(rapid.IntRange(1, 6).Draw(r, "deadline, in quarter intervals"))
		case testUseCancel:
			st.pick = rapid.IntRange(0, 3).Draw(r, "cancelled Wait")
		case testUseMove:
			st.d = iv / 4 * time.Duration(rapid.IntRange(1, 3).Draw(r, "move, in quarter intervals"))
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testUseKey is the model of one key: its bucket, and its calls.
type testUseKey struct {
	b       testBucket
	touched bool          // a call has used the key
	start   time.Duration // the latest start of a call on it
	end     time.Duration // the latest return of a call on it
	started string        // the call that started last, for a message
	ended   string        // the call that returned last
}

// keep: the README must remember the key at t (its bucket is still
// filling, or a call started less than idle ago). may: it may still
// remember it (a Wait that waited counts as a use from its start to its
// return).
func (k testUseKey) keep(t, idle time.Duration) bool {
	return k.touched && (!k.b.full(t) || t < k.start+idle)
}

func (k testUseKey) may(t, idle time.Duration) bool {
	return k.touched && (!k.b.full(t) || t < k.end+idle)
}

// testUseWaiter is a Wait still waiting, in the model and for real.
type testUseWaiter struct {
	c      katatest.ErrCall
	key    int
	start  time.Duration
	due    time.Duration
	anchor time.Duration
	taken  int
	what   string
}

func (s testUseScenario) play(h *katatest.H) {
	k := NewKeyed(h.Clk, s.r, s.burst, s.idle)
	keys := make([]testUseKey, len(testKeys))
	for i := range keys {
		keys[i].b = testBucket{r: s.r, burst: s.burst}
	}
	var waiting []testUseWaiter
	var all []katatest.ErrCall
	release := func() { katatest.Unwind(h, all...) }
	calls := func() []katatest.ErrCall {
		var ws []katatest.ErrCall
		for _, w := range waiting {
			ws = append(ws, w.c)
		}
		return ws
	}
	// used notes a call on key that started at start and returned at end.
	used := func(key int, start, end time.Duration, what string) {
		kk := &keys[key]
		kk.touched = true
		if start >= kk.start {
			kk.start, kk.started = start, what
		}
		if end >= kk.end {
			kk.end, kk.ended = end, what
		}
	}
	// checkLen compares Len with the model at the current instant.
	checkLen := func() bool {
		now := h.Elapsed()
		lo, hi := 0, 0
		var kept, gone []string
		recent := false // a key kept only by a call less than idle ago
		for i, kk := range keys {
			if kk.keep(now, s.idle) {
				lo++
				if kk.b.full(now) {
					recent = true
					kept = append(kept, fmt.Sprintf("%q's bucket is full, but it was used by %s, less than idle "+
						"(%v) ago", testKeys[i], kk.started, s.idle))
				} else {
					kept = append(kept, fmt.Sprintf("%q's bucket is still filling: it is full again at %v",
						testKeys[i], kk.b.anchor+testDue(s.r, 0, kk.b.taken)))
				}
			}
			if kk.may(now, s.idle) {
				hi++
			} else if kk.touched {
				gone = append(gone, fmt.Sprintf("%q's bucket is full and its last call, %s, returned at least "+
					"idle (%v) ago", testKeys[i], kk.ended, s.idle))
			}
		}
		n := k.Len()
		if n < lo {
			why := "a key whose bucket is still filling is never forgotten: a new bucket would hand out a " +
				"fresh burst"
			if recent {
				why = "every call on a key uses it, whatever it answers, an Allow that answers false, a Wait that " +
					"fails with ErrWouldExceedDeadline or is cancelled too. Mark the key used when a call finds " +
					"it, not only when the call takes a token"
			}
			h.Errorf("Len() is %d at %v, but %d key(s) must still be remembered: %s. The README: \"A key is "+
				"forgotten once its bucket is full again and no Allow or Wait has used it for at least idle\": "+
				"%s\nThe scenario: %s", n, now, lo, strings.Join(kept, "; "), why, s)
			release()
			return false
		}
		if n > hi {
			h.Errorf("Len() is %d at %v, but at most %d key(s) may still be remembered: %s. A key is forgotten "+
				"once its bucket is full again and no call used it for at least idle, and Len forgets such keys "+
				"first\nThe scenario: %s", n, now, hi, strings.Join(gone, "; "), s)
			release()
			return false
		}
		return true
	}
	// moveTo moves the clock to end, stopping at every instant where the
	// README may change Len's answer, and 1ns before it, and where a Wait's
	// token is due.
	moveTo := func(end time.Duration) bool {
		for h.Elapsed() < end {
			now := h.Elapsed()
			next := end
			at := func(t time.Duration) {
				if t > now && t < next {
					next = t
				}
			}
			for _, kk := range keys {
				if !kk.touched {
					continue
				}
				full := kk.b.anchor + testDue(s.r, 0, kk.b.taken)
				for _, t := range []time.Duration{full, kk.start + s.idle, kk.end + s.idle} {
					at(t - 1)
					at(t)
				}
			}
			for _, w := range waiting {
				at(w.due)
			}
			h.Advance(next - now)
			var still []testUseWaiter
			for _, w := range waiting {
				if w.due > next {
					still = append(still, w)
					continue
				}
				if !w.c.Returns("%s, waiting for its token due at %v, had not returned at %v\nThe scenario: %s",
					w.what, w.due, next, s) {
					release()
					return false
				}
				if err := w.c.Err(); err != nil {
					h.Errorf("%s returned %v when its token was due at %v; want nil\nThe scenario: %s", w.what,
						err, w.due, s)
					release()
					return false
				}
				used(w.key, w.start, w.due, fmt.Sprintf("%s, started at %v, returned nil at %v", w.what, w.start,
					w.due))
			}
			waiting = still
			if !checkLen() {
				return false
			}
		}
		return true
	}
	waits := 0
	for _, st := range s.steps {
		now := h.Elapsed()
		kk := &keys[st.key]
		key := testKeys[st.key]
		switch st.kind {
		case testUseAllow:
			want := kk.b.next(now) <= now
			if want {
				kk.b.taken++
			}
			got, ok := testTry(h, "Allow on a Keyed", func() bool { return k.Allow(key) }, calls()...)
			if !ok {
				return
			}
			if got != want {
				h.Errorf("precondition: Allow(%q) at %v returned %v, want %v (%s)\nThe scenario: %s", key, now,
					got, want, testArithmetic, s)
				release()
				return
			}
			used(st.key, now, now, fmt.Sprintf("Allow(%q) → %v at %v", key, got, now))
		case testUseWait, testUseDeadline:
			waits++
			due := kk.b.next(now)
			refused := st.kind == testUseDeadline && due >= now+st.d
			var opts []katatest.CtxOption
			what := fmt.Sprintf("Wait #%d (%q)", waits, key)
			if st.kind == testUseDeadline {
				opts = append(opts, katatest.Timeout(st.d))
				what = fmt.Sprintf("Wait #%d (%q, a deadline %v away)", waits, key, st.d)
			}
			w := katatest.StartErr(h, func(ctx context.Context) error { return k.Wait(ctx, key) }, opts...)
			all = append(all, w)
			if !testSettle(h, "Wait on a Keyed", calls()...) || testBroken(h, all...) {
				return
			}
			switch {
			case refused:
				if !w.Returns("%s started at %v: its token is due at %v, at or after its deadline, so it fails "+
					"at once\nThe scenario: %s", what, now, due, s) {
					release()
					return
				}
				if err := w.Err(); !errors.Is(err, ErrWouldExceedDeadline) {
					h.Errorf("precondition: %s at %v returned %v; its token is due at %v, at or after its "+
						"deadline: want ErrWouldExceedDeadline\nThe scenario: %s", what, now, err, due, s)
					release()
					return
				}
				used(st.key, now, now, fmt.Sprintf("%s → ErrWouldExceedDeadline at %v", what, now))
			case due <= now:
				kk.b.taken++
				if !w.Returns("%s at %v: a token is there, so it returns nil at once\nThe scenario: %s", what,
					now, s) {
					release()
					return
				}
				if err := w.Err(); err != nil {
					h.Errorf("precondition: %s at %v returned %v with a token there; want nil\nThe scenario: %s",
						what, now, err, s)
					release()
					return
				}
				used(st.key, now, now, fmt.Sprintf("%s → nil at once, at %v", what, now))
			default:
				kk.b.taken++
				if !w.Waits("%s at %v returned at once, but its token is due at %v\nThe scenario: %s", what, now,
					due, s) {
					release()
					return
				}
				used(st.key, now, now, fmt.Sprintf("%s, started at %v and waiting", what, now))
				waiting = append(waiting, testUseWaiter{c: w, key: st.key, start: now, due: due, anchor: kk.b.anchor,
					taken: kk.b.taken, what: what})
			}
		case testUseCancel:
			if len(waiting) == 0 {
				continue
			}
			i := st.pick % len(waiting)
			w := waiting[i]
			waiting = slices.Delete(waiting, i, i+1)
			w.c.Cancel()
			if !testSettle(h, "a cancelled Wait on a Keyed", calls()...) {
				return
			}
			if !w.c.Returns("%s, cancelled at %v while it waited, did not return at once\nThe scenario: %s",
				w.what, now, s) {
				release()
				return
			}
			if err := w.c.Err(); !errors.Is(err, context.Canceled) {
				h.Errorf("precondition: %s, cancelled at %v while it waited, returned %v; want "+
					"context.Canceled\nThe scenario: %s", w.what, now, err, s)
				release()
				return
			}
			b := &keys[w.key].b
			if b.taken == w.taken && b.anchor == w.anchor {
				b.taken--
			}
			used(w.key, w.start, now, fmt.Sprintf("%s, started at %v, cancelled at %v", w.what, w.start, now))
		case testUseMove:
			if !moveTo(now + st.d) {
				return
			}
			continue // moveTo checked Len
		}
		if !checkLen() {
			return
		}
	}
	// Run the clock on until every Wait returned and every key may go.
	end := h.Elapsed()
	for _, w := range waiting {
		end = max(end, w.due)
	}
	for _, kk := range keys {
		if kk.touched {
			end = max(end, kk.b.anchor+testDue(s.r, 0, kk.b.taken)+s.idle, kk.end+s.idle)
		}
	}
	// By end every key may go: Len must be 0.
	if !moveTo(end) {
		return
	}
	for _, w := range all {
		if _, ok := w.Finish("Wait"); !ok {
			return
		}
	}
}

// testUseFixed: a key whose last call was refused, or failed on its
// deadline, or was cancelled, is still used by that call.
var testUseFixed = []testUseScenario{
	// Allow → true at 0, Allow → false at 500ms: the bucket is full at 1s,
	// but the key was used at 500ms, so it stays until 2.5s.
	{r: 1, burst: 1, idle: 2 * time.Second, steps: []testUseStep{
		{kind: testUseAllow}, {kind: testUseMove, d: 500 * time.Millisecond}, {kind: testUseAllow}}},
	// Allow → true at 0, at 500ms a Wait with a deadline 100ms away fails.
	{r: 1, burst: 1, idle: 2 * time.Second, steps: []testUseStep{
		{kind: testUseAllow}, {kind: testUseMove, d: 500 * time.Millisecond},
		{kind: testUseDeadline, d: 100 * time.Millisecond}}},
}

func TestB2_ExploreEveryCallUsesItsKeyWhateverItAnswers(t *testing.T) {
	katatest.Replay(t, testUseFixed, func(h *katatest.H, s testUseScenario) { s.play(h) })
	katatest.Explore(t, 6, testDrawUse, func(h *katatest.H, s testUseScenario) { s.play(h) })
}
