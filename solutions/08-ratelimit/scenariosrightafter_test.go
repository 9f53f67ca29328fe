package ratelimit

// R5, B1 and B2 right after a Wait returns. What Wait does to the bucket
// is done when it returns: a cancelled Wait has given its token back (if
// no call reserved after it), so the caller's very next call, on the same
// goroutine with nothing in between, already finds it. Nothing of the
// call may be left for later or for a goroutine of its own.

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
	"gokata/internal/katatest/shake"
)

const (
	testAfterLimiter = iota // Limiter.Wait (R5)
	testAfterMulti          // Multi.Wait over two limiters (B1)
	testAfterKeyed          // Keyed.Wait on one key (B2)
)

// testAfterScenario: the limiters are made at time 0, and each limiter's
// own Allow (a Keyed's on its key) is called early times; the clock moves
// start (a quiet spell: a bucket full again starts a new anchor with the
// next token taken); each limiter's own Allow is called pre times, then
// waiters Waits start one after another, each on
// a goroutine of its own; the clock moves gap; waiter cancel, still
// waiting, is cancelled, and its goroutine calls Wait again as soon as the
// cancelled Wait returns, with a deadline deadline away (0: none). Then
// the clock runs until every Wait is done.
type testAfterScenario struct {
	kind     int
	rates    []float64 // one limiter, or a Multi's two
	bursts   []int
	idle     time.Duration // NewKeyed's
	early    []int         // one count per limiter, or none
	start    time.Duration
	pre      []int // one count per limiter
	waiters  int
	gap      time.Duration
	cancel   int
	follow   int // the next calls' target: -1 the same as the waiters', i a Multi's limiter i alone
	probes   []testProbe
	deadline time.Duration
}

// testProbe is a call that answers at once, made right after the
// cancelled Wait returned and before its goroutine calls Wait again:
// Allow, Wait with a ctx already done, or Wait with a deadline too soon.
type testProbe struct {
	kind     int           // testAllow, testWaitDone or testWaitDeadline
	deadline time.Duration // testWaitDeadline: at or before its token's due time
}

func (p testProbe) String() string {
	switch p.kind {
	case testWaitDone:
		return "Wait with a cancelled ctx"
	case testWaitDeadline:
		return fmt.Sprintf("Wait with a deadline %v away", p.deadline)
	}
	return "Allow"
}

func (s testAfterScenario) String() string {
	var b strings.Builder
	target := "l"
	switch s.kind {
	case testAfterLimiter:
		fmt.Fprintf(&b, "l := New(clk, %v per second, burst %d)", s.rates[0], s.bursts[0])
	case testAfterMulti:
		fmt.Fprintf(&b, "a := New(clk, %v per second, burst %d); b := New(clk, %v per second, burst %d); "+
			"m := Combine(a, b)", s.rates[0], s.bursts[0], s.rates[1], s.bursts[1])
		target = "m"
	case testAfterKeyed:
		fmt.Fprintf(&b, "k := NewKeyed(clk, %v per second, burst %d, idle %v), every call on key \"carol\"",
			s.rates[0], s.bursts[0], s.idle)
		target = "k"
	}
	for i, n := range s.early {
		if n > 0 {
			fmt.Fprintf(&b, "; %s ×%d", s.ownAllow(i), n)
		}
	}
	if s.start > 0 {
		fmt.Fprintf(&b, "; move the clock %v", s.start)
	}
	for i, n := range s.pre {
		if n > 0 {
			fmt.Fprintf(&b, "; %s ×%d", s.ownAllow(i), n)
		}
	}
	fmt.Fprintf(&b, "; %s.Wait: Waits #1..#%d start one after another, each on a goroutine of its own", target, s.waiters)
	if s.gap > 0 {
		fmt.Fprintf(&b, "; move the clock %v", s.gap)
	}
	on := target
	if s.follow >= 0 {
		on = []string{"a", "b"}[s.follow]
	}
	next := on + ".Wait"
	if s.deadline > 0 {
		next += fmt.Sprintf(" with a deadline %v away", s.deadline)
	}
	for i := len(s.probes) - 1; i >= 0; i-- {
		next = fmt.Sprintf("%s.%v, then %s", on, s.probes[i], next)
	}
	fmt.Fprintf(&b, "; cancel Wait #%d while it waits, and its goroutine calls %s as soon as it returned; "+
		"then move the clock until every Wait is done", s.cancel+1, next)
	return b.String()
}

// ownAllow names limiter i's own Allow: a Multi's limiters are a and b.
func (s testAfterScenario) ownAllow(i int) string {
	switch s.kind {
	case testAfterMulti:
		return []string{"a", "b"}[i] + ".Allow()"
	case testAfterKeyed:
		return `k.Allow("carol")`
	}
	return "l.Allow()"
}

// at is when the waiting Wait is cancelled.
func (s testAfterScenario) at() time.Duration { return s.start + s.gap }

func testGCD(a, b time.Duration) time.Duration {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// testAfterModel is the README's buckets, one call at a time.
type testAfterModel struct{ bs []testBucket }

func testNewAfterModel(s testAfterScenario) *testAfterModel {
	m := &testAfterModel{}
	for i, r := range s.rates {
		m.bs = append(m.bs, testBucket{r: r, burst: s.bursts[i]})
	}
	return m
}

// which is the limiters a call of target uses: -1 all of them.
func (m *testAfterModel) which(target int) []int {
	if target >= 0 {
		return []int{target}
	}
	var all []int
	for i := range m.bs {
		all = append(all, i)
	}
	return all
}

func (m *testAfterModel) allow(target int, now time.Duration) bool {
	ls := m.which(target)
	for _, i := range ls {
		if m.bs[i].next(now) > now {
			return false
		}
	}
	for _, i := range ls {
		m.bs[i].taken++
	}
	return true
}

// reserve is a Wait at now on target's limiters: when it returns (ok), or
// false when its token is due at or after its deadline (0: none) and it
// takes nothing.
func (m *testAfterModel) reserve(target int, now, deadline time.Duration) (due time.Duration, holds []testReservation, ok bool) {
	ls := m.which(target)
	for _, i := range ls {
		due = max(due, m.bs[i].next(now))
	}
	if deadline > 0 && due >= now+deadline {
		return 0, nil, false
	}
	for _, i := range ls {
		m.bs[i].taken++
		holds = append(holds, testReservation{id: i, anchor: m.bs[i].anchor, taken: m.bs[i].taken})
	}
	return due, holds, true
}

// giveBack is the cancel of a Wait that reserved holds: each token goes
// back unless a call reserved after it on that limiter. It reports whether
// any did.
func (m *testAfterModel) giveBack(holds []testReservation) bool {
	back := false
	for _, r := range holds {
		if b := &m.bs[r.id]; b.taken == r.taken && b.anchor == r.anchor {
			b.taken--
			back = true
		}
	}
	return back
}

func (m *testAfterModel) clone() *testAfterModel {
	return &testAfterModel{bs: slices.Clone(m.bs)}
}

// testProbeOut is how a probe answered.
type testProbeOut struct {
	allowed     bool
	err, ctxErr error
}

// testAfterPlan is what the model says of a scenario.
type testAfterPlan struct {
	allowed  []bool
	dues     []time.Duration // each waiter's
	gaveBack bool            // the cancelled Wait's token (one of them, at least) went back
	nextOK   bool            // the next Wait waits for its token (else it fails on its deadline)
	nextDue  time.Duration
	keptDue  time.Duration // where the next Wait's token would be due, had the cancel given nothing back
	probed   []bool        // the probes' Allow answers
	renewed  []bool        // by limiter: the cancelled Wait started a new anchor there, and its token goes back
	lostDue  time.Duration // where the next Wait's token would be due, had those tokens not gone back
}

func (s testAfterScenario) plan() testAfterPlan {
	var p testAfterPlan
	m := testNewAfterModel(s)
	for i, n := range s.early {
		for range n {
			p.allowed = append(p.allowed, m.allow(i, 0))
		}
	}
	for i, n := range s.pre {
		for range n {
			p.allowed = append(p.allowed, m.allow(i, s.start))
		}
	}
	var holds [][]testReservation
	p.renewed = make([]bool, len(m.bs))
	for i := range s.waiters {
		before := m.clone()
		due, h, _ := m.reserve(-1, s.start, 0)
		p.dues = append(p.dues, due)
		holds = append(holds, h)
		if i == s.cancel {
			for j := range m.bs {
				p.renewed[j] = m.bs[j].anchor != before.bs[j].anchor
			}
		}
	}
	kept := m.clone()
	p.gaveBack = m.giveBack(holds[s.cancel])
	for j := range m.bs {
		p.renewed[j] = p.renewed[j] && m.bs[j].taken < kept.bs[j].taken
	}
	// lost gives back only the tokens of the limiters not renewed.
	lost := kept.clone()
	lost.giveBack(slices.DeleteFunc(slices.Clone(holds[s.cancel]), func(r testReservation) bool { return p.renewed[r.id] }))
	for _, pr := range s.probes {
		if pr.kind == testAllow {
			p.probed = append(p.probed, m.allow(s.follow, s.at()))
			kept.allow(s.follow, s.at())
			lost.allow(s.follow, s.at())
		}
	}
	p.keptDue, _, _ = kept.reserve(s.follow, s.at(), 0)
	p.lostDue, _, _ = lost.reserve(s.follow, s.at(), 0)
	p.nextDue, _, p.nextOK = m.reserve(s.follow, s.at(), s.deadline)
	return p
}

func testDrawAfter(kind int) func(*rapid.T) testAfterScenario {
	return func(r *rapid.T) testAfterScenario {
		s := testAfterScenario{kind: kind, follow: -1}
		n := 1
		if kind == testAfterMulti {
			n = 2
		}
		for range n {
			s.rates = append(s.rates, rapid.SampledFrom([]float64{10, 4, 2, 1, 0.5}).Draw(r, "rate"))
			s.bursts = append(s.bursts, rapid.IntRange(1, 3).Draw(r, "burst"))
		}
		if kind == testAfterKeyed {
			s.idle = rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, time.Hour}).Draw(r, "idle")
		}
		if kind == testAfterMulti {
			s.follow = rapid.IntRange(-1, 1).Draw(r, "next Wait on (-1: m, 0: a, 1: b)")
		}
		// The calls act at instants where every limiter has a whole number
		// of tokens back (the intervals are whole milliseconds), so only
		// what a cancel gives back is under test, not the arithmetic.
		whole := time.Duration(1)
		for _, r := range s.rates {
			iv := testDue(r, 0, 1)
			whole = whole / testGCD(whole, iv) * iv
		}
		// Half of a Multi's start after a quiet spell: the first token taken
		// of each limiter then starts a new anchor, later than the one it
		// had. Only a combined Wait can start one and still wait (for
		// another limiter's token), so only its cancel has to give back a
		// token of a new anchor; the quiet spell itself is R2's.
		if kind == testAfterMulti && rapid.Bool().Draw(r, "a quiet spell first") {
			for i := range s.rates {
				s.early = append(s.early, rapid.IntRange(0, s.bursts[i]).Draw(r, "Allow calls before it"))
			}
			s.start = whole * time.Duration(rapid.IntRange(1, 2).Draw(r, "quiet spell, in whole intervals"))
		}
		// Each limiter's own Allow (Combine's Allow has tests of its own).
		for i := range s.rates {
			s.pre = append(s.pre, rapid.IntRange(0, s.bursts[i]+1).Draw(r, "Allow calls"))
		}
		s.waiters = rapid.IntRange(1, 4).Draw(r, "waiters")
		// At least one of them waits.
		for slices.Max(s.plan().dues) <= s.start {
			s.waiters++
		}
		var waiting []int
		for i, due := range s.plan().dues {
			if due > s.start {
				waiting = append(waiting, i)
			}
		}
		// Mostly the last to reserve, whose token goes back.
		s.cancel = waiting[len(waiting)-1]
		if rapid.IntRange(0, 3).Draw(r, "cancel: 0-2 the last waiter, 3 any") == 3 {
			s.cancel = rapid.SampledFrom(waiting).Draw(r, "cancelled waiter")
		}
		s.gap = whole * time.Duration(rapid.IntRange(0, int((s.plan().dues[s.cancel]-1-s.start)/whole)).Draw(r, "clock before the cancel, in whole intervals"))
		// Calls that answer at once, between the cancelled Wait and the
		// next Wait: Allow takes a token only if one is due, and a Wait
		// with a ctx already done takes nothing.
		for range rapid.IntRange(0, 2).Draw(r, "calls that answer at once") {
			kinds := []int{testAllow, testWaitDone}
			if s.follow < 0 && kind == testAfterMulti {
				kinds = kinds[1:]
			}
			s.probes = append(s.probes, testProbe{kind: rapid.SampledFrom(kinds).Draw(r, "call")})
		}
		return s
	}
}

func (s testAfterScenario) play(h *katatest.H) {
	// No yields here: the calls run one after another, so there is no
	// window to widen, and a yield right after the cancelled Wait returned
	// would let work it left for later catch up before the next call.
	shake.Off()
	p := s.plan()
	var own []func() bool // each limiter's own Allow
	var probe func() bool
	var wait, next func(context.Context) error
	switch s.kind {
	case testAfterLimiter:
		l := New(h.Clk, s.rates[0], s.bursts[0])
		own, wait, next, probe = []func() bool{l.Allow}, l.Wait, l.Wait, l.Allow
	case testAfterMulti:
		a, b := New(h.Clk, s.rates[0], s.bursts[0]), New(h.Clk, s.rates[1], s.bursts[1])
		m := Combine(a, b)
		own, wait, next, probe = []func() bool{a.Allow, b.Allow}, m.Wait, m.Wait, m.Allow
		if s.follow >= 0 {
			next, probe = []*Limiter{a, b}[s.follow].Wait, []*Limiter{a, b}[s.follow].Allow
		}
	case testAfterKeyed:
		k := NewKeyed(h.Clk, s.rates[0], s.bursts[0], s.idle)
		allow := func() bool { return k.Allow("carol") }
		wait = func(ctx context.Context) error { return k.Wait(ctx, "carol") }
		own, next, probe = []func() bool{allow}, wait, allow
	}
	pre := p.allowed
	for _, phase := range []struct {
		counts []int
		at     time.Duration
	}{{s.early, 0}, {s.pre, s.start}} {
		if phase.at > 0 {
			h.Advance(phase.at)
		}
		for i, n := range phase.counts {
			for j := range n {
				if got := own[i](); got != pre[0] {
					h.Errorf("%s call %d at %v returned %v, want %v: the bucket starts full, with burst tokens, and "+
						"Allow takes one if one is due at clk.Now(); %s", s.ownAllow(i), j+1, phase.at, got, pre[0],
						testArithmetic)
					return
				}
				pre = pre[1:]
			}
		}
	}
	// The waiters; the cancelled one's goroutine calls next as soon as its
	// Wait returned, with nothing in between.
	var (
		calls     []*katatest.Call[struct{}]
		errs      = make([]error, s.waiters)
		cancels   []context.CancelFunc
		cancelled = make(chan struct{})
		probed    = make(chan struct{})
		probeOut  = make([]testProbeOut, len(s.probes))
		ctxErr    error
		nextErr   error
	)
	release := func() {
		for _, cancel := range cancels {
			cancel()
		}
		katatest.Unwind(h, calls...)
	}
	nextCtx, nextCancel := context.WithCancel(context.Background())
	if s.deadline > 0 {
		nextCancel()
		nextCtx, nextCancel = h.Clk.WithDeadline(context.Background(), h.Clk.Now().Add(s.gap+s.deadline))
	}
	cancels = append(cancels, nextCancel)
	probeCtx := make([]context.Context, len(s.probes))
	for i, pr := range s.probes {
		ctx, cancel := context.WithCancel(context.Background())
		switch pr.kind {
		case testWaitDone:
			cancel()
		case testWaitDeadline:
			cancel()
			ctx, cancel = h.Clk.WithDeadline(context.Background(), h.Clk.Now().Add(s.gap+pr.deadline))
		}
		probeCtx[i] = ctx
		cancels = append(cancels, cancel)
	}
	for i := range s.waiters {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		calls = append(calls, katatest.Go(h, func() (struct{}, error) {
			errs[i] = wait(ctx)
			if i != s.cancel {
				return struct{}{}, nil
			}
			ctxErr = ctx.Err()
			close(cancelled)
			for j, pr := range s.probes {
				if pr.kind == testAllow {
					probeOut[j].allowed = probe()
					continue
				}
				probeOut[j].err = next(probeCtx[j])
				probeOut[j].ctxErr = probeCtx[j].Err()
			}
			close(probed)
			nextErr = next(nextCtx)
			return struct{}{}, nil
		}))
		if !testSettle(h, fmt.Sprintf("Wait #%d starting while %d Wait(s) wait", i+1, i)) {
			release()
			return
		}
		if calls[i].Returned() && calls[i].Panicked() {
			release()
			return
		}
	}
	if s.gap > 0 {
		h.Advance(s.gap)
	}
	// Every Wait whose token is due by now has returned, the others wait.
	for i, c := range calls {
		if c.Returned() != (p.dues[i] <= s.at()) {
			h.Errorf("at %v, Wait #%d had returned: %v, but its token is due at %v: each Wait reserves its own "+
				"token as it starts and returns exactly when it is due (%s)", s.at(), i+1, c.Returned(), p.dues[i],
				testArithmetic)
			release()
			return
		}
	}
	cancels[1+len(s.probes)+s.cancel]()
	if !testSettle(h, "cancelling a waiting Wait") {
		release()
		return
	}
	select {
	case <-cancelled:
	default:
		h.Errorf("Wait #%d, cancelled at %v while it waited, did not return at once (the mock clock stood still): "+
			"select on ctx.Done() together with the timer", s.cancel+1, s.at())
		release()
		return
	}
	if err := errs[s.cancel]; !errors.Is(err, context.Canceled) {
		h.Errorf("Wait #%d, cancelled at %v while it waited, returned %v; want ctx.Err() (%v) itself, at once",
			s.cancel+1, s.at(), err, ctxErr)
		release()
		return
	}
	c := calls[s.cancel]
	back := "no call had reserved a token after it, so its token goes back"
	if s.kind == testAfterMulti {
		back = "on at least one of the limiters no call had reserved a token after it, so that token goes back"
	}
	if !p.gaveBack {
		back = "a later Wait had reserved a token after it, so its token is lost"
	}
	again := "Wait"
	if s.deadline > 0 {
		again += fmt.Sprintf(" with a deadline %v away", s.deadline)
	}
	var before []string
	for _, pr := range s.probes {
		before = append(before, pr.String())
	}
	if len(before) > 0 {
		again = strings.Join(before, ", then ") + ", then " + again
	}
	// renewed is a limiter of the next calls on which the cancelled Wait
	// started a new anchor, its bucket full when it started, and whose
	// token goes back ("" if none).
	renewed := ""
	for _, i := range testNewAfterModel(s).which(s.follow) {
		if s.kind == testAfterMulti && p.renewed[i] {
			renewed = []string{"a", "b"}[i]
			break
		}
	}
	renewedLead := fmt.Sprintf("the token a cancelled combined Wait took of %s was not back when Wait returned, "+
		"though %s's bucket was full when the Wait started at %v: taking that token started a new anchor on %s, "+
		"and no call reserved a token of %s after it, so it goes back", renewed, renewed, s.start, renewed, renewed)
	const renewedRule = "A give-back compares the limiter's anchor and count with those right after the Wait took " +
		"its token: note them once the due times are computed, when a full bucket has already started its new " +
		"anchor (noted before that, the old anchor never matches again and the token is lost), and give the token " +
		"back under the lock before Wait returns"
	// The calls that answer at once: each answered, and as the README says.
	select {
	case <-probed:
	default:
		h.Errorf("right after Wait #%d returned from its cancel at %v, its goroutine called %s; one of the calls "+
			"before the last Wait did not answer at once (the mock clock stood still): Allow never waits, and a Wait "+
			"with a ctx already done or a deadline too soon fails at once", s.cancel+1, s.at(), again)
		release()
		return
	}
	allowed := p.probed
	for i, pr := range s.probes {
		out := probeOut[i]
		switch pr.kind {
		case testAllow:
			if !out.allowed && allowed[0] && renewed != "" {
				h.Errorf("%s. %s.Allow(), called right after it on the same goroutine, answered false. Wait #%d was "+
					"cancelled at %v while it waited. %s", renewedLead, renewed, s.cancel+1, s.at(), renewedRule)
				release()
				return
			}
			if !out.allowed && allowed[0] && p.gaveBack {
				h.Errorf("the token a cancelled Wait gives back was not back when Wait returned: Allow, called right "+
					"after it on the same goroutine, answered false. Wait #%d was cancelled at %v while it waited (%s), "+
					"and that token was due by then on the limiter Allow asked. Give the token back under the lock "+
					"before Wait returns, on the caller's goroutine: never later, and never from a goroutine of its own "+
					"(Wait starts no goroutines)", s.cancel+1, s.at(), back)
				release()
				return
			}
			if out.allowed != allowed[0] {
				h.Errorf("Allow, called right after Wait #%d returned from its cancel at %v (%s), answered %v, want %v: "+
					"a cancelled Wait's token is back (or lost) by the time it returns, and Allow takes a token only "+
					"if one is due at clk.Now(); %s", s.cancel+1, s.at(), back, out.allowed, allowed[0], testArithmetic)
				release()
				return
			}
			allowed = allowed[1:]
		case testWaitDone:
			if out.err == nil {
				h.Errorf("a Wait with a ctx already done, called right after Wait #%d returned from its cancel, "+
					"returned nil; want ctx.Err() (%v), at once, taking nothing", s.cancel+1, out.ctxErr)
				release()
				return
			}
		case testWaitDeadline:
			if !testIsDeadline(h, out.err, fmt.Sprintf("a Wait with a deadline %v away, its token due later, called "+
				"right after Wait #%d returned from its cancel", pr.deadline, s.cancel+1)) {
				release()
				return
			}
		}
	}
	// fail reports the next Wait's answer (detail): more is true when it
	// found a token the README does not give it, false when it missed one.
	fail := func(more bool, detail string, args ...any) {
		lead := "the Wait called right after a cancelled Wait returned did not get the token the README gives it"
		rule := "each Wait reserves the next token as it starts; " + testArithmetic
		switch {
		case !more && renewed != "" && p.lostDue > p.nextDue:
			lead, rule = renewedLead+": the caller's next call, made right after it on the same goroutine, did not "+
				"find it", renewedRule
		case !more && p.gaveBack:
			lead = "the token a cancelled Wait gives back was not back when Wait returned: the caller's next call, " +
				"made right after it on the same goroutine, did not find it"
			rule = "Give the token back under the lock before Wait returns, on the caller's goroutine: never later, " +
				"and never from a goroutine of its own (Wait starts no goroutines)"
			if len(s.probes) > 0 {
				rule += "; and a call that answers at once without a token (Allow answering false, a Wait with a ctx " +
					"already done or a deadline too soon) takes nothing, not even for a moment"
			}
		case !more && len(s.probes) > 0:
			lead = "a call that answered at once without a token took one all the same: the Wait called after it " +
				"did not find its token"
			rule = "Allow answering false, and a Wait with a ctx already done or with a deadline too soon, take " +
				"nothing, not even for a moment: decide under the lock, before taking the token"
		case more && !p.gaveBack:
			lead = "a cancelled Wait gave its token back although a later Wait had reserved a token after it: the " +
				"caller's next call, made right after it, got that token"
			rule = "Later waiters keep their turns, so the token is lost: handing it out again lets two calls " +
				"through on one token"
		}
		h.Errorf("%s. Wait #%d was cancelled at %v while it waited (%s); as soon as it returned, its goroutine called "+
			"%s, which %s. %s", lead, s.cancel+1, s.at(), back, again, fmt.Sprintf(detail, args...), rule)
		release()
	}
	switch {
	case !p.nextOK:
		if !c.Returned() {
			fail(true, "was still waiting, although its token is due at %v, at or after its deadline at %v: it must "+
				"fail at once with ErrWouldExceedDeadline", p.nextDue, s.at()+s.deadline)
			return
		}
		if c.Panicked() {
			release()
			return
		}
		if !testIsDeadline(h, nextErr, "the Wait called right after a cancelled Wait returned") {
			release()
			return
		}
	case p.nextDue <= s.at():
		if !c.Returned() {
			fail(false, "was still waiting, although a token was there (due at %v): it must return nil at once", p.nextDue)
			return
		}
		if c.Panicked() {
			release()
			return
		}
		if nextErr != nil {
			fail(false, "returned %v at once, although a token was there (due at %v): want nil", nextErr, p.nextDue)
			return
		}
	case c.Returned():
		if c.Panicked() {
			release()
			return
		}
		if errors.Is(nextErr, ErrWouldExceedDeadline) {
			fail(false, "failed at once with %v, as if its token were due at %v, but it is due at %v, before the "+
				"deadline at %v: it must wait for it", nextErr, p.keptDue, p.nextDue, s.at()+s.deadline)
			return
		}
		fail(true, "returned %v at once, but its token is due at %v: it must wait for it", nextErr, p.nextDue)
		return
	}
	// Run the clock: at each due time, 1ns before and at it, exactly the
	// Waits whose token is due by then have returned.
	dues := slices.Clone(p.dues)
	dues[s.cancel] = s.at() // returned from its cancel
	if p.nextOK {
		dues[s.cancel] = p.nextDue
	}
	var steps []time.Duration
	for _, due := range dues {
		if due > s.at() {
			steps = append(steps, due-1, due)
		}
	}
	slices.Sort(steps)
	for _, at := range slices.Compact(steps) {
		if at > h.Elapsed() {
			h.Advance(at - h.Elapsed())
		}
		for i, c := range calls {
			if c.Returned() == (dues[i] <= at) {
				continue
			}
			switch {
			case i == s.cancel && c.Returned():
				fail(true, "returned %v at %v, but its token is due only at %v", nextErr, at, p.nextDue)
			case i == s.cancel:
				fail(false, "was still waiting at %v, when its token was due", at)
			default:
				when := map[bool]string{true: "returned before its token was due", false: "was still waiting when its token was due"}
				h.Errorf("Wait #%d %s, at %v: each Wait reserves its own token as it starts and returns exactly when it "+
					"is due (%s). Meanwhile Wait #%d was cancelled at %v while it waited (%s), and its goroutine "+
					"called %s as soon as it returned", i+1, when[c.Returned()], dues[i], testArithmetic,
					s.cancel+1, s.at(), back, again)
				release()
			}
			return
		}
	}
	for i, c := range calls {
		if _, _, ok := c.Finish("Wait"); !ok {
			release()
			return
		}
		err := errs[i]
		if i == s.cancel {
			err = nextErr
		}
		if i != s.cancel || p.nextOK {
			if err != nil {
				h.Errorf("Wait #%d returned %v once its token was due; want nil", i+1, err)
				return
			}
		}
	}
	nextCancel()
}

func TestR5_ExploreTheCallRightAfterACancelFindsTheTokenBack(t *testing.T) {
	katatest.Explore(t, 10, testDrawAfter(testAfterLimiter), func(h *katatest.H, s testAfterScenario) { s.play(h) })
}

// testAfterRenewed: combined Waits that start after a quiet spell, when
// one limiter's bucket is full (the token the Wait takes of it starts a
// new anchor) and the other's is empty, cancelled while they wait. Nobody
// reserved after them, so both tokens go back; the next calls find them.
var testAfterRenewed = []testAfterScenario{
	// a (4/s), untouched, is full at 1s; b (1/s) emptied at 1s: a.Allow
	// right after the cancel.
	{kind: testAfterMulti, rates: []float64{4, 1}, bursts: []int{1, 1}, start: time.Second, pre: []int{0, 1},
		waiters: 1, follow: 0, probes: []testProbe{{kind: testAllow}}},
	// a (1/s) emptied at 1s; b (2/s, burst 2), untouched, is full: b.Allow
	// twice.
	{kind: testAfterMulti, rates: []float64{1, 2}, bursts: []int{1, 2}, start: time.Second, pre: []int{1, 0},
		waiters: 1, follow: 1, probes: []testProbe{{kind: testAllow}, {kind: testAllow}}},
	// a (1/s), untouched, is full at 1s; b (4/s) emptied at 1s: the next
	// combined Wait is due with b's token, at 1.25s, not with a's at 2s.
	{kind: testAfterMulti, rates: []float64{1, 4}, bursts: []int{1, 1}, start: time.Second, pre: []int{0, 1},
		waiters: 1, follow: -1},
	// a (2/s, burst 2) emptied at 0, full again at 1s; b (1/s) emptied at
	// 1s: a.Allow twice.
	{kind: testAfterMulti, rates: []float64{2, 1}, bursts: []int{2, 1}, early: []int{2, 0}, start: time.Second,
		pre: []int{0, 1}, waiters: 1, follow: 0, probes: []testProbe{{kind: testAllow}, {kind: testAllow}}},
}

func TestB1_ExploreTheCallRightAfterACancelledCombinedWait(t *testing.T) {
	katatest.Replay(t, testAfterRenewed, func(h *katatest.H, s testAfterScenario) { s.play(h) })
	katatest.Explore(t, 8, testDrawAfter(testAfterMulti), func(h *katatest.H, s testAfterScenario) { s.play(h) })
}

func TestB2_ExploreTheCallRightAfterACancelledKeyedWait(t *testing.T) {
	katatest.Explore(t, 6, testDrawAfter(testAfterKeyed), func(h *katatest.H, s testAfterScenario) { s.play(h) })
}
