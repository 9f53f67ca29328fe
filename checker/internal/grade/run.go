package grade

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/teststream"
	"gokata/internal/failure"
	"gokata/internal/receipt"
)

// exit is how a run of the test binary ended.
type exit struct {
	code    int  // exit status, -1 if killed by a signal
	watched bool // the checker's own watchdog killed it
	// receipts is what the harness's receipts prove (see package receipt).
	receipts receipt.Ledger
}

// clean reports whether the binary ran to its own end: every test that
// started finished, and it printed its final PASS or FAIL. Only then are
// its passes believed.
// The exit status must agree with the final word: a binary exits 0 only
// after PASS. And the run must prove that it got there: its end receipt
// must be valid and agree with the exit status, which code that ends the
// process early (in package initialization, say) cannot forge.
func clean(r *teststream.Run, e exit) bool {
	return (e.code == 0 && r.Package == "pass" || e.code == 1 && r.Package == "fail") && len(r.Running()) == 0 &&
		e.receipts.Ended && (e.receipts.Code == 0) == (e.code == 0)
}

// runTests runs the binary on the given tests, once, and verifies the
// receipts it printed under the fresh key it was handed.
func (g *grader) runTests(ctx context.Context, bin, dir string, tests []string) (*teststream.Run, exit, error) {
	quoted := make([]string, len(tests))
	for i, t := range tests {
		quoted[i] = regexp.QuoteMeta(t)
	}
	args := []string{
		"-test.v=test2json",
		"-test.paniconexit0", // os.Exit(0) inside a test panics instead of faking success
		"-test.timeout=" + g.timeout().String(),
		"-test.run=^(" + strings.Join(quoted, "|") + ")$",
	}
	if g.opt.Repeat > 1 {
		args = append(args, fmt.Sprintf("-test.count=%d", g.opt.Repeat), "-test.shuffle=on")
	}
	if g.opt.CPU != "" {
		args = append(args, "-test.cpu="+g.opt.CPU)
	}
	if g.opt.Seed != 0 {
		args = append(args, fmt.Sprintf("-rapid.seed=%d", g.opt.Seed))
	}
	// The binary's own -test.timeout normally ends a hung run with a
	// goroutine dump; the watchdog covers a binary that cannot even do that.
	wctx, cancel := context.WithTimeout(ctx, g.timeout()+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(wctx, bin, args...)
	cmd.Dir, cmd.Env = dir, g.tc.Env
	ownProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	key, err := handKey(cmd)
	if err != nil {
		return nil, exit{}, err
	}
	defer cmd.ExtraFiles[0].Close() // once started, the child's copy is the one that matters
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
	run, derr, werr := decodeUntilExit(cmd, pr, g.opt.OutputLimit)
	if ctx.Err() != nil {
		return nil, exit{}, ctx.Err()
	}
	e := exit{code: cmd.ProcessState.ExitCode(), watched: wctx.Err() != nil}
	if run != nil {
		e.receipts = receipt.Verify(key, run.Receipts)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) && !e.watched {
		return nil, e, werr
	}
	return run, e, derr
}

// pipeGrace is how long the output pipe is still read after the test
// binary has ended: what it printed is there at once, so only a process
// that escaped its group and holds the pipe open waits this long.
const pipeGrace = time.Second

// decodeUntilExit decodes the binary's output while it runs. Once it has
// ended, whatever it started in its process group is killed too, and the
// pipe is read for at most pipeGrace more: a grandchild that keeps the
// pipe open cannot hang the grade.
func decodeUntilExit(cmd *exec.Cmd, pr *os.File, limit int) (*teststream.Run, error, error) {
	type decoded struct {
		run *teststream.Run
		err error
	}
	done := make(chan decoded, 1)
	go func() {
		run, err := teststream.Decode(pr, limit)
		done <- decoded{run, err}
	}()
	werr := cmd.Wait()
	killGroup(cmd)
	pr.SetReadDeadline(time.Now().Add(pipeGrace))
	d := <-done
	pr.Close()
	if errors.Is(d.err, os.ErrDeadlineExceeded) {
		d.err = nil
	}
	return d.run, d.err, werr
}

// handKey gives the test process a fresh key for its receipts: the read
// end of a pipe that holds it, as file descriptor 3, named by
// receipt.FDEnv. The harness reads it before any learner code runs and
// closes it, so the code under test cannot.
func handKey(cmd *exec.Cmd) ([]byte, error) {
	key := make([]byte, receipt.KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pw.Close()
	if _, err := pw.Write(key); err != nil { // a pipe holds far more than a key
		pr.Close()
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{pr}
	cmd.Env = append(slices.Clip(cmd.Env), receipt.FDEnv+"=3")
	return key, nil
}

// repetitions is how many times each test runs: Repeat times the number
// of GOMAXPROCS values.
func (g *grader) repetitions() int {
	return max(1, g.opt.Repeat) * (strings.Count(g.opt.CPU, ",") + 1)
}

// timeout is the limit for one run of the binary: the per-run timeout
// times the number of repetitions. Once a run has hung, the runs after it
// get half of that: passing tests take milliseconds, so this costs correct
// code nothing and halves the time spent on code that spins everywhere.
func (g *grader) timeout() time.Duration {
	t := g.opt.Timeout * time.Duration(g.repetitions())
	if g.hung {
		t /= 2
	}
	return t
}

// runAll gives every test a verdict. It runs the pending tests together;
// if the binary did not end cleanly (a panic in a goroutine, a hang, an
// exit), the test that was running gets the blame, failures already
// reported stand, and the other tests run again without it. A test
// passes only in a run that ended cleanly, and never if it printed forged
// test frames. Tests of a requirement that has already failed are not run
// again, which bounds the time spent on code that hangs everywhere to one
// timeout per requirement.
//
// A test that hangs in a run where another test had already failed runs
// again by itself before it is blamed: goroutines a failed test left
// blocked for ever stay in the process, every goroutine dump after that
// walks them, and the time limit is for the whole run. Only a hang of
// its own, in a process of its own, is the test's. So does the first
// test to hang in a run shared with others: on a machine busy with other
// work, a whole run of correct code can take longer than the limit, and a
// test that spins hangs again alone. A dump with every goroutine blocked
// (a lock never unlocked) is believed at once: no load explains it. Once
// a hang is confirmed, later ones are blamed at once, which keeps code
// that spins everywhere cheap.
func (g *grader) runAll(ctx context.Context, bin, dir string, hid hidden) (map[string]TestResult, error) {
	verdicts := map[string]TestResult{}
	pending := hid.names
	var alone []string // tests that hung after another failed, to run again by themselves
	for len(pending) > 0 {
		batch := pending
		if len(alone) > 0 {
			batch, alone = alone[:1], alone[1:]
		}
		run, e, err := g.runTests(ctx, bin, dir, batch)
		if err != nil {
			return nil, err
		}
		ok := clean(run, e)
		for _, name := range batch {
			if v, done := g.finished(run, e, ok, name, dir); done {
				verdicts[name] = v
			}
		}
		if ok {
			same(verdicts, batch, Verdict{Kind: failure.Exit, Message: "the test did not run"})
		} else if blamed, name := run.Running(), run.DiedIn(); len(blamed) == 0 && name != "" {
			// A panic on the test's own goroutine, re-raised once the
			// test was reported failed (a synctest bubble's deadlock):
			// that test ended the run, not the ones after it.
			verdicts[name] = g.diedIn(run, e, name, dir)
		} else if len(blamed) == 0 {
			// Died outside any test (in init, or between tests): every
			// test still pending shares the verdict.
			same(verdicts, batch, g.diedOutsideTests(run, e, dir))
		} else {
			for _, name := range blamed {
				v := g.blame(run, e, name, dir)
				if hang(v) && len(batch) > 1 && (failedBefore(run, name) || !g.hung && !idle(run, e, name)) {
					alone = append(alone, name)
					continue
				}
				g.hung = g.hung || hang(v)
				verdicts[name] = v
			}
		}
		pending = notRunAfterFailure(verdicts, pending, hid.itemOf)
		alone = slices.DeleteFunc(alone, func(name string) bool { return !slices.Contains(pending, name) })
	}
	return verdicts, nil
}

func hang(v TestResult) bool { return v.Kind == failure.Timeout || v.Kind == failure.MutexHang }

// idle reports whether the dump of a run that hung while test name ran
// shows every goroutine blocked, none running or waiting for a CPU (bar
// the test binary's own alarm, which printed it). Such a process was not
// slowed down by a busy machine: more CPU would not have moved it, so its
// hang needs no second run to be believed.
func idle(run *teststream.Run, e exit, name string) bool {
	if e.watched {
		return false // killed from outside: no dump
	}
	return idleDump(run.Tests[name].Output() + run.Output())
}

// idleDump is idle for the output of a run, dump included.
func idleDump(out string) bool {
	gs := failure.Parse(out)
	for _, g := range gs {
		if !strings.HasPrefix(g.State, "running") && !strings.HasPrefix(g.State, "runnable") &&
			!strings.HasPrefix(g.State, "syscall") {
			continue
		}
		if len(g.Frames) == 0 || !strings.Contains(g.Frames[0].Func, "startAlarm") {
			return false
		}
	}
	return len(gs) > 0
}

// failedBefore reports whether a test other than name failed in run.
func failedBefore(run *teststream.Run, name string) bool {
	for _, other := range run.Order {
		if t := run.Tests[other]; other != name && slices.Contains(t.Results, "fail") {
			return true
		}
	}
	return false
}

// finished is the verdict of a test the run reported as ended, and
// whether it did; ok: the run itself ended cleanly, which a pass or a
// skip needs to count.
func (g *grader) finished(run *teststream.Run, e exit, ok bool, name, dir string) (TestResult, bool) {
	t := run.Tests[name]
	if t == nil {
		return TestResult{}, false
	}
	if line, forged := run.Forged[name]; forged {
		return TestResult{Name: name, Verdict: forgedVerdict(line), Output: t.Printed()}, true
	}
	switch {
	case t.Action == "fail" && t.Finished():
		return TestResult{Name: name, Verdict: classifyFailure(t.Output(), dir), Results: t.Results, Output: t.Printed()}, true
	case t.Action == "pass" && ok && g.pol.receipts && !e.receipts.Confirms(name, len(t.Results)):
		return TestResult{Name: name, Verdict: unprovenVerdict(e.receipts.Tests[name]), Output: t.Printed()}, true
	case t.Action == "pass" && ok:
		return TestResult{Name: name, Verdict: Verdict{Kind: failure.Pass}, Results: t.Results, Output: t.Printed()}, true
	case t.Action == "skip" && ok:
		return TestResult{Name: name, Verdict: Verdict{Kind: failure.Assertion, Message: "the test was skipped"}, Results: t.Results, Output: t.Printed()}, true
	}
	return TestResult{}, false
}

// same gives v to every test of names that has no verdict yet.
func same(verdicts map[string]TestResult, names []string, v Verdict) {
	for _, name := range names {
		if _, done := verdicts[name]; !done {
			verdicts[name] = TestResult{Name: name, Verdict: v}
		}
	}
}

// diedOutsideTests is the verdict of a process that died while no test
// was running.
func (g *grader) diedOutsideTests(run *teststream.Run, e exit, dir string) Verdict {
	v := classifyCrash(run.Output(), dir, e, g.timeout())
	if v.Kind == failure.Exit && e.receipts.Valid == 0 && g.pol.receipts {
		return endedEarlyVerdict(e)
	}
	v.Message += " (before or between the tests: in an init function?)"
	return v
}

// diedIn is the verdict of test name, which failed and then ended the
// process (Run.DiedIn): the crash explains it better than its messages,
// and the runs it passed before still count.
func (g *grader) diedIn(run *teststream.Run, e exit, name, dir string) TestResult {
	t := run.Tests[name]
	v := classifyCrash(t.Output()+run.Output(), dir, e, g.timeout())
	return TestResult{Name: name, Verdict: v, Results: t.Results, Output: t.Printed()}
}

// blame is the verdict of test name, running when the process died.
func (g *grader) blame(run *teststream.Run, e exit, name, dir string) TestResult {
	v := classifyCrash(run.Tests[name].Output()+run.Output(), dir, e, g.timeout())
	if v.Kind == failure.Timeout || v.Kind == failure.MutexHang {
		// A failure reported earlier in the test explains the hang: a
		// panic the harness recovered (a mutex the panicking code held
		// stays locked), a deadlock the harness named from its lock notes
		// (a lock locked twice, locks taken in opposite orders), or a
		// hidden test's own message, which saw the code stuck on a mutex
		// no call will ever unlock and named the mistake before the test
		// hung.
		out := run.Tests[name].Output()
		first := classifyFailure(out, dir)
		said := (first.Kind == failure.Assertion || first.Kind == failure.Deadlock) && !g.pol.ownTests && len(logBlocks(out)) > 0
		if first.Kind == failure.Panic || first.Kind == failure.NotImplemented || said {
			if first.Kind == failure.Deadlock {
				// The test's own words say what the locked-up lock means.
				for _, b := range logBlocks(out) {
					if bv := blockVerdict(b); bv.Kind == failure.Assertion {
						first.Detail = append(slices.Clip(first.Detail), bv.Message)
						break
					}
				}
			}
			first.Detail = append(slices.Clip(first.Detail), "then the test hung: "+v.Message)
			v = first
		} else if hint, ok := lastHangHint(out); ok && !g.pol.ownTests {
			// The hidden test said what a hang at this step means.
			v.Detail = append([]string{v.Message}, v.Detail...)
			v.Message = hint
		}
	} else if v.Kind == failure.Panic && (strings.HasPrefix(v.Message, "panic: ") || strings.HasPrefix(v.Message, "fatal error: ")) {
		// The harness recovers panics on the goroutines it runs,
		// so this one came from a goroutine the code started.
		who := "a goroutine your code started"
		if g.pol.ownTests {
			who = "a goroutine" // the learner's tests' or the code's: both are under test
		}
		v.Message = who + " panicked: " + strings.TrimPrefix(v.Message, "panic: ")
	}
	return TestResult{Name: name, Verdict: v, Output: run.Tests[name].Printed()}
}

// notRunAfterFailure returns the pending tests without a verdict that
// still need a run: a test of a requirement that already failed gets
// "not run" instead.
func notRunAfterFailure(verdicts map[string]TestResult, pending []string, itemOf map[string]string) []string {
	failed := map[string]string{} // item → a test that failed it
	for name, v := range verdicts {
		if !v.Passed() {
			failed[itemOf[name]] = name
		}
	}
	var next []string
	for _, name := range pending {
		if _, done := verdicts[name]; done {
			continue
		}
		if by, ok := failed[itemOf[name]]; ok {
			verdicts[name] = TestResult{Name: name, Verdict: Verdict{Kind: failure.NotRun,
				Message: fmt.Sprintf("not run: %s already failed in %s", itemOf[name], by)}}
			continue
		}
		next = append(next, name)
	}
	return next
}

// forgedVerdict is for a test during which the code printed a line that
// only the testing package may print.
func forgedVerdict(line string) Verdict {
	return Verdict{Kind: failure.Forbidden,
		Message: "your code printed a line that imitates the test framework, so this test is not graded",
		Detail:  []string{fmt.Sprintf("%q", "\x16"+line), "print nothing that starts with the byte 0x16 (^V): it frames test results"}}
}

// endedEarlyVerdict is for a process that exited before the harness could
// prove a single test ran: whatever it printed is not a result.
func endedEarlyVerdict(e exit) Verdict {
	return Verdict{Kind: failure.Exit,
		Message: "your package ended the test process before the hidden tests ran (during package initialization?)",
		Detail: []string{fmt.Sprintf("it exited with status %d; what it printed before that is not a test result", e.code),
			"code in init functions and package-level variables must not end the process or print test results"}}
}

// unprovenVerdict is for a pass the test process reported without the
// harness's receipt for it: the hidden test did not produce it.
func unprovenVerdict(results []string) Verdict {
	v := Verdict{Kind: failure.Unproven,
		Message: "a pass was reported for this test, but the hidden test did not produce it: it never ran",
		Detail:  []string{"does your code print test results, or change how the test process runs?"}}
	if slices.ContainsFunc(results, func(r string) bool { return r != "pass" }) {
		v.Message = "a pass was reported for this test, but the hidden test failed"
	}
	return v
}
