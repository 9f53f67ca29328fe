package katatest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestChain(t *testing.T) {
	base := errors.New("503")
	joined := errors.Join(base, errors.New("other"))
	err := fmt.Errorf("retry: %w", joined)
	assert.Equal(t, "nil", katatest.Chain(nil))
	assert.Equal(t, `"retry: 503\nother" (*fmt.wrapError) → "503\nother" (*errors.joinError) → { "503" (*errors.errorString) | "other" (*errors.errorString) }`,
		katatest.Chain(err))
}

func TestLostWrap(t *testing.T) {
	base := errors.New("503")
	msg := katatest.LostWrap(fmt.Errorf("call: %v", base), base, `fmt.Errorf("call: %w", err)`)
	assert.Contains(t, msg, `the error says "503", but errors.Is does not find it`)
	assert.Contains(t, msg, `wrap with %w (fmt.Errorf("call: %w", err)), not %v`)
	assert.Empty(t, katatest.LostWrap(fmt.Errorf("call: %w", base), base, ""), "wrapped with %w: nothing lost")
	assert.Empty(t, katatest.LostWrap(errors.New("other"), base, ""), "another error altogether: not a lost wrap")
	assert.Empty(t, katatest.LostWrap(nil, base, ""))
}
