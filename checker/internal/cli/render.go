package cli

import "gokata/checker/internal/report"

// screen draws a session's events on env's streams (report.Screen).
func screen(env Env, style report.Style) *report.Screen {
	return &report.Screen{Out: env.Stdout, Err: env.Stderr, OutTerminal: env.IsTerminal,
		ErrTerminal: env.StderrTerminal && env.get("TERM") != "dumb", Clock: env.clock(), Style: style}
}
