package cli_test

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gokata/checker/internal/cli"
)

// live is stdout for a command that keeps running (watch, interview): the
// test waits on it for a text to appear, with no sleeping.
type live struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{} // closed and replaced on every write
}

func newLive() *live { return &live{changed: make(chan struct{})} }

func (l *live) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *live) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// await waits until the output from offset from on contains want, and
// returns the offset just past it. Two minutes is a bound against a broken
// test on a loaded machine, not a timing assumption.
func (l *live) await(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := patience(t)
	for {
		l.mu.Lock()
		s, ch := l.buf.String(), l.changed
		l.mu.Unlock()
		if i := strings.Index(s[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %q in the output before the test's deadline; output from there:\n%s", want, s[from:])
		}
	}
}

// patience fires a minute before the test binary's -timeout would kill it
// without a word, so that a wait that never ends fails with the output.
// The commands here build and run go test: how long they take depends on
// the machine's load, not on the code, so no fixed limit fits every
// machine. Without -timeout it never fires.
func patience(t *testing.T) <-chan time.Time {
	d, ok := t.Deadline()
	if !ok {
		return nil
	}
	return time.After(max(time.Until(d)-time.Minute, 0))
}

// running is a command started in the background.
type running struct {
	out    *live
	errb   *live
	stdin  *io.PipeWriter
	cancel context.CancelFunc
	done   chan int
}

func start(t *testing.T, dir string, env cli.Env, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdinR, stdinW := io.Pipe()
	r := &running{out: newLive(), errb: newLive(), stdin: stdinW, cancel: cancel, done: make(chan int, 1)}
	env.Dir, env.Stdin, env.Stdout, env.Stderr = dir, stdinR, r.out, r.errb
	if env.Vars == nil {
		env.Vars = os.Environ()
	}
	go func() { r.done <- cli.Run(ctx, args, env) }()
	t.Cleanup(func() {
		cancel()
		stdinW.Close()
		select {
		case <-r.done:
		case <-patience(t):
			t.Errorf("%v did not end after its cancel, before the test's deadline", args)
		}
	})
	return r
}

func (r *running) typeLine(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// wait waits for the command to end by itself and returns its exit code.
func (r *running) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		r.done <- code // for the cleanup
		return code
	case <-patience(t):
		t.Fatalf("still running at the test's deadline; output:\n%s", r.out)
		return 0
	}
}

// stop cancels the command, as Ctrl-C does, and returns its exit code.
func (r *running) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	return r.wait(t)
}
