package fanout

// Explored R3: the first error is a ctx error of the call's own. A call
// may fail with an error that matches context.DeadlineExceeded or
// context.Canceled while the caller's ctx is live: its own per-request
// timeout, a connection pool closed under it. That is a failure like any
// other: it is the first error in time, it cancels every other call, and
// Map returns it wrapped with its index. Neither its ctx nor the caller's
// is done, so it is not a cancel: an error's match says what it wraps, not
// what happened to the batch.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How the first call fails: with a ctx error of its own.
const (
	testOwnTimeout     = iota // fmt.Errorf("pricing: per-request timeout: %w", context.DeadlineExceeded)
	testOwnPoolClosed         // fmt.Errorf("pricing: pool closed: %w", context.Canceled)
	testOwnBareTimeout        // context.DeadlineExceeded, as its own ctx.WithTimeout gave it
	testOwnKinds
)

var testOwnKindNames = [...]string{
	`fmt.Errorf("pricing: per-request timeout: %w", context.DeadlineExceeded) (its own timeout)`,
	`fmt.Errorf("pricing: pool closed: %w", context.Canceled) (its own connection pool was closed)`,
	`context.DeadlineExceeded as it is (its own context.WithTimeout ran out)`,
}

// How each other call reacts to the cancel the first error brings.
const (
	testOwnHonoursWrapped = iota // returns fmt.Errorf("price lookup #v: %w", ctx.Err())
	testOwnHonoursBare           // returns ctx.Err() as it is
	testOwnIgnores               // waits until released, then returns its price
	testOwnIgnoresFails          // waits until released, then fails with a ctx error of its own too
	testOwnReacts
)

var testOwnReactNames = [...]string{
	"honours its ctx (returns ctx.Err() wrapped)",
	"honours its ctx (returns ctx.Err() as it is)",
	"ignores its ctx, then returns its price when released",
	"ignores its ctx, then fails with a per-request timeout of its own when released",
}

// testOwnScenario: n calls; in[k] fails first with an own ctx error of kind,
// while every other call is in flight; then the calls that ignore their ctx
// are released, in reverse index order.
type testOwnScenario struct {
	n, k, kind int
	reacts     []int // for each element; reacts[k] is unused
}

func (s testOwnScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Map over %d elements, the caller's ctx live throughout; every call in flight, then in[%d] fails "+
		"first with %s", s.n, s.k, testOwnKindNames[s.kind])
	for i, r := range s.reacts {
		if i != s.k {
			fmt.Fprintf(&b, "\n  in[%d]: %s", i, testOwnReactNames[r])
		}
	}
	return b.String()
}

func testDrawOwn(r *rapid.T) testOwnScenario {
	s := testOwnScenario{n: rapid.IntRange(1, 5).Draw(r, "n")}
	s.k = rapid.IntRange(0, s.n-1).Draw(r, "the element that fails first")
	s.kind = rapid.IntRange(0, testOwnKinds-1).Draw(r, "its own ctx error")
	s.reacts = make([]int, s.n)
	for i := range s.reacts {
		if i != s.k {
			s.reacts[i] = rapid.IntRange(0, testOwnReacts-1).Draw(r, fmt.Sprintf("in[%d] reaction", i))
		}
	}
	return s
}

// testOwnErr is the error the call for in[i] fails with, a distinct value
// per call (kind testOwnBareTimeout aside).
func testOwnErr(kind, i int) error {
	switch kind {
	case testOwnTimeout:
		return fmt.Errorf("pricing: per-request timeout for #%d: %w", testBase+i, context.DeadlineExceeded)
	case testOwnPoolClosed:
		return fmt.Errorf("pricing: pool closed under #%d: %w", testBase+i, context.Canceled)
	}
	return context.DeadlineExceeded
}

func (s testOwnScenario) play(h *katatest.H) {
	in, gates := testGatedInputs(h, s.n)
	ctxs := make([]context.Context, s.n)
	var mu sync.Mutex
	own := testOwnErr(s.kind, s.k)
	fn := func(ctx context.Context, v int) (string, error) {
		i := v - testBase
		mu.Lock()
		ctxs[i] = ctx
		mu.Unlock()
		if i == s.k {
			_ = gates[i].Hold(context.Background())
			return "", own
		}
		switch s.reacts[i] {
		case testOwnHonoursWrapped, testOwnHonoursBare:
			if err := gates[i].Hold(ctx); err != nil {
				if s.reacts[i] == testOwnHonoursBare {
					return "", err
				}
				return "", fmt.Errorf("price lookup #%d: %w", v, err)
			}
		default:
			_ = gates[i].Hold(context.Background())
			if s.reacts[i] == testOwnIgnoresFails {
				return "", testOwnErr(testOwnTimeout, i)
			}
		}
		return testResult(v), nil
	}
	c := katatest.Start(h, func(ctx context.Context) ([]string, error) { return Map(ctx, in, fn) })
	if c.Broken() {
		return
	}
	if !c.Waits("Map returned before any call of fn had returned: it must wait for every call it starts") {
		return
	}
	started := 0
	for _, g := range gates {
		started += g.Waiting()
	}
	if started != s.n {
		h.Errorf("precondition (R1): all %d calls of fn must be in flight at once, but only %d had started: start a "+
			"goroutine for every element before waiting for any of them", s.n, started)
		c.Stop()
		return
	}

	gates[s.k].Release() // in[k] fails first, with its own ctx error
	h.Settle()
	var live []int
	mu.Lock()
	for i, ctx := range ctxs {
		if i != s.k && ctx.Err() == nil {
			live = append(live, i)
		}
	}
	mu.Unlock()
	if len(live) > 0 {
		h.Errorf("the first error cancelled nothing: in[%d] failed first with %q, its own ctx error, while the "+
			"caller's ctx was live, but the ctx of %s was still live afterwards. The first error cancels every "+
			"other call whatever it matches: an error that matches context.DeadlineExceeded or context.Canceled "+
			"says what fn wrapped (its own per-request timeout, its closed pool), not that the calls' ctx is done; "+
			"call cancel() on every first error", s.k, own, testElements(live))
		c.Stop()
		return
	}
	for i := s.n - 1; i >= 0; i-- {
		gates[i].Release() // the calls that ignore their ctx, last index first
	}
	if !c.Returns("every call of fn had returned, but Map was still waiting") {
		return
	}
	out, err, ok := c.Finish("Map")
	if !ok {
		return
	}
	tag := fmt.Sprintf("fanout: in[%d]: ", s.k)
	switch {
	case err == nil:
		h.Errorf("Map returned no error (and %d results) although in[%d] failed first with %q while the caller's "+
			"ctx was live: an error fn returns that matches context.DeadlineExceeded or context.Canceled (its own "+
			"per-request timeout, its closed pool) is a failure like any other. Do not take it for the caller's "+
			"cancel and answer ctx.Err() (nil: the caller did not cancel); return it wrapped with its index",
			len(out), s.k, own)
	case !errors.Is(err, own) || !strings.HasPrefix(err.Error(), tag):
		if msg := katatest.LostWrap(err, own, `fmt.Errorf("fanout: in[%d]: %w", i, err)`); msg != "" {
			h.Errorf("in[%d] failed first with %q and Map returned %q: %s", s.k, own, err, msg)
			return
		}
		h.Errorf("Map returned %q, but in[%d] failed first, with %q, its own ctx error, while the caller's ctx was "+
			"live: that is the first error, to return wrapped as %q, not the caller's ctx.Err() nor the error of "+
			"a call that failed after it", err, s.k, own, tag+own.Error())
	case out != nil:
		h.Errorf("Map returned the error of in[%d] along with %d results: on an error the results are nil", s.k, len(out))
	}
}

func TestR3_ExploreAFirstErrorThatMatchesACtxErrorIsAFailure(t *testing.T) {
	// Always first: three calls that honour their ctx, in[1] times out on
	// its own.
	fixed := testOwnScenario{n: 3, k: 1, kind: testOwnTimeout, reacts: []int{testOwnHonoursWrapped, 0, testOwnHonoursBare}}
	katatest.Replay(t, []testOwnScenario{fixed}, func(h *katatest.H, s testOwnScenario) { s.play(h) })
	katatest.Explore(t, 8, testDrawOwn, func(h *katatest.H, s testOwnScenario) { s.play(h) })
}
