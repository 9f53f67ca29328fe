package grade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"gokata/checker/internal/teststream"
	"gokata/internal/failure"
)

// exit is how a run of the test binary ended.
type exit struct {
	code    int  // exit status, -1 if killed by a signal
	watched bool // the checker's own watchdog killed it
}

// clean reports whether the binary ran to its own end: every test that
// started finished, and it printed its final PASS or FAIL. Only then are
// its passes believed.
func clean(r *teststream.Run, e exit) bool {
	return (e.code == 0 || e.code == 1) && r.Package != "" && len(r.Running()) == 0
}

// runTests runs the binary on the given tests, once.
func (g *grader) runTests(ctx context.Context, bin, dir string, tests []string) (*teststream.Run, exit, error) {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	args := []string{
		"-test.v=test2json",
		"-test.count=1",
		"-test.paniconexit0", // os.Exit(0) inside a test panics instead of faking success
		"-test.timeout=" + g.opt.Timeout.String(),
		"-test.run=^(" + strings.Join(quoted, "|") + ")$",
	}
	// The binary's own -test.timeout normally ends a hung run with a
	// goroutine dump; the watchdog covers a binary that cannot even do that.
	wctx, cancel := context.WithTimeout(ctx, g.opt.Timeout+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(wctx, bin, args...)
	cmd.Dir, cmd.Env = dir, g.tc.Env
	ownProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, exit{}, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, exit{}, fmt.Errorf("start test binary: %w", err)
	}
	pw.Close()
	run, derr := teststream.Decode(pr, g.opt.OutputLimit)
	pr.Close()
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, exit{}, ctx.Err()
	}
	e := exit{code: cmd.ProcessState.ExitCode(), watched: wctx.Err() != nil}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !e.watched {
		return nil, e, werr
	}
	return run, e, derr
}

// runAll gives every test a verdict. It runs the pending tests together;
// if the binary did not end cleanly (a panic in a goroutine, a hang, an
// exit), the test that was running gets the blame, failures already
// reported stand, and the other tests run again without it. A test
// passes only in a run that ended cleanly.
func (g *grader) runAll(ctx context.Context, bin, dir string, tests []string) (map[string]Verdict, error) {
	verdicts := map[string]Verdict{}
	pending := tests
	for len(pending) > 0 {
		run, e, err := g.runTests(ctx, bin, dir, pending)
		if err != nil {
			return nil, err
		}
		ok := clean(run, e)
		for _, name := range pending {
			t := run.Tests[name]
			switch {
			case t == nil:
			case t.Action == "fail":
				verdicts[name] = classifyFailure(t.Output(), dir)
			case t.Action == "pass" && ok:
				verdicts[name] = Verdict{Kind: failure.Pass}
			case t.Action == "skip" && ok:
				verdicts[name] = Verdict{Kind: failure.Assertion, Message: "the test was skipped"}
			}
		}
		if ok {
			for _, name := range pending {
				if _, done := verdicts[name]; !done {
					verdicts[name] = Verdict{Kind: failure.Exit, Message: "the test did not run"}
				}
			}
			break
		}
		blamed := run.Running()
		if len(blamed) == 0 {
			// Died outside any test (in init, or between tests): every
			// test still pending shares the verdict.
			v := classifyCrash(run.Output(), dir, e, g.opt.Timeout)
			v.Message = "the test binary failed outside any test: " + v.Message
			for _, name := range pending {
				if _, done := verdicts[name]; !done {
					verdicts[name] = v
				}
			}
			break
		}
		for _, name := range blamed {
			verdicts[name] = classifyCrash(run.Tests[name].Output()+run.Output(), dir, e, g.opt.Timeout)
		}
		var next []string
		for _, name := range pending {
			if _, done := verdicts[name]; !done {
				next = append(next, name)
			}
		}
		pending = next
	}
	return verdicts, nil
}
