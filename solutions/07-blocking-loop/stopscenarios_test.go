package blockingloop

// R5, explored at the one moment a loop can get wrong: Run's ctx ends while
// the loop is busy (inside OnTick), and the running lookups, which honour
// their ctx, answer the cancel before the loop is back at its select. The
// loop then finds a result and the end of its ctx ready together. Whatever
// the lookups returned (ctx.Err() itself, a wrapped one, an error of their
// own, or the value they found just then), it arrived after Run's ctx ended:
// the callers who waited get ErrStopped, never the lookup's answer. A select
// picks among ready cases at random, so each scenario plays several caches
// side by side, each with its own loop.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How a running lookup answers once its ctx is cancelled.
var testStopAnswers = []struct {
	name   string
	answer func(ctx context.Context, key string) (string, error)
}{
	{"returns ctx.Err() itself", func(ctx context.Context, key string) (string, error) { return "", ctx.Err() }},
	{"returns an error wrapping ctx.Err()", func(ctx context.Context, key string) (string, error) {
		return "", fmt.Errorf("provider: rate %s: %w", key, ctx.Err())
	}},
	{"returns an error of its own (the connection dropped as it was cancelled)", func(ctx context.Context, key string) (string, error) {
		return "", &testProviderError{code: 499, key: key}
	}},
	{"returns the value it found just then", func(ctx context.Context, key string) (string, error) {
		return "v:" + key, nil
	}},
}

// testStopRace is one stop that lands while the loop is inside OnTick.
type testStopRace struct {
	maxInFlight int
	gets        []string       // Gets in this order, each on its own goroutine, one after the other
	answers     map[string]int // how each key's lookup answers its ctx's cancel (testStopAnswers)
	copies      int            // caches played side by side, each its own loop
}

func (s testStopRace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d caches side by side, each: MaxInFlight %d, Tick 1s; every lookup waits until its ctx "+
		"is cancelled, then", s.copies, s.maxInFlight)
	seen := map[string]bool{}
	for _, k := range s.gets {
		if !seen[k] {
			seen[k] = true
			fmt.Fprintf(&b, " (%s) %s;", k, testStopAnswers[s.answers[k]].name)
		}
	}
	fmt.Fprintf(&b, "\n  Get %s, one after the other (so the first %d run, the others queue)", strings.Join(s.gets, ", "),
		max(s.maxInFlight, 1))
	b.WriteString("\n  the clock moves 1s: the loop calls OnTick, which takes a while (the clock stands still)")
	b.WriteString("\n  Run's ctx ends; the lookups answer their cancel; then OnTick returns")
	return b.String()
}

func testDrawStopRace(r *rapid.T) testStopRace {
	s := testStopRace{maxInFlight: rapid.IntRange(0, 3).Draw(r, "MaxInFlight"), answers: map[string]int{}}
	keys := []string{"EUR", "GBP", "JPY", "CHF"}
	s.gets = rapid.SliceOfN(rapid.SampledFrom(keys), 1, 5).Draw(r, "gets")
	for _, k := range keys {
		s.answers[k] = rapid.IntRange(0, len(testStopAnswers)-1).Draw(r, "answer "+k)
	}
	s.copies = 4
	return s
}

// testStopRaceFixed: two lookups running, one queued, each kind of answer.
var testStopRaceFixed = testStopRace{
	maxInFlight: 2,
	gets:        []string{"EUR", "GBP", "EUR", "JPY"},
	answers:     map[string]int{"EUR": 0, "GBP": 1, "JPY": 3},
	copies:      6,
}

func (s testStopRace) play(h *katatest.H) {
	type bed struct {
		cache *Cache
		run   katatest.ErrCall
		gets  []*katatest.Call[string]
	}
	release := make(chan struct{}) // lets every lookup go at the end, whatever happened
	var once sync.Once
	h.Own(func() { once.Do(func() { close(release) }) })
	hold := h.Gate()
	var holdMu sync.Mutex
	holding := false
	onTick := func(Stats) {
		holdMu.Lock()
		on := holding
		holdMu.Unlock()
		if on {
			_ = hold.Hold(context.Background()) // an OnTick that takes a while, the clock standing still
		}
	}
	lookup := func(ctx context.Context, key string) (string, error) {
		select {
		case <-ctx.Done():
			return testStopAnswers[s.answers[key]].answer(ctx, key)
		case <-release:
			return "", fmt.Errorf("provider: %s: test over", key)
		}
	}
	clk := &testStopClock{Clock: h.Clk}
	beds := make([]*bed, s.copies)
	for i := range beds {
		b := &bed{cache: New(clk, lookup, Config{MaxInFlight: s.maxInFlight, Tick: time.Second, OnTick: onTick})}
		b.run = katatest.StartErr(h, b.cache.Run)
		beds[i] = b
	}
	synctest.Wait()
	for _, k := range s.gets {
		for _, b := range beds {
			b.gets = append(b.gets, katatest.Start(h, func(ctx context.Context) (string, error) { return b.cache.Get(ctx, k) }))
		}
		synctest.Wait() // in order: the queue is FIFO
	}
	for _, b := range beds {
		for i, g := range b.gets {
			if g.Returned() {
				h.Errorf("Get(%q) returned before any lookup answered or the cache stopped (%v): a miss waits for "+
					"its lookup", s.gets[i], testStopResult(g))
				return
			}
		}
	}
	holdMu.Lock()
	holding = true
	holdMu.Unlock()
	h.Advance(time.Second)
	inside := hold.Waiting()
	for _, b := range beds {
		b.run.Cancel()
	}
	synctest.Wait() // the lookups answer their cancel; the loops are still inside OnTick
	hold.Release()
	synctest.Wait()
	for _, b := range beds {
		for i, g := range b.gets {
			if !g.Returned() {
				h.Errorf("Get(%q) kept waiting after Run's ctx ended: once the cache stops, waiting callers return "+
					"ErrStopped at once", s.gets[i])
				return
			}
			if _, err := g.Result(); !errors.Is(err, ErrStopped) {
				k := s.gets[i]
				how := testStopAnswers[s.answers[k]].name
				h.Errorf("Get(%q), waiting when Run's ctx ended, returned %s; want ErrStopped. Its lookup %s as "+
					"soon as Run's ctx was cancelled, and the loop, busy in OnTick%s, found that result ready "+
					"together with the end of its ctx and delivered it. A result that reaches the loop after Run's "+
					"ctx ended is an answer to the stop, not for the callers: when a result comes in, check ctx.Err() "+
					"first, and once it is set answer nobody (count the lookup as returned and stop), so every "+
					"waiting caller gets ErrStopped", k, testStopResult(g), how, testInside(inside, len(beds)))
				return
			}
		}
	}
	for _, b := range beds {
		if !b.run.Returned() {
			h.Errorf("Run did not return once its ctx had ended and every lookup had returned: keep receiving " +
				"results until every running lookup has reported back")
			return
		}
		if err, ok := b.run.Finish("Run"); !ok {
			return
		} else if err != nil {
			h.Errorf("Run returned %v; want nil once every lookup has returned", err)
			return
		}
	}
	if n := h.Ticking(); n > 0 {
		h.Errorf("every Run had returned, but %d of the %d heartbeats still ticked on the clock afterwards: stop the "+
			"heartbeat's clk.Ticker on every way out of Run (defer t.Stop() right after making it), also when the "+
			"loop learns of the stop from a lookup's result rather than from ctx.Done()", n, len(beds))
	}
}

// testInside says how many of the loops were inside OnTick at the stop.
func testInside(inside, of int) string {
	if inside == of {
		return ""
	}
	return fmt.Sprintf(" (%d of the %d loops were)", inside, of)
}

func testStopResult(g *katatest.Call[string]) string {
	v, err := g.Result()
	if err != nil {
		return fmt.Sprintf("the error %q", err)
	}
	return fmt.Sprintf("(%q, nil)", v)
}

func TestR5_ExploreLookupsThatAnswerTheStopAnswerNobody(t *testing.T) {
	katatest.Run(t, testStopRaceFixed.play)
	katatest.Explore(t, 4, testDrawStopRace, func(h *katatest.H, s testStopRace) { s.play(h) })
}
