package katatest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// eachAtOnce calls fn on every element at once with a ctx that derive
// makes from the caller's, and waits for them all. Its mistakes: only the
// first element (firstOnly), or a cancel of the calls' ctx as the first
// call returns (cancelEarly).
type eachAtOnce struct {
	derive      func(ctx context.Context) (context.Context, context.CancelFunc)
	firstOnly   bool
	cancelEarly bool
}

func (e eachAtOnce) call(ctx context.Context, in []int, fn func(context.Context, int) error) error {
	ctx, cancel := e.derive(ctx)
	defer cancel()
	if e.firstOnly {
		in = in[:1]
	}
	errs := make([]error, len(in))
	var wg sync.WaitGroup
	var once sync.Once
	for i, v := range in {
		wg.Go(func() {
			errs[i] = fn(ctx, v)
			if e.cancelEarly {
				once.Do(cancel)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func withCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

func deadlineOf(e eachAtOnce) *CallerDeadline[struct{}] {
	return &CallerDeadline[struct{}]{
		Words: DeadlineWords{Elem: "in[%d]", Gets: "each call gets a ctx derived from the caller's",
			Hint: " (context.WithCancel(ctx))", Meanwhile: "the caller still waits", Uncalled: "every call starts at once"},
		Cause:     errors.New("budget spent"),
		FailOneIn: 3,
		Show:      func(c DeadlineCaller[struct{}]) string { return fmt.Sprintf("each(ctx, %d elements)", len(c.Calls)) },
		Rules: func(c DeadlineCaller[struct{}]) DeadlineRules {
			return DeadlineRules{What: "each", StopAt: -1, Because: "each cancels nothing", OrWhen: "each returns"}
		},
		Call: func(ctx context.Context, x *DeadlineRun[struct{}]) error {
			return e.call(ctx, x.In(), func(ctx context.Context, i int) error {
				if err := x.Answer(ctx, i); err != nil {
					return err
				}
				if x.Calls[i].Fails {
					return fmt.Errorf("element %d failed", i)
				}
				return nil
			})
		},
	}
}

func TestCallerDeadlinePassesADerivedCtx(t *testing.T) {
	d := deadlineOf(eachAtOnce{derive: withCancel})
	Explore(t, 30, d.Draw, d.Play)
}

// firstFailure plays s with the code e in a bubble, and returns its first
// failure, "" if none.
func firstFailure(t *testing.T, e eachAtOnce, s DeadlineScenario[struct{}]) string {
	d := deadlineOf(e)
	s.d = d
	rec := &record{}
	run(t, "", rec, func(h *H) { d.Play(h, s) })
	msg, _ := rec.first()
	return msg
}

func TestCallerDeadlineNamesTheMistake(t *testing.T) {
	const s = time.Second
	answers := DeadlineScenario[struct{}]{Callers: []DeadlineCaller[struct{}]{
		{Kind: 2, Left: s, Calls: []DeadlineCall{{Gap: s}, {Gap: time.Nanosecond, Fails: true}}},
	}}
	waits := DeadlineScenario[struct{}]{Callers: []DeadlineCaller[struct{}]{
		{Kind: 4, Left: s, Calls: []DeadlineCall{{Gap: s}, {Waits: true}}},
	}}
	cases := []struct {
		name string
		code eachAtOnce
		s    DeadlineScenario[struct{}]
		want string // the failure's first words
	}{
		{"a derived ctx", eachAtOnce{derive: withCancel}, waits, ""},
		{"headroom", eachAtOnce{derive: func(ctx context.Context) (context.Context, context.CancelFunc) {
			dl, _ := ctx.Deadline()
			return context.WithDeadline(ctx, dl.Add(-time.Millisecond))
		}}, answers, "the calls got a deadline earlier than the caller's: fn for in[0] (caller 0) saw ctx.Deadline() 1ms earlier"},
		{"a ctx of its own", eachAtOnce{derive: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}}, answers, "the ctx fn got for in[0] (caller 0) does not carry the caller's values"},
		{"no deadline", eachAtOnce{derive: func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithCancel(context.WithoutCancel(ctx))
		}}, answers, "the calls got no deadline although the caller's ctx has one"},
		{"a cancel of its own", eachAtOnce{derive: withCancel, cancelEarly: true}, waits,
			"the calls' ctx ended before the caller's deadline: the ctx fn got for in[1] (caller 0) ended 0s after each started"},
		{"a call left out", eachAtOnce{derive: withCancel, firstOnly: true}, answers,
			"each never called fn for in[1] (caller 0), with the caller's ctx live and every call starts at once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := firstFailure(t, c.code, c.s)
			if c.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.True(t, strings.HasPrefix(got, c.want), "the mistake comes first: want %q…, got %q", c.want, got)
		})
	}
}

func TestCallerDeadlineScenarioReads(t *testing.T) {
	d := deadlineOf(eachAtOnce{derive: withCancel})
	s := DeadlineScenario[struct{}]{d: d, Callers: []DeadlineCaller[struct{}]{
		{Kind: 0, Left: time.Second, Calls: []DeadlineCall{{Gap: time.Second}, {Gap: time.Millisecond, Fails: true}, {Waits: true}}},
	}}
	assert.Equal(t, "\n  caller 0: each(ctx, 3 elements), its ctx made with context.WithTimeout(ctx, d), d = 1s, and a value (context.WithValue)"+
		"\n    in[0]: fn answers at once"+
		"\n    in[1]: fn answers 1ms before the caller's deadline, with an error"+
		"\n    in[2]: fn waits on its ctx, past the caller's deadline", s.String())
}

func TestDeadlineCallerFailure(t *testing.T) {
	c := DeadlineCaller[struct{}]{Left: time.Second, Calls: []DeadlineCall{
		{Gap: 100 * time.Millisecond, Fails: true}, {Gap: 900 * time.Millisecond}, {Gap: 500 * time.Millisecond, Fails: true},
	}}
	assert.Equal(t, 500*time.Millisecond, c.Failure(0), "the first to fail answers 500ms before the deadline")
	assert.Equal(t, 900*time.Millisecond, c.Failure(1))
	assert.Equal(t, time.Duration(-1), c.Failure(2), "no third failure")
}
