package katatest

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/anishathalye/porcupine"
)

// History records the calls that several goroutines make at once, for
// [H.Linearizable]: each call's input, its output, and when it started and
// returned relative to the others. Create it inside the test body.
//
// Recording takes a lock just before a call starts and just after it
// returns, so calls that overlap stay unordered for the race detector
// while they run; calls that do not overlap are ordered, as they were.
type History struct {
	mu   sync.Mutex
	tick int64
	ops  []porcupine.Operation
}

// Call records that goroutine client calls with input; the returned func
// records the call's output once it returned.
func (hi *History) Call(client int, input any) (returned func(output any)) {
	hi.mu.Lock()
	hi.tick++
	op := porcupine.Operation{ClientId: client, Input: input, Call: hi.tick}
	hi.mu.Unlock()
	return func(output any) {
		hi.mu.Lock()
		defer hi.mu.Unlock()
		hi.tick++
		op.Output, op.Return = output, hi.tick
		hi.ops = append(hi.ops, op)
	}
}

// Len is the number of calls recorded as returned.
func (hi *History) Len() int {
	hi.mu.Lock()
	defer hi.mu.Unlock()
	return len(hi.ops)
}

// Linearizable checks the recorded calls against model, the README's
// contract for one call at a time (github.com/anishathalye/porcupine): it
// fails the scenario unless the calls can be put in one order, each call
// placed between its start and its return, in which every call gives the
// output it gave. what names the calls in the message ("Take and Put").
// Call it once every recorded call has returned.
func (h *H) Linearizable(model porcupine.Model, hi *History, what string) bool {
	h.rep.Helper()
	hi.mu.Lock()
	ops := slices.Clone(hi.ops)
	hi.mu.Unlock()
	if porcupine.CheckOperations(model, ops) {
		return true
	}
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	describe := model.DescribeOperation
	if describe == nil {
		describe = func(in, out any) string { return fmt.Sprintf("%v → %v", in, out) }
	}
	clients := map[int]bool{}
	lines := make([]string, len(ops))
	for i, op := range ops {
		clients[op.ClientId] = true
		lines[i] = fmt.Sprintf("goroutine %d: %s (started at step %d, returned at step %d)",
			op.ClientId+1, describe(op.Input, op.Output), op.Call, op.Return)
	}
	h.Errorf("%s called from %d goroutines at once gave answers that no order of the calls explains: "+
		"there is no way to run them one at a time, each between its start and its return, "+
		"that gives these results; the calls:\n%s", what, len(clients), strings.Join(lines, "\n"))
	return false
}
