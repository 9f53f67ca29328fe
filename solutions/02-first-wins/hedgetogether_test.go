package firstwins

// B1 with failures that come together: several running replicas fail at
// one instant while replicas are left to start. Each failure starts the
// next replica at once, so as many start then as failed (or as are left).
// The failures either come in one step, or one first and the others while
// Hedge is held right after it made a timer as it started the replica
// owed to the first (as the scheduler may hold it there).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testTogetherHedge is one run of Hedge with failures at one instant.
type testTogetherHedge struct {
	running int   // replicas started one delay apart, all still running
	fail    []int // the running replicas that fail at one instant, half a delay after the last start
	left    int   // replicas not started yet then
	held    bool  // fail[0] first, the others while Hedge is held right after its next timer
}

const testTogetherDelay = 100 * time.Millisecond

func (s testTogetherHedge) n() int { return s.running + s.left }

// at is the instant the replicas fail.
func (s testTogetherHedge) at() time.Duration {
	return time.Duration(s.running-1)*testTogetherDelay + testTogetherDelay/2
}

// want is the replicas that must start at that instant.
func (s testTogetherHedge) want() []int {
	var w []int
	for i := s.running; i < s.running+min(len(s.fail), s.left); i++ {
		w = append(w, i)
	}
	return w
}

func (s testTogetherHedge) failText() string {
	names := make([]string, len(s.fail))
	for k, i := range s.fail {
		names[k] = fmt.Sprint(i)
	}
	return "replicas " + strings.Join(names, ", ")
}

func (s testTogetherHedge) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hedge with %d replicas, delay %v, no timeout; replicas 0 to %d start one delay apart and keep "+
		"running; at %v %s fail", s.n(), testTogetherDelay, s.running-1, s.at(), s.failText())
	if s.held {
		fmt.Fprintf(&b, ": replica %d first, and the others at the same instant while Hedge is held right after "+
			"the next timer it makes", s.fail[0])
	} else {
		b.WriteString(", all in one step")
	}
	return b.String()
}

func testDrawTogetherHedge(r *rapid.T) testTogetherHedge {
	s := testTogetherHedge{running: rapid.IntRange(2, 4).Draw(r, "running")}
	k := rapid.IntRange(2, s.running).Draw(r, "failing together")
	all := make([]int, s.running)
	for i := range all {
		all[i] = i
	}
	s.fail = rapid.Permutation(all).Draw(r, "failing order")[:k]
	s.left = rapid.IntRange(1, k+1).Draw(r, "left to start")
	s.held = rapid.Bool().Draw(r, "held")
	return s
}

func (s testTogetherHedge) play(h *katatest.H) {
	clk := h.HeldClock()
	gates := make([]*katatest.Gate, s.n())
	for i := range gates {
		gates[i] = h.Gate()
	}
	calls, starts := testHedgeReplicas(h, s.n(), func(i int, ctx context.Context) (string, error) {
		if err := gates[i].Hold(ctx); err != nil {
			return "", fmt.Errorf("held: %w", err)
		}
		return "", &testHedgeErr{testHedgeRegions[i]}
	})
	c := katatest.Start(h, func(ctx context.Context) (string, error) {
		return Hedge(ctx, clk, 0, testTogetherDelay, calls...)
	})
	if c.Broken() {
		return
	}
	// Replicas 0 to running-1 start one delay apart; then half a delay.
	for range s.running - 1 {
		h.Advance(testTogetherDelay)
	}
	h.Advance(testTogetherDelay / 2)
	var before []testStarted
	for i := range s.running {
		before = append(before, testStarted{i, time.Duration(i) * testTogetherDelay})
	}
	if got := starts.All(); !slices.Equal(got, before) || c.Returned() {
		h.Errorf("%s: by %v the replicas started were %v; want %v, each %v after the last, and Hedge still "+
			"waiting (returned: %v)", s, s.at(), got, before, testTogetherDelay, c.Returned())
		katatest.Unwind(h, c)
		return
	}
	rest := s.fail
	if s.held {
		clk.HoldNextTimer(true)
		gates[s.fail[0]].Release()
		synctest.Wait()
		rest = s.fail[1:]
	}
	for _, i := range rest {
		gates[i].Release()
	}
	h.Settle() // a design may hold a lock while it makes a timer: replicas waiting for it are let go below
	clk.HoldNextTimer(false)
	clk.Gate.Release()
	synctest.Wait()
	var got []int
	for _, st := range starts.All()[len(before):] {
		if st.at != s.at() {
			break
		}
		got = append(got, st.replica)
	}
	slices.Sort(got) // the replicas started together record their start in any order
	if want := s.want(); !slices.Equal(got, want) {
		how := "at the same instant"
		if s.held && clk.Held() {
			how = fmt.Sprintf("at the same instant, replica %d first and the others while Hedge was still starting "+
				"the replica owed to it (held right after it made a timer, as the scheduler may hold it)", s.fail[0])
		}
		h.Errorf("%s failed at %v, %s, with %s not started yet, but Hedge started %s then; want "+
			"replicas %v: each failure starts the next replica at once, also when several come together or while "+
			"Hedge is busy with another, so as many start as failed (or as are left). Count every failure: one "+
			"wake-up for several failures, or a signal dropped while another is pending, starts too few, and the "+
			"rest wait for the delay", s.failText(), s.at(), how, s.leftText(), testStartedText(got), want)
		katatest.Unwind(h, c)
		return
	}
	c.Cancel()
	if !c.Returns("%s: the caller cancelled, but Hedge was still waiting: return at once with ctx.Err()", s) {
		return
	}
	c.Finish("Hedge")
}

func (s testTogetherHedge) leftText() string {
	if s.left == 1 {
		return fmt.Sprintf("replica %d", s.running)
	}
	return fmt.Sprintf("replicas %d to %d", s.running, s.n()-1)
}

func testStartedText(got []int) string {
	if len(got) == 0 {
		return "none"
	}
	return fmt.Sprintf("only replicas %v", got)
}

func TestB1_FailuresTogetherEachStartAReplica(t *testing.T) {
	katatest.Replay(t, []testTogetherHedge{
		{running: 3, fail: []int{1, 0, 2}, left: 3, held: true},
		{running: 3, fail: []int{2, 0, 1}, left: 3},
	}, func(h *katatest.H, s testTogetherHedge) { s.play(h) })
	katatest.Explore(t, 6, testDrawTogetherHedge, func(h *katatest.H, s testTogetherHedge) { s.play(h) })
}
