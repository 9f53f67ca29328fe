package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
)

// BuildQuiet is how long a build may take before its progress line shows:
// a warm build (about a second) never shows it, a first build (the race
// standard library, about a minute) always does.
const BuildQuiet = 2 * time.Second

// progressLine keeps a slow step visible: what runs, and for how long. On
// a terminal it is one line, redrawn every second with the elapsed time
// and erased when the step ends. In a log it is one line when it appears
// and, if end is set, one line when the step ends: nothing in between, so
// that logs stay readable.
type progressLine struct {
	w        io.Writer
	terminal bool        // redraw in place
	clk      clock.Clock // for the delay and the elapsed time
	dim      func(string) string
	quiet    time.Duration                   // shown only once the step has taken this long
	text     string                          // what runs
	end      func(took time.Duration) string // in a log, the line that closes it; nil: none
}

// start shows the line (after the quiet time) until the returned func is
// called; that func returns once the line is finished.
func (p progressLine) start() (stop func()) {
	begin := p.clk.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		if p.quiet > 0 {
			t := p.clk.Timer(p.quiet)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if !p.terminal {
			fmt.Fprintln(p.w, p.text)
			<-done
			if p.end != nil {
				fmt.Fprintln(p.w, p.end(p.clk.Since(begin)))
			}
			return
		}
		p.draw(p.clk.Since(begin))
		tick := p.clk.Ticker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(p.w, "\r\x1b[K") // what follows takes its place
				return
			case <-tick.C:
				p.draw(p.clk.Since(begin))
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (p progressLine) draw(took time.Duration) {
	secs := strconv.Itoa(int(took.Seconds())) + "s"
	if p.dim != nil {
		secs = p.dim(secs)
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s %s", p.text, secs)
}

// buildNotice is the progress line of a build of kata slug that takes more
// than BuildQuiet, on stderr: the first build on a machine compiles the
// standard library for the race detector, and would otherwise be a silent
// minute.
func (t *Screen) buildNotice(slug string, race bool) progressLine {
	how := "under the race detector"
	if !race {
		how = "without the race detector"
	}
	return progressLine{
		w:        t.Err,
		terminal: t.ErrTerminal,
		clk:      t.clock(),
		quiet:    BuildQuiet,
		text:     fmt.Sprintf("checker: building %s %s: about a minute the first time, seconds after that…", slug, how),
		end: func(took time.Duration) string {
			return fmt.Sprintf("checker: built %s in %s", slug, took.Round(time.Second))
		},
	}
}
