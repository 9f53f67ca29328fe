// Command bench measures the checker against plain `go test` (make bench).
//
// In a scratch copy of the checkout whose exercises hold the reference
// solutions, it times, warm and alternating, five runs each of
// `make check EX=06` and `go test -race -count=1` of the same reference,
// both with GORACE=atexit_sleep_ms=0, and prints the medians and their
// ratio (target: at most 1.3). Then, for every kata, it times the hidden
// tests' execution: the test process running them minus the same process
// running none (target: under 200 ms each, under 1 s for all), and counts
// the scenarios their explorations played.
// Last, it runs `checker watch` on the kata and times, five times, a save
// of the exercise until its new verdict is printed (target: under 1.5 s).
// It exits 1 when a target is missed.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/internal/katatest"
)

const (
	runs     = 5 // of each whole command
	execRuns = 9 // of each test process: short, so more runs to tame noise
)

func main() {
	kata := flag.String("kata", "06", "the kata to grade")
	flag.Parse()
	if err := run(*kata); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run measures kata kataName in a scratch copy of the checkout, section
// by section, and fails when a target is missed.
func run(kataName string) error {
	root, err := catalog.FindRoot(".")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kata-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyCheckout(root, tmp); err != nil {
		return err
	}
	cat, err := catalog.Load(tmp)
	if err != nil {
		return err
	}
	k, ok := cat.Find(kataName)
	if !ok {
		return fmt.Errorf("no kata %q", kataName)
	}
	env := append(os.Environ(), "GORACE=atexit_sleep_ms=0", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
	check := command(tmp, env, "make", "--no-print-directory", "check", "EX="+k.ID())
	plain := command(tmp, env, "go", "test", "-race", "-count=1", "./solutions/"+k.Slug)

	slowCheck, err := checkVsGoTest(k, check, plain)
	if err != nil {
		return err
	}
	total, slowTests, err := execTimes(tmp, env, cat.Katas)
	if err != nil {
		return err
	}
	slowWatch, err := watchTimes(tmp, env, k, check)
	if err != nil {
		return err
	}
	if slowCheck || slowTests || slowWatch || total >= time.Second {
		return fmt.Errorf("a target was missed")
	}
	return nil
}

// alternate runs a then b, n times each, and returns how long each run
// took.
func alternate(n int, a, b func() (time.Duration, error)) (ta, tb []time.Duration, err error) {
	for range n {
		d, err := a()
		if err != nil {
			return nil, nil, err
		}
		ta = append(ta, d)
		if d, err = b(); err != nil {
			return nil, nil, err
		}
		tb = append(tb, d)
	}
	return ta, tb, nil
}

// checkVsGoTest prints the medians of make check and of plain go test of
// kata k, warm, and their ratio; true when the ratio misses its target.
func checkVsGoTest(k catalog.Kata, check, plain func() (time.Duration, error)) (missed bool, err error) {
	fmt.Printf("warm check of %s vs warm go test -race -count=1 of its reference (median of %d alternating runs)\n", k.Slug, runs)
	for _, c := range []func() (time.Duration, error){check, plain} { // warm both caches
		if _, err := c(); err != nil {
			return false, err
		}
	}
	tc, tp, err := alternate(runs, check, plain)
	if err != nil {
		return false, err
	}
	mc, mp := median(tc), median(tp)
	ratio := float64(mc) / float64(mp)
	fmt.Printf("  make check EX=%s   %6.0f ms\n", k.ID(), ms(mc))
	fmt.Printf("  go test -race      %6.0f ms\n", ms(mp))
	fmt.Printf("  ratio              %6.2f   (target ≤ 1.30)\n", ratio)
	return ratio > 1.3, nil
}

// execTimes prints how long each kata's hidden tests take to execute
// under -race, and their total; missed is true when one kata misses its
// target.
func execTimes(tmp string, env []string, katas []catalog.Kata) (total time.Duration, missed bool, err error) {
	fmt.Printf("\nhidden tests of each reference under -race: execution time, median of %d\n", execRuns)
	for _, k := range katas {
		m, err := execTime(tmp, env, k)
		if err != nil {
			return 0, false, err
		}
		total += m
		missed = missed || m >= 200*time.Millisecond
	}
	fmt.Printf("  %-20s %6.1f ms   (target < 1000 ms)\n", "all", ms(total))
	return total, missed, nil
}

// execTime builds kata k's hidden tests with the reference and prints,
// and returns, their execution time: the test process running them minus
// the same process running none. It also prints the scenarios their
// explorations played.
func execTime(tmp string, env []string, k catalog.Kata) (time.Duration, error) {
	bin := filepath.Join(tmp, k.Package+".test")
	build := exec.Command("go", "test", "-c", "-race", "-o", bin, "./solutions/"+k.Slug)
	build.Dir, build.Env = tmp, env
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build %s: %v\n%s", k.Slug, err, out)
	}
	dir := filepath.Join(tmp, "solutions", k.Slug)
	all := command(dir, env, bin, "-test.count=1")
	none := command(dir, env, bin, "-test.count=1", "-test.run=^$")
	ta, tn, err := alternate(execRuns, all, none)
	if err != nil {
		return 0, err
	}
	m := max(0, median(ta)-median(tn))
	scenarios, explorations, err := explored(dir, env, bin)
	if err != nil {
		return 0, err
	}
	fmt.Printf("  %-20s %6.1f ms   (target < 200 ms; process %5.1f ms, of which %5.1f ms start-up with no test); "+
		"%d scenarios in %d explorations, each from a fresh seed\n",
		k.Slug, ms(m), ms(median(ta)), ms(median(tn)), scenarios, explorations)
	return m, nil
}

// watchTimes prints how long checker watch takes from a save of kata k's
// exercise to its verdict, and make check right after an edit; true when
// watch misses its target.
func watchTimes(tmp string, env []string, k catalog.Kata, check func() (time.Duration, error)) (missed bool, err error) {
	edited, err := checkAfterEdit(tmp, env, k, check)
	if err != nil {
		return false, err
	}
	lat, err := watchLatency(tmp, env, k)
	if err != nil {
		return false, err
	}
	fmt.Printf("\nwatch %s: save to verdict, warm (median of %d saves)\n", k.ID(), runs)
	fmt.Printf("  median             %6.0f ms   (target < 1500 ms)\n", ms(median(lat)))
	fmt.Printf("  slowest            %6.0f ms\n", ms(slices.Max(lat)))
	fmt.Printf("  make check EX=%s right after an edit (recompiles and relinks, as watch must): %.0f ms\n", k.ID(), ms(median(edited)))
	return median(lat) >= 1500*time.Millisecond, nil
}

// explored runs the test binary once more and counts the scenarios its
// explorations played (katatest.Explore logs them when asked to).
func explored(dir string, env []string, bin string) (scenarios, explorations int, err error) {
	cmd := exec.Command(bin, "-test.count=1", "-test.v")
	cmd.Dir, cmd.Env = dir, append(env, katatest.CountEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v", bin, err)
	}
	for _, m := range exploredRE.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		scenarios += n
		explorations++
	}
	return scenarios, explorations, nil
}

var exploredRE = regexp.MustCompile(`explored (\d+) scenarios from seed \d+`)

// command returns a func that runs the command once and times it; a
// non-zero exit is an error, since both sides grade a correct solution.
func command(dir string, env []string, name string, args ...string) func() (time.Duration, error) {
	return func() (time.Duration, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			return d, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return d, nil
	}
}

// copyCheckout copies what grading needs and lays every reference over
// its exercise, as a learner who solved everything would have it.
func copyCheckout(root, dst string) error {
	for _, p := range []string{"go.mod", "go.sum", "Makefile", "checker", "internal", "exercises", "solutions"} {
		if err := copyTree(filepath.Join(root, p), filepath.Join(dst, p)); err != nil {
			return err
		}
	}
	// A git clone, as learners have it: check compares the grader's files
	// with the committed ones, and that is part of what is measured.
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "katas"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = dst, append(os.Environ(), "GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost",
				"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@localhost")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %s: %v: %s", args[0], err, out)
			}
		}
	}
	cat, err := catalog.Load(dst)
	if err != nil {
		return err
	}
	for _, k := range cat.Katas {
		refs, _ := filepath.Glob(filepath.Join(k.Solution, "*.go"))
		for _, f := range refs {
			if !strings.HasSuffix(f, "_test.go") {
				if err := copyFile(f, filepath.Join(k.Exercise, filepath.Base(f))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// watchLatency starts `checker watch` on kata k and returns, for each of
// several saves, the time from the save to the end of the new verdict.
func watchLatency(dir string, env []string, k catalog.Kata) ([]time.Duration, error) {
	bin := filepath.Join(dir, "checker.bin")
	build := exec.Command("go", "build", "-o", bin, "./checker")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build checker: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "watch", k.ID(), "--color=never")
	cmd.Dir, cmd.Env = dir, env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	verdicts := make(chan time.Time)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "Score: ") {
				verdicts <- time.Now()
			}
		}
		close(verdicts)
	}()
	next := func() (time.Time, error) {
		select {
		case t, ok := <-verdicts:
			if !ok {
				return t, fmt.Errorf("watch ended early")
			}
			return t, nil
		case <-time.After(2 * time.Minute):
			return time.Time{}, fmt.Errorf("no verdict from watch within 2 minutes")
		}
	}
	if _, err := next(); err != nil { // the first grade, at start
		return nil, err
	}
	file := filepath.Join(k.Exercise, k.Package+".go")
	orig, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	for i := range runs + 1 { // the first save warms the cache for edited code
		saved := time.Now()
		if err := os.WriteFile(file, fmt.Appendf(slices.Clone(orig), "\n// save %d\n", i), 0o644); err != nil {
			return nil, err
		}
		got, err := next()
		if err != nil {
			return nil, err
		}
		if i > 0 {
			lat = append(lat, got.Sub(saved))
		}
	}
	return lat, nil
}

// checkAfterEdit times check right after an edit of the exercise: what
// watch's grade costs, without noticing the save.
func checkAfterEdit(dir string, env []string, k catalog.Kata, check func() (time.Duration, error)) ([]time.Duration, error) {
	file := filepath.Join(k.Exercise, k.Package+".go")
	orig, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	defer os.WriteFile(file, orig, 0o644)
	var ds []time.Duration
	for i := range runs {
		if err := os.WriteFile(file, fmt.Appendf(slices.Clone(orig), "\n// edit %d\n", i), 0o644); err != nil {
			return nil, err
		}
		d, err := check()
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}
