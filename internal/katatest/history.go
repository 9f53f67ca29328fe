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
	ops  []*porcupine.Operation // in the order the calls started
}

// Call records that goroutine client calls with input; the returned func
// records the call's output once it returned.
func (hi *History) Call(client int, input any) (returned func(output any)) {
	return hi.CallWith(client, input, nil)
}

// CallWith is Call with metadata kept with the call (porcupine's
// Operation.Metadata), for a verdict that groups the calls: a round, a
// step.
func (hi *History) CallWith(client int, input, metadata any) (returned func(output any)) {
	hi.mu.Lock()
	hi.tick++
	op := &porcupine.Operation{ClientId: client, Input: input, Call: hi.tick, Metadata: metadata}
	hi.ops = append(hi.ops, op)
	hi.mu.Unlock()
	return func(output any) {
		hi.mu.Lock()
		defer hi.mu.Unlock()
		hi.tick++
		op.Output, op.Return = output, hi.tick
	}
}

// Len is the number of calls recorded as returned.
func (hi *History) Len() int {
	return len(hi.returned())
}

// Operations returns every call recorded, in the order they started; a
// call that has not returned has Return 0. A test reads them to say which
// call its model cannot explain.
func (hi *History) Operations() []porcupine.Operation {
	hi.mu.Lock()
	defer hi.mu.Unlock()
	ops := make([]porcupine.Operation, len(hi.ops))
	for i, op := range hi.ops {
		ops[i] = *op
	}
	return ops
}

// returned is the calls recorded as returned, in the order they started.
func (hi *History) returned() []porcupine.Operation {
	return slices.DeleteFunc(hi.Operations(), func(op porcupine.Operation) bool { return op.Return == 0 })
}

// Linearizable checks the recorded calls against model, the README's
// contract for one call at a time (github.com/anishathalye/porcupine): it
// fails the scenario unless the calls can be put in one order, each call
// placed between its start and its return, in which every call gives the
// output it gave. what names the calls in the message ("Take and Put").
// Call it once every recorded call has returned.
func (h *H) Linearizable(model porcupine.Model, hi *History, what string) bool {
	h.rep.Helper()
	ops := hi.returned()
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
