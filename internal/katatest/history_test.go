package katatest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHistoryKeepsTheCallsInTheOrderTheyStarted(t *testing.T) {
	var hi History
	first := hi.CallWith(0, "a", 7)
	second := hi.Call(1, "b")
	second("B")
	assert.Equal(t, 1, hi.Len(), "only returned calls count")
	ops := hi.Operations()
	if assert.Len(t, ops, 2, "every call, returned or not") {
		assert.Equal(t, "a", ops[0].Input, "in the order they started")
		assert.Equal(t, 7, ops[0].Metadata)
		assert.Zero(t, ops[0].Return, "not returned yet")
		assert.Equal(t, "B", ops[1].Output)
	}
	first("A")
	ops = hi.Operations()
	assert.Equal(t, 2, hi.Len())
	assert.Greater(t, ops[0].Return, ops[1].Return, "a returned after b")
}
