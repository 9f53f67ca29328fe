package failure

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

const dump = `panic: boom

goroutine 21 [chan receive (durable), synctest bubble 3]:
gokata/exercises/06-retry.Do[...](0x1, 0x2)
	/src/exercises/06-retry/retry.go:55 +0x25
gokata/exercises/06-retry.TestR4_Cancel(0xc000)
	/src/exercises/06-retry/retry_test.go:80 +0x25
created by testing.tRunner in goroutine 1
	/usr/local/go/src/testing/testing.go:1900 +0x44

goroutine 7 [sync.Mutex.Lock]:
sync.(*Mutex).Lock(...)
	/usr/local/go/src/sync/mutex.go:46
gokata/exercises/06-retry.helper()
	/src/exercises/06-retry/util.go:9 +0x11
`

func TestParse(t *testing.T) {
	gs := Parse(dump)
	if assert.Len(t, gs, 2) {
		assert.Equal(t, "chan receive (durable)", gs[0].State)
		assert.Equal(t, 3, gs[0].Bubble)
		assert.Equal(t, Frame{Func: "Do[...]", File: "/src/exercises/06-retry/retry.go", Line: 55}, gs[0].Frames[0])
		assert.Equal(t, "tRunner", gs[0].Frames[2].Func)
		assert.Equal(t, "sync.Mutex.Lock", gs[1].State)
		assert.Equal(t, "(*Mutex).Lock", gs[1].Frames[0].Func)
	}
	assert.Equal(t, []string{
		"chan receive (durable) at /src/exercises/06-retry/retry.go:55 Do[...]",
		"sync.Mutex.Lock at /src/exercises/06-retry/util.go:9 helper",
	}, Describe(gs, "/src/exercises/06-retry", 5), "only the learner's files, never the test file or the runtime")
	assert.Len(t, Describe(gs, "/src/exercises/06-retry", 1), 2, "capped, with an ellipsis")
}

func TestParseGoleakReport(t *testing.T) {
	report := "found unexpected goroutines:\n[Goroutine 20 in state chan receive, with gl.f on top of the stack:\n" +
		"gl.f()\n\t/src/x/a.go:3 +0x19\ncreated by gl.g in goroutine 19\n\t/src/x/a.go:7 +0x66\n]"
	gs := Parse(report)
	if assert.Len(t, gs, 1) {
		assert.Equal(t, "chan receive", gs[0].State)
		assert.Equal(t, []string{"chan receive at /src/x/a.go:3 f"}, Describe(gs, "/src/x", 5))
	}
}

func TestFirstTag(t *testing.T) {
	k, ok := FirstTag("    x_test.go:3: " + Tag(Leak) + "goroutines… then " + Tag(Panic))
	assert.True(t, ok)
	assert.Equal(t, Leak, k)
	_, ok = FirstTag("plain assertion")
	assert.False(t, ok)
	for _, k := range tagged {
		got, ok := FirstTag("    x_test.go:3: " + Tag(k) + "what went wrong")
		assert.True(t, ok && got == k, "the tag of %q must be read back as %q, got %q", k, k, got)
	}
	// Only the harness's kinds are tags: a verdict the checker gives on its
	// own (a timeout, a race) written in brackets by a test is just text.
	for _, k := range []Kind{Pass, Assertion, Race, Timeout, MutexHang, Exit} {
		_, ok := FirstTag("    x_test.go:3: " + Tag(k) + "what went wrong")
		assert.False(t, ok, "%q is not a harness tag", k)
	}
}

func TestShortFunc(t *testing.T) {
	for in, want := range map[string]string{
		"gokata/exercises/06-retry.Do[...](0x1, 0x2)":               "Do[...]",
		"gokata/exercises/06-retry.Do[go.shape.*uint8].func1()":     "Do[...].func1",
		"created by gokata/exercises/06-retry.Do in goroutine 7":    "Do",
		"sync.(*Mutex).Lock(...)":                                   "(*Mutex).Lock",
		"gokata/exercises/06-retry.Policy.retryable({0x3, 0x9}, 1)": "Policy.retryable",
	} {
		assert.Equal(t, want, ShortFunc(in), in)
	}
}

// With GOTRACEBACK=system or crash, headers carry the runtime's pointers
// and frames their registers.
func TestParseSystemTraceback(t *testing.T) {
	d := "goroutine 22 gp=0xc000082b40 m=0 mp=0xa6d480 [running, synctest bubble 1]:\n" +
		"gokata/exercises/06-retry.Do[...].func1()\n" +
		"\t/src/exercises/06-retry/retry.go:135 +0x2b fp=0xc00004dfe0 sp=0xc00004dfc0 pc=0x6e94ab\n" +
		"goroutine 1 gp=0xc0000081e0 m=nil [chan receive]:\n"
	gs := Parse(d)
	if assert.Len(t, gs, 2) {
		assert.Equal(t, "running", gs[0].State)
		assert.Equal(t, 1, gs[0].Bubble)
		assert.Equal(t, Frame{Func: "Do[...].func1", File: "/src/exercises/06-retry/retry.go", Line: 135}, gs[0].Frames[0])
		assert.Equal(t, "chan receive", gs[1].State)
	}
}
