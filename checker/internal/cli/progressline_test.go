package cli

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// advance moves the mock clock once every goroutine of the bubble is
// waiting, and returns once they have reacted.
func advance(mock *clock.Mock, d time.Duration) {
	synctest.Wait()
	mock.Add(d)
	synctest.Wait()
}

func TestBuildNoticeInALog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		var out bytes.Buffer
		env := Env{Stderr: &out, Clock: mock}
		stop := building(env, true)
		advance(mock, report.BuildQuiet-time.Millisecond)
		assert.Empty(t, out.String(), "a build quicker than report.BuildQuiet shows nothing")
		advance(mock, time.Millisecond)
		assert.Equal(t, "checker: building 06-retry under the race detector: about a minute the first time, seconds after that…\n", out.String())
		advance(mock, 40*time.Second)
		assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "in a log, nothing between the first line and the last")
		stop()
		assert.Equal(t, "checker: building 06-retry under the race detector: about a minute the first time, seconds after that…\n"+
			"checker: built 06-retry in 42s\n", out.String())
	})
}

func TestBuildNoticeOnATerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		var out bytes.Buffer
		env := Env{Stderr: &out, StderrTerminal: true, Clock: mock}
		stop := building(env, false)
		advance(mock, report.BuildQuiet)
		line := "\r\x1b[Kchecker: building 06-retry without the race detector: about a minute the first time, seconds after that…"
		assert.Equal(t, line+" 2s", out.String())
		advance(mock, time.Second)
		assert.Equal(t, line+" 2s"+line+" 3s", out.String(), "redrawn in place every second")
		stop()
		assert.Equal(t, line+" 2s"+line+" 3s\r\x1b[K", out.String(), "erased at the end: the report takes its place")
	})
}

func TestBuildNoticeQuickBuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		var out bytes.Buffer
		for _, terminal := range []bool{false, true} {
			stop := building(Env{Stderr: &out, StderrTerminal: terminal, Clock: mock}, true)
			advance(mock, time.Second)
			stop()
			advance(mock, time.Minute)
		}
		assert.Empty(t, out.String(), "a warm build shows no line, not even after it ended")
	})
}

func TestBuildNoticeDumbTerminal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		var out bytes.Buffer
		env := Env{Stderr: &out, StderrTerminal: true, Vars: []string{"TERM=dumb"}, Clock: mock}
		stop := building(env, true)
		advance(mock, 5*time.Second)
		stop()
		assert.NotContains(t, out.String(), "\x1b", "no escape codes for a dumb terminal")
		assert.Contains(t, out.String(), "built 06-retry in 5s\n")
	})
}

// building shows, as check does, that the build of 06-retry started; the
// func it returns shows that it ended.
func building(env Env, race bool) (built func()) {
	t := screen(env, report.Style{})
	t.Show(session.Building{Kata: "06-retry", Race: race})
	return func() { t.Show(session.Built{Kata: "06-retry"}) }
}

// In a log, catch shows a plain line as it starts on the reference, then
// one per batch of mutants and one at the last: a long run shows it is
// alive, without a line per mutant.
func TestCatchProgressInALog(t *testing.T) {
	var out bytes.Buffer
	s := screen(Env{Stderr: &out}, report.Style{})
	for done := 0; done <= 13; done++ {
		s.Show(session.CatchProgress{Kata: "03-bounded", Done: done, Of: 13, Race: true})
	}
	assert.Equal(t, "checker: catch 03-bounded: testing the reference, then 12 known mistakes…\n"+
		"checker: catch 03-bounded: tested 5 of 12 known mistakes\n"+
		"checker: catch 03-bounded: tested 10 of 12 known mistakes\n"+
		"checker: catch 03-bounded: tested 12 of 12 known mistakes\n", out.String())
}

// On a terminal, catch's progress is one line, redrawn in place and
// erased at the end.
func TestCatchProgressOnATerminal(t *testing.T) {
	var out bytes.Buffer
	s := screen(Env{Stderr: &out, StderrTerminal: true}, report.Style{})
	for done := 0; done <= 2; done++ {
		s.Show(session.CatchProgress{Kata: "03-bounded", Done: done, Of: 2, Race: true})
	}
	assert.Equal(t, "\r\x1b[Kchecker: catch 03-bounded: testing the reference…"+
		"\r\x1b[Kchecker: catch 03-bounded: testing mistake 1 of 1…\r\x1b[K", out.String())
}
