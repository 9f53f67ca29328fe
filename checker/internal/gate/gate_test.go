package gate_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/gate"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // "rule:line"
	}{
		{"injected clock is fine", `package p
import ("time"; "github.com/benbjohnson/clock")
func f(c clock.Clock, d time.Duration) { c.Sleep(d * time.Millisecond) }`, nil},
		{"real clock in each form", `package p
import ("context"; "time")
func f(ctx context.Context) {
	time.Sleep(1)
	<-time.After(1)
	_ = time.Now()
	t := time.NewTicker(1); t.Stop()
	ctx, cancel := context.WithTimeout(ctx, 1); cancel()
	_ = ctx
}`, []string{"real-clock:4", "real-clock:5", "real-clock:6", "real-clock:7", "real-clock:8"}},
		{"the clock package's real clock", `package p
import "github.com/benbjohnson/clock"
var c = clock.New()`, []string{"real-clock:3"}},
		{"renamed import", `package p
import tm "time"
var now = tm.Now`, []string{"real-clock:3"}},
		{"escape hatches", `package p
import ("os"; "log"; "syscall"; "unsafe")
func f() { os.Exit(0); log.Fatal("x"); syscall.Exit(0); _ = unsafe.Pointer(nil) }`,
			[]string{"forbidden:2", "forbidden:2", "forbidden:3", "forbidden:3"}},
		{"testing and exec", `package p
import ("testing"; "os/exec")
var _ testing.TB; var _ = exec.Command`, []string{"forbidden:2", "forbidden:2"}},
		{"dot import", `package p
import . "time"
var _ = Now`, []string{"forbidden:2"}},
		{"linkname", `package p
//go:linkname x runtime.x
var x int`, []string{"forbidden:2"}},
		{"syntax error is left to the compiler", `package p
func {`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range gate.Check([]gate.Source{{Name: "p.go", Data: []byte(c.src)}}) {
				got = append(got, f.Rule+":"+strconv.Itoa(f.Line))
				assert.NotEmpty(t, f.Message)
			}
			assert.ElementsMatch(t, c.want, got)
		})
	}
}
