package partial

// Explored: "Gather calls fn exactly once per input, each call on its own
// goroutine" (README, All at once), for Gather (R1) and for GatherWith
// with FailFast (B1) or MaxFailures (B2): one or two callers at once, each
// on 0 to 6 inputs, whose calls return at once or wait until every call
// has started, then succeed, fail or (B1, B2) panic. Every call of fn
// notes the goroutine it runs on (katatest.Goroutine); once every gather
// returned, no call may have run on a goroutine that called Gather, and no
// two calls on one goroutine. Goroutine ids are never reused, so a
// goroutine that made one call and then another (a pool, a worker that
// takes the next input) shows as one id twice.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testGoCall is what the call for one input does: return at once, or wait
// until every call has started (or its ctx ends); then succeed, fail or
// panic.
type testGoCall struct {
	instant bool
	does    int // testYSucceed, testYFail, testYPanics
}

type testGoCaller struct {
	calls []testGoCall // one per input: sku-1 … sku-n
	opt   *Options     // nil: Gather
}

func (cl testGoCaller) inputs() []string { return testSKUs(len(cl.calls)) }

func (cl testGoCaller) what() string {
	if cl.opt == nil {
		return "Gather"
	}
	return fmt.Sprintf("GatherWith(Options{FailFast: %v, MaxFailures: %d})", cl.opt.FailFast, cl.opt.MaxFailures)
}

// says is how the README's sentence opens for the function cl calls.
func (cl testGoCaller) says() string {
	if cl.opt == nil {
		return "Gather calls"
	}
	return "GatherWith, like Gather, calls"
}

type testGoScenario struct{ callers []testGoCaller }

func (s testGoScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d caller(s) at once, each on a goroutine of its own:", len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: %s on %q", c+1, cl.what(), cl.inputs())
		for i, call := range cl.calls {
			when := "waits until every call has started (or its ctx ends), then"
			if call.instant {
				when = "returns at once:"
			}
			does := [...]string{"succeeds", "fails", "panics"}[call.does]
			fmt.Fprintf(&b, "\n    the call for %q %s %s", fmt.Sprintf("sku-%d", i+1), when, does)
		}
	}
	b.WriteString("\n  once every call made has started, the waiting calls are let go")
	return b.String()
}

// testDrawGo draws a scenario for req: "R1" calls Gather, "B1" GatherWith
// with FailFast (MaxFailures too, at times), "B2" GatherWith with a
// MaxFailures of any kind, 0 and below (never stop) included.
func testDrawGo(req string) func(*rapid.T) testGoScenario {
	return func(r *rapid.T) testGoScenario {
		var s testGoScenario
		for c := range rapid.IntRange(1, 2).Draw(r, "callers") {
			var cl testGoCaller
			// 0 and 1 input as often as the rest: a lone input is the one a
			// shortcut likes to run on the caller's goroutine.
			n := rapid.SampledFrom([]int{1, 0, 1, 2, 3, 4, 5, 6}).Draw(r, fmt.Sprintf("inputs %d", c))
			does := []int{testYSucceed, testYSucceed, testYFail, testYPanics}
			if req == "R1" {
				does = does[:3] // panics where R4 grades them; the bonus tests count them as failures
			}
			for i := range n {
				cl.calls = append(cl.calls, testGoCall{
					instant: rapid.Bool().Draw(r, fmt.Sprintf("instant %d.%d", c, i)),
					does:    rapid.SampledFrom(does).Draw(r, fmt.Sprintf("does %d.%d", c, i)),
				})
			}
			switch req {
			case "B1":
				cl.opt = &Options{FailFast: true}
				if rapid.Bool().Draw(r, fmt.Sprintf("max failures too? %d", c)) {
					cl.opt.MaxFailures = rapid.SampledFrom([]int{-1, 1, 2, math.MaxInt}).Draw(r, fmt.Sprintf("max failures %d", c))
				}
			case "B2":
				cl.opt = &Options{MaxFailures: rapid.SampledFrom([]int{1, 0, -1, 2, 3, math.MaxInt}).Draw(r, fmt.Sprintf("max failures %d", c))}
			}
			s.callers = append(s.callers, cl)
		}
		return s
	}
}

// testGoSeen is the goroutine one call of fn ran on.
type testGoSeen struct {
	caller    int
	in        string
	goroutine int
}

// testGoPlay plays s and checks that every call of fn ran on a goroutine
// of its own.
func testGoPlay(h *katatest.H, s testGoScenario) {
	var (
		mu   sync.Mutex
		seen []testGoSeen
	)
	release := make(chan struct{}) // lets the waiting calls go
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	h.Own(letGo)
	callerGoroutine := make([]int, len(s.callers)) // written by each caller before it calls Gather
	calls := make([]*katatest.Call[testOutcomes], len(s.callers))
	for c, cl := range s.callers {
		fn := func(ctx context.Context, in string) (int, error) {
			g := katatest.Goroutine()
			mu.Lock()
			seen = append(seen, testGoSeen{caller: c, in: in, goroutine: g})
			mu.Unlock()
			var i int
			fmt.Sscanf(in, "sku-%d", &i)
			call := cl.calls[i-1]
			if !call.instant {
				select {
				case <-release:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			switch call.does {
			case testYFail:
				return 0, fmt.Errorf("no price for %s: %w", in, testErrNotFound)
			case testYPanics:
				panic(fmt.Sprintf("price rule broke on %s", in))
			}
			return testPrice(in), nil
		}
		calls[c] = katatest.Start(h, func(ctx context.Context) (testOutcomes, error) {
			callerGoroutine[c] = katatest.Goroutine()
			if cl.opt != nil {
				return GatherWith(ctx, cl.inputs(), fn, *cl.opt), nil
			}
			return Gather(ctx, cl.inputs(), fn), nil
		})
	}
	synctest.Wait()
	letGo()
	for c, call := range calls {
		if !call.Returns("caller %d's %s had not returned once every call it made was let go and had returned",
			c+1, s.callers[c].what()) {
			return
		}
		if _, _, ok := call.Finish(s.callers[c].what()); !ok {
			return
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// In the order of the callers and the inputs, and no goroutine id in a
	// message: the same scenario played again must fail with the same
	// words, or rapid cannot shrink it.
	slices.SortFunc(seen, func(a, b testGoSeen) int {
		return cmp.Or(cmp.Compare(a.caller, b.caller), cmp.Compare(a.in, b.in))
	})
	for _, sn := range seen {
		cl := s.callers[sn.caller]
		for c, g := range callerGoroutine {
			if sn.goroutine != g {
				continue
			}
			whose := "the goroutine that called it"
			if c != sn.caller {
				whose = fmt.Sprintf("the goroutine of caller %d, which called a %s of its own", c+1, s.callers[c].what())
			}
			h.Errorf("%s fn once per input, each call on its own goroutine, but caller %d's %s on %d input(s) "+
				"%q made the call for %q on %s: start a goroutine for every call, the last one and "+
				"a lone one too, and let the caller only wait for them (wg.Wait). A call made on the caller's "+
				"goroutine \"to save a goroutine\" is not on its own: a fn that calls runtime.Goexit (as t.FailNow "+
				"does) ends the caller instead of that call, one that keeps state per goroutine shares it with the "+
				"caller, and it starts only once the caller is done starting the others", cl.says(), sn.caller+1,
				cl.what(), len(cl.calls), cl.inputs(), sn.in, whose)
			return
		}
	}
	for i, a := range seen {
		for _, b := range seen[i+1:] {
			if a.goroutine != b.goroutine {
				continue
			}
			who := fmt.Sprintf("caller %d's calls for %q and %q (of its %s on %q)", a.caller+1, a.in, b.in,
				s.callers[a.caller].what(), s.callers[a.caller].inputs())
			if a.caller != b.caller {
				who = fmt.Sprintf("caller %d's call for %q and caller %d's call for %q", a.caller+1, a.in, b.caller+1, b.in)
			}
			h.Errorf("%s fn once per input, each call on its own goroutine, but %s both ran on one goroutine, "+
				"one after the other: start one goroutine per call (a go statement in the loop over the inputs, "+
				"that goroutine making that one call); a pool of workers, or a goroutine that takes the next input "+
				"once its call returns, runs several calls on one goroutine", s.callers[a.caller].says(), who)
			return
		}
	}
}

// testGoOneProcessor plays, before the drawn scenarios, one caller of six
// calls that all return at once and succeed, on one processor (GOMAXPROCS
// 1) and without yields: the goroutines Gather starts run one at a time,
// each until it blocks or ends, so a goroutine that takes the next input
// once its call has returned takes them all before another one runs, on
// every run, where the drawn scenarios show it only on some schedules.
func testGoOneProcessor(t *testing.T, opt *Options) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cl := testGoCaller{opt: opt}
	for range 6 {
		cl.calls = append(cl.calls, testGoCall{instant: true, does: testYSucceed})
	}
	s := testGoScenario{callers: []testGoCaller{cl}}
	katatest.Run(t, func(h *katatest.H) { testGoPlay(h, s) })
}

func TestR1_ExploreEachCallRunsOnAGoroutineOfItsOwn(t *testing.T) {
	testGoOneProcessor(t, nil)
	katatest.Explore(t, 6, testDrawGo("R1"), testGoPlay)
}

func TestB1_ExploreEachCallRunsOnAGoroutineOfItsOwn(t *testing.T) {
	testGoOneProcessor(t, &Options{FailFast: true})
	katatest.Explore(t, 4, testDrawGo("B1"), testGoPlay)
}

func TestB2_ExploreEachCallRunsOnAGoroutineOfItsOwn(t *testing.T) {
	testGoOneProcessor(t, &Options{MaxFailures: 1})
	katatest.Explore(t, 4, testDrawGo("B2"), testGoPlay)
}
