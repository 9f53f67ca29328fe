package ratelimit

// B1 with several goroutines at once: Multis and the limiters' own calls
// share limiters. A Multi's Allow takes a token of every limiter or of
// none, and its Wait reserves one of each, each at one instant, so the
// answers must be those of some order of the calls, one at a time.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testSharedOp is one call: of a Multi (multi ≥ 0), or a limiter's own.
type testSharedOp struct {
	kind     int // testAllow, testWait or testWaitDeadline
	multi    int // index in the scenario's multis, or -1
	lim      int // multi < 0: index in the scenario's limiters
	deadline int // testWaitDeadline: grid steps after the call starts
}

type testSharedBatch struct {
	cancels []int            // waiting Waits the test cancels as the batch starts, by position (mod their number)
	callers [][]testSharedOp // one sequence of calls per goroutine, all starting at once
	advance int              // grid steps the clock moves after the batch
}

type testSharedScenario struct {
	lims    []testRepeatLim
	multis  [][]int // each Multi's limiters, as indices in lims, in the order they were made
	batches []testSharedBatch
}

// grid is the smallest token interval in play: every due time is on it.
func (s testSharedScenario) grid() time.Duration {
	return testRepeatScenario{lims: s.lims}.grid()
}

func (s testSharedScenario) multiName(m int) string {
	return fmt.Sprintf("m%d", m+1)
}

func (s testSharedScenario) opName(op testSharedOp) string {
	who := testRepeatNames[op.lim]
	if op.multi >= 0 {
		who = s.multiName(op.multi)
	}
	switch op.kind {
	case testAllow:
		return who + ".Allow()"
	case testWaitDeadline:
		return fmt.Sprintf("%s.Wait(deadline in %v)", who, time.Duration(op.deadline)*s.grid())
	}
	return who + ".Wait()"
}

func (s testSharedScenario) String() string {
	var b strings.Builder
	for i, l := range s.lims {
		fmt.Fprintf(&b, "%s = New(clk, %v per second, burst %d); ", testRepeatNames[i], l.r, l.burst)
	}
	for i, set := range s.multis {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s = Combine(%s)", s.multiName(i), testRepeatScenario{}.list(set))
	}
	g := s.grid()
	for i, bt := range s.batches {
		fmt.Fprintf(&b, "\n  batch %d:", i+1)
		for _, c := range bt.cancels {
			fmt.Fprintf(&b, " cancel waiting Wait #%d (by position among those still waiting, oldest first),", c)
		}
		fmt.Fprintf(&b, " %d goroutines at once:", len(bt.callers))
		for k, ops := range bt.callers {
			names := make([]string, len(ops))
			for j, op := range ops {
				names[j] = s.opName(op)
			}
			fmt.Fprintf(&b, " [%d: %s]", k+1, strings.Join(names, ", "))
		}
		if bt.advance > 0 {
			fmt.Fprintf(&b, "; then the clock moves %v", time.Duration(bt.advance)*g)
		}
	}
	fmt.Fprintf(&b, "\n  the clock moves %v at a time until every Wait returned; then each limiter's own Allow, burst+1 times", g)
	return b.String()
}

func testDrawShared(r *rapid.T) testSharedScenario {
	var s testSharedScenario
	k := rapid.IntRange(2, 3).Draw(r, "limiters")
	for range k {
		s.lims = append(s.lims, testRepeatLim{
			r:     rapid.SampledFrom(testRepeatRates).Draw(r, "rate"),
			burst: rapid.IntRange(1, 2).Draw(r, "burst"),
		})
	}
	for range rapid.IntRange(1, 2).Draw(r, "multis") {
		set := rapid.SliceOfNDistinct(rapid.IntRange(0, k-1), 2, k, rapid.ID[int]).Draw(r, "a Multi's limiters")
		slices.Sort(set) // one order for all: a lock order by Combine's arguments cannot deadlock here
		s.multis = append(s.multis, set)
	}
	call := func(r *rapid.T, kind int, multi bool) testSharedOp {
		op := testSharedOp{kind: kind, multi: -1}
		if multi {
			op.multi = rapid.IntRange(0, len(s.multis)-1).Draw(r, "which Multi")
		} else {
			op.lim = rapid.IntRange(0, k-1).Draw(r, "which limiter")
		}
		if kind == testWaitDeadline {
			op.deadline = rapid.IntRange(1, 4).Draw(r, "deadline grid steps")
		}
		return op
	}
	for range rapid.IntRange(1, 3).Draw(r, "batches") {
		var bt testSharedBatch
		for g := range rapid.IntRange(2, 4).Draw(r, "goroutines") {
			var ops []testSharedOp
			if rapid.Bool().Draw(r, "an Allow first") {
				ops = append(ops, call(r, testAllow, g == 0 || rapid.Bool().Draw(r, "a Multi's")))
			}
			kind := rapid.SampledFrom([]int{testAllow, testAllow, testWait, testWaitDeadline}).Draw(r, "then")
			ops = append(ops, call(r, kind, (g == 0 && len(ops) == 0) || rapid.Bool().Draw(r, "a Multi's")))
			bt.callers = append(bt.callers, ops)
		}
		bt.advance = rapid.IntRange(0, 3).Draw(r, "advance grid steps")
		if len(s.batches) > 0 {
			bt.cancels = rapid.SliceOfN(rapid.IntRange(0, 7), 0, 2).Draw(r, "cancels")
		}
		s.batches = append(s.batches, bt)
	}
	return s
}

// testSharedIn is a call as the model sees it.
type testSharedIn struct {
	op   testSharedOp
	name string        // "m1.Allow()"
	set  []int         // the limiters it acts on
	now  time.Duration // mock time when the call started
	id   int           // a Wait's number
	part int           // only in a verdict: a part of a Multi's Allow on one limiter (testSharedCheck, testSharedTake)
}

// The parts of a Multi's Allow that checks each limiter under its own lock,
// then takes from each.
const (
	testSharedCheck = 1 + iota // the limiter has a token due: nothing changes
	testSharedTake             // the limiter's token, if it has one
)

// testSharedOut is how a call ended. A Wait's window is filled in by the
// test goroutine once it saw the Wait returned.
type testSharedOut struct {
	allowed bool
	err     error
	atOnce  bool          // returned before the clock moved
	lo, hi  time.Duration // else: returned while the clock moved from lo to hi

	cancelled bool          // the test cancelled this Wait while it waited
	cancelAt  time.Duration // when
	giveBacks []func(any)   // end the give-backs in the history, once the Wait returned
}

// testSharedState is every limiter's bucket, and the tokens the cancelled
// Waits reserved: "id/limiter/anchor/taken;" for each.
type testSharedState struct {
	b     [3]testBucket
	holds string
}

// testSharedGiveBack gives back the tokens Wait id reserved of the
// limiters in set, each under the rule for one; with allOrNone, all of
// them only if every one can go back (the mistake, used only to name it).
// ok is false if the Wait has not reserved yet.
func testSharedGiveBack(st testSharedState, id int, set []int, allOrNone bool) (testSharedState, bool) {
	type hold struct {
		id, lim int
		anchor  time.Duration
		taken   int
	}
	var mine []hold
	var keep strings.Builder
	for _, e := range strings.Split(st.holds, ";") {
		var h hold
		if n, _ := fmt.Sscanf(e, "%d/%d/%d/%d", &h.id, &h.lim, &h.anchor, &h.taken); n != 4 {
			continue
		}
		if h.id == id && slices.Contains(set, h.lim) {
			mine = append(mine, h)
		} else {
			keep.WriteString(e + ";")
		}
	}
	if len(mine) == 0 {
		return st, false
	}
	back := func(h hold) bool { return st.b[h.lim].taken == h.taken && st.b[h.lim].anchor == h.anchor }
	all := true
	for _, h := range mine {
		all = all && back(h)
	}
	for _, h := range mine {
		if back(h) && (all || !allOrNone) {
			st.b[h.lim].taken--
		}
	}
	st.holds = keep.String()
	return st, true
}

func testSharedModel(s testSharedScenario, allOrNone bool) porcupine.Model {
	grid := s.grid()
	return porcupine.Model{
		Init: func() any {
			var st testSharedState
			for i, l := range s.lims {
				st.b[i] = testBucket{r: l.r, burst: l.burst}
			}
			return st
		},
		Step: func(state, input, output any) (bool, any) {
			st, in := state.(testSharedState), input.(*testSharedIn)
			out, _ := output.(*testSharedOut) // nil for a give-back
			if in.op.kind == testGiveBack {
				next, ok := testSharedGiveBack(st, in.id, in.set, allOrNone)
				return ok, next
			}
			if in.part != 0 {
				b := &st.b[in.set[0]]
				due := b.next(in.now) <= in.now
				if in.part == testSharedTake && due {
					b.taken++
				}
				return in.part == testSharedTake || due, st
			}
			due := in.now
			for _, i := range in.set {
				due = max(due, st.b[i].next(in.now))
			}
			if in.op.kind == testAllow {
				if due <= in.now {
					for _, i := range in.set {
						st.b[i].taken++
					}
				}
				return (due <= in.now) == out.allowed, st
			}
			if in.op.kind == testWaitDeadline && due >= in.now+time.Duration(in.op.deadline)*grid {
				return out.atOnce && errors.Is(out.err, ErrWouldExceedDeadline), state
			}
			for _, i := range in.set {
				st.b[i].taken++
				if out.cancelled {
					st.holds += fmt.Sprintf("%d/%d/%d/%d;", in.id, i, st.b[i].anchor, st.b[i].taken)
				}
			}
			switch {
			case out.cancelled:
				// Still waiting when cancelled: the latest token was not due yet.
				return due > out.cancelAt && errors.Is(out.err, context.Canceled), st
			case out.err != nil:
				return false, st
			case out.atOnce:
				return due <= in.now, st
			}
			return out.lo < due && due <= out.hi, st
		},
		DescribeOperation: func(input, output any) string {
			in := input.(*testSharedIn)
			out, _ := output.(*testSharedOut)
			switch in.op.kind {
			case testAllow:
				return fmt.Sprintf("at %v %s → %v", in.now, in.name, out.allowed)
			case testGiveBack:
				return fmt.Sprintf("at %v the test cancelled Wait #%d %s while it waited (each limiter's token goes "+
					"back unless a call reserved a token of that limiter after it)", in.now, in.id, in.name)
			}
			what := fmt.Sprintf("at %v Wait #%d %s", in.now, in.id, in.name)
			if out.cancelled {
				return fmt.Sprintf("%s → was still waiting at %v when cancelled, returned %v", what, out.cancelAt, out.err)
			}
			if out.atOnce {
				return fmt.Sprintf("%s → returned %v at once", what, out.err)
			}
			return fmt.Sprintf("%s → returned %v while the clock moved from %v to %v", what, out.err, out.lo, out.hi)
		},
	}
}

// testSharedWaiter is a call the test watches until it returns.
type testSharedWaiter struct {
	call   *katatest.Call[struct{}]
	out    *testSharedOut // the last call's: a Wait's, or nil
	in     *testSharedIn  // the last call's
	cancel context.CancelFunc
}

func (s testSharedScenario) play(h *katatest.H) {
	grid := s.grid()
	ls := make([]*Limiter, len(s.lims))
	for i, l := range s.lims {
		ls[i] = New(h.Clk, l.r, l.burst)
	}
	ms := make([]*Multi, len(s.multis))
	for i, set := range s.multis {
		args := make([]*Limiter, len(set))
		for j, a := range set {
			args[j] = ls[a]
		}
		ms[i] = Combine(args...)
	}
	hi := &katatest.History{}
	var all []*katatest.Call[struct{}]
	var pending []testSharedWaiter
	var cancels []context.CancelFunc
	release := func() {
		for _, cancel := range cancels {
			cancel()
		}
		for i := 0; i < 100 && h.Settle() != nil; i++ {
			h.Clk.Add(time.Hour)
		}
		for _, c := range all {
			if !c.Stop() {
				return
			}
		}
	}
	settled := func(what string) bool {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s: calls were stuck on a limiter's mutex: a Wait holds a mutex while it waits, so every "+
				"other call on that limiter, and every Multi over it, queues behind it. Reserve the tokens under "+
				"the locks, unlock, then wait on the timer. Stuck:\n\t%s", what, strings.Join(stuck, "\n\t"))
			release()
			return false
		}
		return true
	}
	observe := func(lo time.Duration) {
		var still []testSharedWaiter
		for _, w := range pending {
			if !w.call.Returned() {
				still = append(still, w)
				continue
			}
			if w.out != nil {
				w.out.atOnce, w.out.lo, w.out.hi = lo == h.Elapsed(), lo, h.Elapsed()
			}
		}
		pending = still
	}
	advance := func(steps int) {
		for range steps {
			lo := h.Elapsed()
			h.Advance(grid) // settles before and after: nobody holds a mutex now
			observe(lo)
		}
	}
	waits := 0
	for bi, bt := range s.batches {
		now := h.Elapsed()
		start := make(chan struct{}) // the cancels and the batch's calls, at the same instant
		// Cancel some of the Waits still waiting, just as the batch starts
		// (they are cancelled once its goroutines are ready to go).
		var cancelled []testSharedWaiter
		for _, pick := range bt.cancels {
			var open []testSharedWaiter
			for _, w := range pending {
				if w.out != nil && !w.out.cancelled && !w.call.Returned() {
					open = append(open, w)
				}
			}
			if len(open) == 0 {
				break
			}
			w := open[pick%len(open)]
			w.out.cancelled, w.out.cancelAt = true, now
			// Each limiter's token goes back under its own rule, and at an
			// instant of its own: one give-back per limiter.
			for j, l := range w.in.set {
				w.out.giveBacks = append(w.out.giveBacks, hi.Call(200+10*w.in.id+j, &testSharedIn{op: testSharedOp{
					kind: testGiveBack, multi: w.in.op.multi, lim: w.in.op.lim}, name: w.in.name, set: []int{l},
					now: now, id: w.in.id}))
			}
			cancelled = append(cancelled, w)
		}
		for g, ops := range bt.callers {
			client := bi*10 + g
			ctx, cancel := context.WithCancel(context.Background())
			if last := ops[len(ops)-1]; last.kind == testWaitDeadline {
				ctx, cancel = h.Clk.WithTimeout(context.Background(), time.Duration(last.deadline)*grid)
			}
			cancels = append(cancels, cancel)
			ins := make([]*testSharedIn, len(ops))
			outs := make([]*testSharedOut, len(ops))
			for i, op := range ops {
				in := &testSharedIn{op: op, name: s.opName(op), set: []int{op.lim}, now: now}
				if op.multi >= 0 {
					in.set = s.multis[op.multi]
				}
				if op.kind != testAllow {
					waits++
					in.id = waits
				}
				ins[i], outs[i] = in, &testSharedOut{}
			}
			c := katatest.Go(h, func() (struct{}, error) {
				<-start
				for i, op := range ops {
					ret := hi.Call(client, ins[i])
					out := outs[i]
					switch {
					case op.kind == testAllow && op.multi >= 0:
						out.allowed = ms[op.multi].Allow()
					case op.kind == testAllow:
						out.allowed = ls[op.lim].Allow()
					case op.multi >= 0:
						out.err = ms[op.multi].Wait(ctx)
					default:
						out.err = ls[op.lim].Wait(ctx)
					}
					for _, giveBack := range out.giveBacks {
						giveBack(nil)
					}
					ret(out)
				}
				return struct{}{}, nil
			})
			all = append(all, c)
			w := testSharedWaiter{call: c, in: ins[len(ops)-1], cancel: cancel}
			if ops[len(ops)-1].kind != testAllow {
				w.out = outs[len(ops)-1]
			}
			pending = append(pending, w)
		}
		for _, w := range cancelled {
			w.cancel()
		}
		close(start)
		if !settled(fmt.Sprintf("batch %d: calls from %d goroutines at once", bi+1, len(bt.callers))) {
			return
		}
		for _, w := range cancelled {
			if !w.call.Returned() {
				h.Errorf("Wait #%d %s, cancelled at %v while it waited, did not return at once (the mock clock stood "+
					"still): select on ctx.Done() together with the timer", w.in.id, w.in.name, now)
				release()
				return
			}
		}
		for _, c := range all {
			if c.Returned() && c.Panicked() {
				release()
				return
			}
		}
		observe(now)
		advance(bt.advance)
	}
	for i := 0; len(pending) > 0; i++ {
		if i > 4*(waits+2) { // each Wait adds at most one interval of debt to each limiter
			h.Errorf("%d call(s) were still waiting at %v, long after every token they could have reserved was due: "+
				"a Multi's Wait reserves the next token of every limiter as it starts and returns when the latest "+
				"is due", len(pending), h.Elapsed())
			release()
			return
		}
		advance(1)
	}
	for i, l := range ls {
		for range s.lims[i].burst + 1 {
			op := testSharedOp{kind: testAllow, multi: -1, lim: i}
			ret := hi.Call(100, &testSharedIn{op: op, name: s.opName(op), set: []int{i}, now: h.Elapsed()})
			ret(&testSharedOut{allowed: l.Allow()})
		}
	}
	s.verdict(h, hi.Operations())
}

// verdict fails the scenario unless some order of the calls, one at a
// time, explains every answer, and names the mistake it can.
func (s testSharedScenario) verdict(h *katatest.H, ops []porcupine.Operation) {
	model := testSharedModel(s, false)
	if porcupine.CheckOperations(model, ops) {
		return
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		who := "the test goroutine"
		if op.ClientId < 100 {
			who = fmt.Sprintf("batch %d, goroutine %d", op.ClientId/10+1, op.ClientId%10+1)
		}
		lines[i] = fmt.Sprintf("%s: %s (started at step %d, returned at step %d)",
			who, model.DescribeOperation(op.Input, op.Output), op.Call, op.Return)
	}
	// The mistake's model gives a Wait's tokens back at one instant, all or
	// none: its give-backs, merged into one.
	var merged []porcupine.Operation
	at := map[int]int{}
	for _, op := range ops {
		in := op.Input.(*testSharedIn)
		if in.op.kind != testGiveBack {
			merged = append(merged, op)
			continue
		}
		if i, ok := at[in.id]; ok {
			m := merged[i].Input.(*testSharedIn)
			merged[i].Input = &testSharedIn{op: m.op, name: m.name, set: append(slices.Clone(m.set), in.set...), now: m.now, id: m.id}
			continue
		}
		at[in.id] = len(merged)
		merged = append(merged, op)
	}
	if porcupine.CheckOperations(testSharedModel(s, true), merged) {
		h.Errorf("a cancelled Wait of a Multi had not given back, by the time it returned, the tokens of the "+
			"limiters nobody reserved on after it (it kept them all because a later call reserved on one of them, "+
			"or gave them back only later): their next callers were refused or waited an interval more. A cancel "+
			"gives back each limiter's token under the rule for one, before Wait returns: limiter by limiter, the "+
			"token goes back unless a call reserved a token of that limiter after it.\nThe calls:\n%s",
			strings.Join(lines, "\n"))
		return
	}
	// A Multi's Allow that answered true, split into a check and a take of
	// each of its limiters, each at any instant while it ran: the check
	// finds a token due, the take takes it if it is still there.
	var yes []int
	for i, op := range ops {
		if in := op.Input.(*testSharedIn); in.op.multi >= 0 && in.op.kind == testAllow && op.Output.(*testSharedOut).allowed {
			yes = append(yes, i)
		}
	}
	split := func(which ...int) []porcupine.Operation {
		var out []porcupine.Operation
		for i, op := range ops {
			if !slices.Contains(which, i) {
				out = append(out, op)
				continue
			}
			in := op.Input.(*testSharedIn)
			for _, l := range in.set {
				for _, kind := range []int{testSharedCheck, testSharedTake} {
					part := op
					part.Input = &testSharedIn{op: in.op, name: in.name, set: []int{l}, now: in.now, part: kind}
					out = append(out, part)
				}
			}
		}
		return out
	}
	// Only where every call starts at a whole number of every limiter's
	// token intervals: between two token instants, arithmetic that loses
	// part of a token now and then could pass for a token taken apart.
	for _, op := range ops {
		for _, l := range s.lims {
			if op.Input.(*testSharedIn).now%testDue(l.r, 0, 1) != 0 {
				yes = nil
			}
		}
	}
	culprit := -1
	for _, i := range yes {
		if porcupine.CheckOperations(model, split(i)) {
			culprit = i
			break
		}
	}
	if culprit < 0 && len(yes) > 1 && porcupine.CheckOperations(model, split(yes...)) {
		culprit = yes[0]
	}
	if culprit >= 0 {
		in := ops[culprit].Input.(*testSharedIn)
		m := in.op.multi
		h.Errorf("%s (%s = Combine(%s)) answered true at %v without taking a token of every one of its limiters at one "+
			"instant: the answers are explained only if it took them one limiter at a time, so that a call on a shared "+
			"limiter in between took a token it had counted on, and the Multi went through with a token missing or "+
			"took from some limiters only. Allow takes from every limiter or from none, at one instant: lock all of "+
			"them (always in one order), check that each has a token due, take one of each, then unlock; checking "+
			"each under its own lock and then calling each one's Allow leaves a window between the two.\nThe calls:\n%s",
			in.name, s.multiName(m), testRepeatScenario{}.list(s.multis[m]), in.now, strings.Join(lines, "\n"))
		return
	}
	h.Errorf("%s.\nAllow and Wait of Multis and of their limiters, called from several goroutines at once, gave "+
		"answers that no order of the calls explains, each placed between its start and its return; the calls:\n%s",
		testSharedFirstUnexplained(model, ops), strings.Join(lines, "\n"))
}

// testSharedFirstUnexplained replays the calls one at a time in the order
// they started and names the first one the README's rules cannot explain
// there.
func testSharedFirstUnexplained(model porcupine.Model, ops []porcupine.Operation) string {
	st := model.Init()
	for _, op := range ops {
		ok, next := model.Step(st, op.Input, op.Output)
		if !ok {
			in := op.Input.(*testSharedIn)
			var rule string
			switch {
			case in.op.kind == testGiveBack:
				rule = "a cancelled Wait gives back each limiter's token under the rule for one: limiter by limiter, " +
					"the token goes back unless a call reserved a token of that limiter after it"
			case in.op.multi >= 0 && in.op.kind == testAllow:
				rule = "a Multi's Allow takes a token of every limiter when each has one due at clk.Now(), all at " +
					"one instant under all their locks, and otherwise takes nothing; " + testArithmetic
			case in.op.multi >= 0 && in.op.kind == testWaitDeadline:
				rule = "a Multi's Wait whose latest token is due at or after its deadline fails at once and takes " +
					"nothing from any limiter; otherwise it reserves one token of each and returns when the latest is " +
					"due; " + testArithmetic
			case in.op.multi >= 0:
				rule = "a Multi's Wait reserves the next token of every limiter at one instant, under all their locks, " +
					"and returns nil when the latest of them is due; " + testArithmetic
			case in.op.kind == testAllow:
				rule = "a limiter's own Allow takes a token only if one is due at clk.Now(), and the tokens a Multi " +
					"took or reserved are gone for it; " + testArithmetic
			default:
				rule = "a limiter's own Wait reserves its next token, behind the tokens Multis reserved, and fails at " +
					"once, taking nothing, when that token is due at or after its deadline; " + testArithmetic
			}
			return fmt.Sprintf("taking the calls one at a time in the order they started, the first that the "+
				"README cannot explain is: %s. The rule: %s", model.DescribeOperation(op.Input, op.Output), rule)
		}
		st = next
	}
	return "taken one at a time in the order they started, every call is explained; the calls that overlapped " +
		"must still give answers that some order explains"
}

// testSharedAtOnce: two limiters of burst 1 and a Multi over both, whose
// Allow four goroutines call at once, three times, with both buckets full
// again in between: each time one call goes through, and only one.
var testSharedAtOnce = func() testSharedScenario {
	s := testSharedScenario{lims: []testRepeatLim{{r: 2, burst: 1}, {r: 4, burst: 1}}, multis: [][]int{{0, 1}}}
	m := testSharedOp{kind: testAllow, multi: 0}
	for range 3 {
		s.batches = append(s.batches, testSharedBatch{callers: [][]testSharedOp{{m}, {m}, {m}, {m}}, advance: 2})
	}
	return s
}()

// testSharedCancel: a's token is reserved after m1's Wait, b's is not; m1's
// Wait is cancelled as b's own Allow and a Wait on a start: b's token must
// go back, a's stays with the later Wait, and b has a token 250ms on.
var testSharedCancel = testSharedScenario{
	lims: []testRepeatLim{{r: 2, burst: 1}, {r: 4, burst: 1}}, multis: [][]int{{0, 1}},
	batches: []testSharedBatch{
		{callers: [][]testSharedOp{{{kind: testAllow, multi: 0}, {kind: testWait, multi: 0}}}},
		{callers: [][]testSharedOp{{{kind: testWait, multi: -1, lim: 0}}}},
		{cancels: []int{0}, callers: [][]testSharedOp{{{kind: testAllow, multi: -1, lim: 1}},
			{{kind: testWait, multi: -1, lim: 0}}}, advance: 1},
		{callers: [][]testSharedOp{{{kind: testAllow, multi: -1, lim: 1}}, {{kind: testAllow, multi: -1, lim: 1}}}},
	},
}

func TestB1_ExploreMultisAndTheirLimitersCalledAtOnce(t *testing.T) {
	katatest.Repeat(t, 6, func(h *katatest.H) { testSharedAtOnce.play(h) })
	katatest.Repeat(t, 3, func(h *katatest.H) { testSharedCancel.play(h) })
	katatest.Explore(t, 6, testDrawShared, func(h *katatest.H, s testSharedScenario) { s.play(h) })
}
