package ratelimit

// B1 with a limiter passed to Combine more than once: it counts once, one
// token of it per call. Each scenario builds the same limiters twice and
// plays the same calls, at the same instants, on a Multi made with the
// repeats and on one made with each limiter once; every answer, every
// return and every token left over must be the same in both.

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

type testRepeatLim struct {
	r     float64
	burst int
}

// The kinds of step.
const (
	testRepeatAllow = iota // m.Allow()
	testRepeatWait         // m.Wait(ctx)
	testRepeatOwn          // one limiter's own Allow, which counts the tokens the Multi left
)

type testRepeatStep struct {
	gap      int // grid steps the clock moves first
	kind     int
	lim      int // testRepeatOwn: which limiter
	deadline int // testRepeatWait: 0 none; 1, 2, 3: halfway to, exactly at, 1ns after the token (each limiter once)
	cancelAt int // testRepeatWait: cancel after this many grid steps of waiting; -1 never
}

type testRepeatScenario struct {
	lims  []testRepeatLim
	args  []int // Combine's arguments, as indices in lims: each at least once, some more
	steps []testRepeatStep
}

var testRepeatNames = []string{"a", "b", "c"}

// testRepeatRates have intervals of 1s, 500ms and 250ms: every token is
// due on the grid of the smallest interval in play.
var testRepeatRates = []float64{1, 2, 4}

func (s testRepeatScenario) list(args []int) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = testRepeatNames[a]
	}
	return strings.Join(names, ", ")
}

// once is args with the repeats left out, in the order they first come.
func (s testRepeatScenario) once() []int {
	var out []int
	for _, a := range s.args {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// grid is the smallest token interval in play: every due time is on it.
func (s testRepeatScenario) grid() time.Duration {
	g := time.Duration(0)
	for _, l := range s.lims {
		if iv := testDue(l.r, 0, 1); g == 0 || iv < g {
			g = iv
		}
	}
	return g
}

func (s testRepeatScenario) String() string {
	var b strings.Builder
	for i, l := range s.lims {
		fmt.Fprintf(&b, "%s = New(clk, %v per second, burst %d); ", testRepeatNames[i], l.r, l.burst)
	}
	fmt.Fprintf(&b, "m = Combine(%s), compared with Combine(%s) over a copy of the same limiters", s.list(s.args), s.list(s.once()))
	g := s.grid()
	for _, st := range s.steps {
		if st.gap > 0 {
			fmt.Fprintf(&b, "; move the clock %v", time.Duration(st.gap)*g)
		}
		switch st.kind {
		case testRepeatAllow:
			b.WriteString("; m.Allow()")
		case testRepeatOwn:
			fmt.Fprintf(&b, "; %s.Allow() on its own", testRepeatNames[st.lim])
		case testRepeatWait:
			b.WriteString("; m.Wait(ctx")
			switch st.deadline {
			case 1:
				b.WriteString(" with a deadline halfway to the token")
			case 2:
				b.WriteString(" with a deadline exactly when the token is due")
			case 3:
				b.WriteString(" with a deadline 1ns after the token is due")
			}
			b.WriteString(")")
			if st.cancelAt >= 0 {
				fmt.Fprintf(&b, ", cancelled after %v if still waiting", time.Duration(st.cancelAt)*g)
			}
		}
	}
	return b.String()
}

func testDrawRepeats(r *rapid.T) testRepeatScenario {
	var s testRepeatScenario
	k := rapid.IntRange(1, 3).Draw(r, "limiters")
	for range k {
		s.lims = append(s.lims, testRepeatLim{
			r:     rapid.SampledFrom(testRepeatRates).Draw(r, "rate"),
			burst: rapid.IntRange(1, 3).Draw(r, "burst"),
		})
	}
	args := make([]int, k)
	for i := range args {
		args[i] = i
	}
	for range rapid.IntRange(1, 3).Draw(r, "repeats") {
		args = append(args, rapid.IntRange(0, k-1).Draw(r, "repeated"))
	}
	s.args = rapid.Permutation(args).Draw(r, "Combine's arguments")
	for range rapid.IntRange(1, 6).Draw(r, "steps") {
		st := testRepeatStep{kind: rapid.SampledFrom([]int{testRepeatAllow, testRepeatWait, testRepeatWait, testRepeatOwn}).Draw(r, "call"), cancelAt: -1}
		if rapid.Bool().Draw(r, "clock moves") {
			st.gap = rapid.SampledFrom([]int{1, 2, 3, 12}).Draw(r, "grid steps")
		}
		switch st.kind {
		case testRepeatOwn:
			st.lim = rapid.IntRange(0, k-1).Draw(r, "own limiter")
		case testRepeatWait:
			st.deadline = rapid.IntRange(0, 3).Draw(r, "deadline")
			if rapid.Bool().Draw(r, "cancelled") {
				st.cancelAt = rapid.IntRange(0, 2).Draw(r, "cancel after grid steps")
			}
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testRepeatFixed are played on every run before the explored ones: a
// repeat that is not next to its first, with Allow first and with Wait
// first.
var testRepeatFixed = []testRepeatScenario{
	{lims: []testRepeatLim{{2, 1}, {4, 2}}, args: []int{0, 1, 0},
		steps: []testRepeatStep{{kind: testRepeatAllow}, {kind: testRepeatOwn, lim: 0}, {gap: 2, kind: testRepeatAllow},
			{kind: testRepeatOwn, lim: 1}, {kind: testRepeatOwn, lim: 1}}},
	{lims: []testRepeatLim{{1, 1}, {2, 1}, {4, 3}}, args: []int{1, 0, 2, 0},
		steps: []testRepeatStep{{kind: testRepeatWait, cancelAt: -1}, {kind: testRepeatWait, deadline: 3, cancelAt: -1},
			{kind: testRepeatWait, cancelAt: 1}, {kind: testRepeatOwn, lim: 0}, {gap: 4, kind: testRepeatOwn, lim: 2}}},
}

// testRepeatWorld is one copy of the limiters and the Multi over them.
type testRepeatWorld struct {
	ls   []*Limiter
	m    *Multi
	call string // "Combine(a, b, a)"
}

// testRepeatModel is the README's limiters, one call at a time: only to
// place deadlines where they matter. The verdict compares the two worlds.
type testRepeatModel []testBucket

func (md testRepeatModel) due(now time.Duration) time.Duration {
	due := now
	for i := range md {
		b := md[i]
		due = max(due, b.next(now))
	}
	return due
}

func (md testRepeatModel) take(now time.Duration) {
	for i := range md {
		md[i].next(now)
		md[i].taken++
	}
}

// giveBack is a cancel with no call after it: every token comes back.
func (md testRepeatModel) giveBack() {
	for i := range md {
		md[i].taken--
	}
}

// testRepeatStart starts f on its own goroutine and lets it settle. It
// reports a call stuck on a limiter's mutex (nothing else holds one here).
func testRepeatStart[T any](h *katatest.H, what string, c *katatest.Call[T]) bool {
	h.T.Helper()
	if stuck := h.Settle(); stuck != nil {
		h.Errorf("%s locks a repeated limiter twice and gets stuck on its mutex (no other call was running): a "+
			"limiter passed to Combine more than once counts once, one token of it per call, so drop the repeats "+
			"wherever they stand in the list, not only next to each other (sort, then compact; or a set). "+
			"Stuck:\n\t%s", what, strings.Join(stuck, "\n\t"))
		return false
	}
	return !(c.Returned() && c.Panicked())
}

// testRepeatRule ends every mismatch message: the README's rule.
const testRepeatRule = "a limiter passed to Combine more than once counts once: each Allow or Wait takes one token " +
	"of it (a cancel gives that one back), not one per time it is listed"

func (s testRepeatScenario) play(h *katatest.H) {
	ls := make([][]*Limiter, 2)
	for _, l := range s.lims {
		for w := range ls {
			ls[w] = append(ls[w], New(h.Clk, l.r, l.burst))
		}
	}
	pick := func(w int, args []int) []*Limiter {
		out := make([]*Limiter, len(args))
		for i, a := range args {
			out[i] = ls[w][a]
		}
		return out
	}
	rep := testRepeatWorld{ls[0], Combine(pick(0, s.args)...), "Combine(" + s.list(s.args) + ")"}
	one := testRepeatWorld{ls[1], Combine(pick(1, s.once())...), "Combine(" + s.list(s.once()) + ")"}
	md := make(testRepeatModel, len(s.lims))
	for i, l := range s.lims {
		md[i] = testBucket{r: l.r, burst: l.burst}
	}
	g := s.grid()
	allow := func(f func() bool, what string) (bool, bool) {
		c := katatest.Go(h, func() (bool, error) { return f(), nil })
		if !testRepeatStart(h, what, c) {
			return false, false
		}
		got, _ := c.Result() // the leak check comes at the end of the scenario
		return got, true
	}
	ok := true
	for i, st := range s.steps {
		h.Advance(time.Duration(st.gap) * g)
		now := h.Elapsed()
		switch st.kind {
		case testRepeatAllow, testRepeatOwn:
			fr, fo, what := rep.m.Allow, one.m.Allow, rep.call+".Allow()"
			if st.kind == testRepeatOwn {
				fr, fo, what = rep.ls[st.lim].Allow, one.ls[st.lim].Allow, testRepeatNames[st.lim]+".Allow()"
			}
			got, want := false, fo() // each limiter once: nothing to get stuck on
			if st.kind == testRepeatOwn {
				got = fr()
			} else if got, ok = allow(fr, what); !ok {
				return
			}
			if got != want {
				if st.kind == testRepeatAllow {
					h.Errorf("%s does not count a repeated limiter once: its Allow() returned %v at %v (step %d), where "+
						"%s over a copy of the same limiters returned %v; %s",
						rep.call, got, now, i+1, one.call, want, testRepeatRule)
				} else {
					h.Errorf("%s does not count a repeated limiter once: it left %s a different number of tokens, so "+
						"%s on its own returned %v at %v (step %d), where its copy, used through %s, returned %v; %s",
						rep.call, testRepeatNames[st.lim], what, got, now, i+1, one.call, want, testRepeatRule)
				}
				return
			}
			if st.kind == testRepeatOwn {
				b := &md[st.lim]
				if b.next(now) <= now {
					b.taken++
				}
			} else if md.due(now) <= now {
				md.take(now)
			}
		case testRepeatWait:
			if !s.wait(h, i, st, rep, one, md, g) {
				return
			}
		}
	}
}

// wait plays one Wait step on both worlds.
func (s testRepeatScenario) wait(h *katatest.H, i int, st testRepeatStep, rep, one testRepeatWorld, md testRepeatModel, g time.Duration) bool {
	now := h.Elapsed()
	due := md.due(now)
	var opts []katatest.CtxOption
	switch dl := due - now; {
	case st.deadline == 1 && dl/2 > 0:
		opts = append(opts, katatest.Timeout(dl/2))
	case st.deadline == 2 && dl > 0:
		opts = append(opts, katatest.Timeout(dl))
	case st.deadline == 3:
		opts = append(opts, katatest.Timeout(dl+1))
	}
	what := rep.call + ".Wait"
	wr := katatest.StartErr(h, rep.m.Wait, opts...)
	if !testRepeatStart(h, what, wr.Call) {
		katatest.Unwind(h, wr)
		return false
	}
	wo := katatest.StartErr(h, one.m.Wait, opts...)
	if testBroken(h, wr, wo) {
		return false
	}
	state := func(c katatest.ErrCall) string {
		if !c.Returned() {
			return "was still waiting"
		}
		if err := c.Err(); err != nil {
			return fmt.Sprintf("had returned %q", err)
		}
		return "had returned nil"
	}
	same := func(when string) bool {
		if wr.Returned() == wo.Returned() {
			return true
		}
		h.Errorf("%s does not count a repeated limiter once: its Wait %s %s (step %d, started at %v), where %s "+
			"over a copy of the same limiters %s; %s, and Wait returns when the latest of the tokens it reserved "+
			"is due", rep.call, state(wr), when, i+1, now, one.call, state(wo), testRepeatRule)
		katatest.Unwind(h, wr, wo)
		return false
	}
	if !same("at once") {
		return false
	}
	for step := 0; !wr.Returned(); step++ {
		if step == st.cancelAt || step == 64 {
			wr.Cancel()
			wo.Cancel()
			if stuck := h.Settle(); stuck != nil {
				h.Errorf("%s, cancelled, got stuck on a limiter's mutex: a repeated limiter's token is given back "+
					"with its mutex locked twice; %s. Stuck:\n\t%s", what, testRepeatRule, strings.Join(stuck, "\n\t"))
				katatest.Unwind(h, wr, wo)
				return false
			}
			if !same(fmt.Sprintf("right after the cancel at %v", h.Elapsed())) {
				return false
			}
			break
		}
		h.Advance(g)
		if !same(fmt.Sprintf("at %v", h.Elapsed())) {
			return false
		}
	}
	if !wr.Returned() {
		h.Errorf("%s and %s both ignored their cancel: a cancelled Wait returns ctx.Err() at once", what, one.call+".Wait")
		katatest.Unwind(h, wr, wo)
		return false
	}
	end := h.Elapsed()
	er, eo := wr.Err(), wo.Err() // the leak check comes at the end of the scenario
	kind := func(err error) string {
		switch {
		case err == nil:
			return "nil"
		case errors.Is(err, ErrWouldExceedDeadline):
			return "ErrWouldExceedDeadline"
		case errors.Is(err, context.Canceled):
			return "context.Canceled"
		case errors.Is(err, context.DeadlineExceeded):
			return "context.DeadlineExceeded"
		}
		return fmt.Sprintf("%q", err)
	}
	if kind(er) != kind(eo) {
		h.Errorf("%s does not count a repeated limiter once: its Wait returned %s at %v (step %d, started at %v), "+
			"where %s over a copy of the same limiters returned %s; %s",
			rep.call, kind(er), end, i+1, now, one.call, kind(eo), testRepeatRule)
		return false
	}
	// The model follows, to place the next deadlines.
	if kind(er) == "ErrWouldExceedDeadline" || kind(er) == "context.DeadlineExceeded" {
		return true
	}
	md.take(now)
	if kind(er) == "context.Canceled" && due > end {
		md.giveBack()
	}
	return true
}

func TestB1_ExploreALimiterPassedTwiceCountsOnce(t *testing.T) {
	for _, s := range testRepeatFixed {
		katatest.Run(t, func(h *katatest.H) { s.play(h) })
	}
	katatest.Explore(t, 10, testDrawRepeats, func(h *katatest.H, s testRepeatScenario) { s.play(h) })
}
