// Package usage is the error of a request that cannot be done as made:
// what is wrong, in one line, and what to run instead. Every package that
// serves a verb returns it, and the command line prints both lines and
// exits with its usage code.
package usage

// Error is a request that cannot be done as made: Msg says why, Try what
// to run instead ("" when nothing obvious).
type Error struct{ Msg, Try string }

func (e *Error) Error() string { return e.Msg }
