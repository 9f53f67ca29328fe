package katatest

import (
	"errors"
	"fmt"
	"strings"
)

// Chain shows err and what it wraps, for a message that says why errors.Is
// did not find what it looked for: "a" (*T) → "b" (*U), with the branches
// of an error that wraps several (errors.Join, two %w verbs) in { … | … }.
func Chain(err error) string {
	if err == nil {
		return "nil"
	}
	s := fmt.Sprintf("%q (%T)", err.Error(), err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if next := u.Unwrap(); next != nil {
			s += " → " + Chain(next)
		}
	case interface{ Unwrap() []error }:
		var parts []string
		for _, e := range u.Unwrap() {
			parts = append(parts, Chain(e))
		}
		s += " → { " + strings.Join(parts, " | ") + " }"
	}
	return s
}

// LostWrap names the most common reason errors.Is(err, want) is false: err
// carries want's text but not want itself, because it was wrapped with %v
// (or rebuilt) instead of %w. example is the fix in the kata's terms, e.g.
// `fmt.Errorf("replica %d: %w", i, err)`. It returns "" when err does not
// look like that, so the caller can go on to its own message.
func LostWrap(err, want error, example string) string {
	if err == nil || errors.Is(err, want) || !strings.Contains(err.Error(), want.Error()) {
		return ""
	}
	return fmt.Sprintf("the error says %q, but errors.Is does not find it: its chain is %s; "+
		"the original error is lost in the wrapping: wrap with %%w (%s), not %%v", want, Chain(err), example)
}
