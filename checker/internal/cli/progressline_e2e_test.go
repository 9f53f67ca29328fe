package cli_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/cli"
)

// buildLineRE matches the progress lines of a slow build. Whether they show
// depends on how loaded the machine is, so a test that wants no other
// diagnostics on stderr leaves them out (withoutBuildLines). It matches
// catch's progress lines in a log too: a guide shows catch as a terminal
// does, where they are erased.
var buildLineRE = regexp.MustCompile(`(?m)^checker: (buil(ding|t) \S+ |catch \S+: test(ing|ed) ).*\n`)

func withoutBuildLines(stderr string) string { return buildLineRE.ReplaceAllString(stderr, "") }

// slowBuilds is the real clock, except that every wait on it is already
// over and 41 s more have passed: to the checker, every build is slow
// enough for its progress line, however warm the build cache.
type slowBuilds struct{ clock.Clock }

func (c slowBuilds) Timer(time.Duration) *clock.Timer { return c.Clock.Timer(0) }

func (c slowBuilds) Since(t time.Time) time.Duration { return c.Clock.Since(t) + 41*time.Second }

// A slow build says on stderr what it builds and that the first one takes
// about a minute; in a log, one line as it starts to be slow and one as
// it ends, and the report on stdout is untouched.
func TestCheckShowsASlowBuild(t *testing.T) {
	t.Parallel() // each in a checkout of its own
	dir := checkout(t)
	quick := run(t, dir, "check", "06", "--json")
	slow := runEnv(t, dir, cli.Env{Clock: slowBuilds{clock.New()}}, "check", "06", "--json")
	assert.Equal(t, quick.code, slow.code)
	assert.Regexp(t, `^checker: building 06-retry under the race detector: about a minute the first time, seconds after that…
checker: built 06-retry in \d+s
$`, slow.stderr)
	assert.NotContains(t, slow.stdout, "building", "JSON on stdout stays pure")

	still := runEnv(t, dir, cli.Env{Clock: clock.NewMock()}, "check", "06")
	assert.Empty(t, still.stderr, "a build that takes no time shows nothing")
}
