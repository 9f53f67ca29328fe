package gate_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/gate"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, src string
		extra     []string // the kata's own allowed imports
		want      []string // "rule:line"
	}{
		{"injected clock is fine", `package p
import ("time"; "github.com/benbjohnson/clock")
func f(c clock.Clock, d time.Duration) { c.Sleep(d * time.Millisecond) }`, nil, nil},
		{"real clock in each form", `package p
import ("context"; "time")
func f(ctx context.Context) {
	time.Sleep(1)
	<-time.After(1)
	_ = time.Now()
	t := time.NewTicker(1); t.Stop()
	ctx, cancel := context.WithTimeout(ctx, 1); cancel()
	_ = ctx
}`, nil, []string{"real-clock:4", "real-clock:5", "real-clock:6", "real-clock:7", "real-clock:8"}},
		{"the clock package's real clock", `package p
import "github.com/benbjohnson/clock"
var c = clock.New()`, nil, []string{"real-clock:3"}},
		{"renamed import", `package p
import tm "time"
var now = tm.Now`, nil, []string{"real-clock:3"}},
		{"escape hatches", `package p
import ("os"; "log"; "syscall"; "unsafe")
func f() { os.Exit(0); log.Fatal("x"); syscall.Exit(0); _ = unsafe.Pointer(nil) }`,
			nil, []string{"forbidden:2", "forbidden:2", "forbidden:2", "forbidden:3"}},
		{"testing and exec", `package p
import ("testing"; "testing/synctest"; "os/exec")
var _ testing.TB; var _ = exec.Command`, nil, []string{"forbidden:2", "forbidden:2", "forbidden:2"}},
		{"everything else that is not on the list", `package p
import (
	"flag"
	"reflect"
	"net/http"
	"golang.org/x/sys/unix"
	"internal/abi"
	"gokata/internal/katatest"
	"C"
)`, nil, []string{"forbidden:3", "forbidden:4", "forbidden:5", "forbidden:6", "forbidden:7", "forbidden:8", "forbidden:9"}},
		{"what correct designs use", `package p
import (
	"cmp"; "container/heap"; "container/list"; "errors"; "fmt"; "iter"; "log"; "maps"; "math"
	"math/bits"; "math/rand"; "math/rand/v2"; "runtime"; "runtime/debug"; "slices"; "sort"
	"strconv"; "strings"; "sync"; "sync/atomic"; "unicode/utf8"; "bytes"; "io"
)
var _ = runtime.NumGoroutine
var _ = debug.Stack
func init() { log.Println("debugging") }`, nil, nil},
		{"a kata's own extras, by package or by name", `package p
import ("os"; "os/signal")
func f(c <-chan os.Signal) { signal.Ignore(os.Interrupt) }`, []string{"os.Signal", "os.Interrupt", "os/signal"}, nil},
		{"only the names a kata allows", `package p
import "os"
var _ os.Signal = os.Interrupt
var out = os.Stdout
func f() { os.Exit(0) }`, []string{"os.Signal"}, []string{"forbidden:3", "forbidden:4", "forbidden:5"}},
		{"dot import", `package p
import . "time"
var _ = Now`, nil, []string{"forbidden:2"}},
		{"dot import of a package allowed by name only", `package p
import . "os"
var _ Signal`, []string{"os.Signal"}, []string{"forbidden:2"}},
		{"memory out", `package p
import "runtime/debug"
func f() { debug.WriteHeapDump(1) }`, nil, []string{"forbidden:3"}},
		{"linkname", `package p
//go:linkname x runtime.x
var x int`, nil, []string{"forbidden:2"}},
		{"a file that does not parse is refused", `package p
func {`, nil, []string{"syntax:2"}},
		{"predeclared names declared for the package", `package p
func len[T any](T) int { return 0 }
type error interface{}
var (
	ok, true = 1, 2
	nil int
)
const iota = 0
type T struct{}
func (T) len() int { return 0 }
func f() { len := 1; _ = len }`, nil, []string{"forbidden:2", "forbidden:3", "forbidden:5", "forbidden:6", "forbidden:8"}},
		{"line directives", `package p
//line katatest.go:10
var a int
var b = /*line katatest.go:20:1*/ 1
//line up the pauses, a comment and not a directive
var c int`, nil, []string{"forbidden:2", "forbidden:4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range gate.Check([]gate.Source{{Name: "p.go", Data: []byte(c.src)}}, gate.NewAllowlist(c.extra)) {
				got = append(got, f.Rule+":"+strconv.Itoa(f.Line))
				assert.NotEmpty(t, f.Message)
				assert.True(t, f.Blocking() == (f.Rule != gate.RuleRealClock))
			}
			assert.ElementsMatch(t, c.want, got)
		})
	}
}

func TestRefusedImportNamesTheList(t *testing.T) {
	fs := gate.Check([]gate.Source{{Name: "x/p.go", Data: []byte("package p\n\nimport \"os\"\n")}}, gate.NewAllowlist([]string{"os/signal"}))
	if assert.Len(t, fs, 1) {
		s := fs[0].String()
		assert.True(t, strings.HasPrefix(s, `x/p.go:3: import "os" is not allowed: `), s)
		assert.True(t, strings.HasPrefix(fs[0].Allowed, "the code may import only bytes, cmp, "), fs[0].Allowed)
		assert.Contains(t, fs[0].Allowed, "sync/atomic")
		assert.Contains(t, fs[0].Allowed, "; and for this kata: os/signal")
	}
}

// In a test file the real clock gets advice written for tests: move the
// mock clock, wait on the bubble; never "inject the clock".
func TestRealClockInATestFile(t *testing.T) {
	src := []byte(`package p
import ("context"; "time"; "github.com/benbjohnson/clock")
func TestX(ctx context.Context) {
	time.Sleep(1)
	<-time.After(1)
	_ = time.Now()
	t := time.NewTicker(1); t.Stop()
	ctx, cancel := context.WithTimeout(ctx, 1); cancel()
	_ = clock.New()
}`)
	allow := gate.NewAllowlist(nil)
	code := gate.Check([]gate.Source{{Name: "x/p.go", Data: src}}, allow)
	tests := gate.Check([]gate.Source{{Name: "x/p_test.go", Data: src}}, allow)
	require.Len(t, tests, 6)
	require.Len(t, code, 6)
	for i, f := range tests {
		assert.Equal(t, gate.RuleRealClock, f.Rule)
		assert.Contains(t, f.Message, "uses the real clock, so the test's answer depends on the machine's speed: ")
		assert.NotContains(t, f.Message, "injected clock", f.Message)
		assert.Contains(t, f.Message, "clk.", "it names what to do with the mock clock: %s", f.Message)
		assert.Contains(t, code[i].Message, "use the injected clock instead", "code keeps its advice")
	}
	assert.Contains(t, tests[0].Message, "synctest.Wait()")
	assert.Contains(t, tests[0].Message, "clk.Add(d)")

	fs := gate.Check([]gate.Source{{Name: "x/p_test.go", Data: []byte("package p\n\nimport \"os\"\n")}}, allow)
	require.Len(t, fs, 1)
	assert.True(t, strings.HasPrefix(fs[0].Allowed, "your tests may import only "), fs[0].Allowed)
}

func TestForeign(t *testing.T) {
	fs := gate.Foreign([]string{"ex/a.go", "ex/exit_amd64.s", "ex/x.c", "ex/x.h", "ex/rsrc.syso", "ex/README.md", "ex/kata.json",
		"ex/.#retry.s", "ex/_x.c", "ex/b.S", "ex/c.cpp"})
	var got []string
	for _, f := range fs {
		got = append(got, f.File)
		assert.True(t, f.Blocking())
	}
	assert.ElementsMatch(t, []string{"ex/exit_amd64.s", "ex/x.c", "ex/x.h", "ex/rsrc.syso", "ex/b.S", "ex/c.cpp"}, got)
}

func TestALibraryImportSaysTheKataIsTheExercise(t *testing.T) {
	cases := []struct{ path, want string }{
		{"golang.org/x/sync/errgroup", `import "golang.org/x/sync/errgroup" is not allowed in this kata: it asks you to build what errgroup does yourself; once you pass, make solution compares your design with it`},
		{"golang.org/x/time/rate", "build what rate does yourself"},
		{"github.com/cenkalti/backoff/v4", "build what backoff does yourself"},
		{"github.com/sourcegraph/conc/pool", "build what pool does yourself"},
		{"github.com/sony/gobreaker/v2", "build what gobreaker does yourself"},
		{"github.com/google/uuid", `import "github.com/google/uuid" is not allowed: packages from other modules are not in the kata's go.mod`},
		{"golang.org/x/syncx/errgroup", "packages from other modules"},
	}
	for _, c := range cases {
		src := "package p\n\nimport _ " + strconv.Quote(c.path) + "\n"
		fs := gate.Check([]gate.Source{{Name: "p.go", Data: []byte(src)}}, gate.NewAllowlist(nil))
		if assert.Len(t, fs, 1, c.path) {
			assert.Equal(t, gate.RuleForbidden, fs[0].Rule)
			assert.Contains(t, fs[0].Message, c.want)
			assert.NotContains(t, fs[0].Message, "\n", "one line")
		}
	}
}

// In a kata that takes no clock (no file of the code imports one), the
// real clock's advice names the caller's ctx, not a clk the code never
// got; a test file's clock does not count.
func TestRealClockInAKataWithoutAClock(t *testing.T) {
	code := gate.Source{Name: "x/p.go", Data: []byte(`package p
import ("context"; "time")
func f(ctx context.Context) {
	_ = time.Now()
	ctx, cancel := context.WithTimeout(ctx, 1); cancel()
	_ = ctx
}`)}
	test := gate.Source{Name: "x/p_test.go", Data: []byte("package p\nimport \"github.com/benbjohnson/clock\"\nvar _ = clock.NewMock\n")}
	fs := gate.Check([]gate.Source{code, test}, gate.NewAllowlist(nil))
	require.Len(t, fs, 2)
	for _, f := range fs {
		assert.Equal(t, gate.RuleRealClock, f.Rule)
		assert.Contains(t, f.Message, "this kata takes no clock")
		assert.NotContains(t, f.Message, "clk", f.Message)
	}
	assert.Contains(t, fs[0].Message, "ctx.Done()")

	other := gate.Source{Name: "x/q.go", Data: []byte("package p\nimport \"github.com/benbjohnson/clock\"\nvar _ clock.Clock\n")}
	fs = gate.Check([]gate.Source{code, other}, gate.NewAllowlist(nil))
	require.Len(t, fs, 2)
	for _, f := range fs {
		assert.Contains(t, f.Message, "use the injected clock instead", "another file of the code takes the clock")
	}
}

func TestResetOnATimerOfTheInjectedClock(t *testing.T) {
	code := gate.Source{Name: "x/p.go", Data: []byte(`package p
import ("strings"; "time"; "github.com/benbjohnson/clock")
type hedger struct{ clk clock.Clock; next *clock.Timer }
type backoff struct{ n int }
func (b *backoff) Reset() { b.n = 0 }
func (h *hedger) run(d time.Duration) {
	t := h.clk.Timer(d)
	t.Reset(d)
	h.next.Reset(d)
	var late = h.clk.AfterFunc(d, func() {})
	late.Reset(d)
	b := &backoff{}
	b.Reset()
	var sb strings.Builder
	sb.Reset()
}`)}
	other := gate.Source{Name: "x/q.go", Data: []byte("package p\nimport \"time\"\nfunc (h *hedger) again(d time.Duration) { h.next.Reset(d) }\n")}
	test := gate.Source{Name: "x/p_test.go", Data: []byte("package p\nimport \"time\"\nfunc g(h *hedger) { h.next.Reset(time.Second) }\n")}
	fs := gate.Check([]gate.Source{code, other, test}, gate.NewAllowlist(nil))
	var lines []string
	for _, f := range fs {
		assert.Equal(t, gate.RuleTimerReset, f.Rule, f.Message)
		assert.False(t, f.Blocking(), "the tests still run")
		assert.Contains(t, f.Message, "fresh clk.Timer for each wait")
		lines = append(lines, fmt.Sprintf("%s:%d", f.File, f.Line))
	}
	assert.Equal(t, []string{"x/p.go:8", "x/p.go:9", "x/p.go:11", "x/q.go:3"}, lines,
		"a timer's Reset in the code, wherever the timer was declared; not a Reset of something else, nor in a test file")
}
