package grade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gokata/checker/internal/gate"
	"gokata/internal/failure"
)

// vetChecks are the go vet analyzers that find concurrency mistakes which
// a run of the tests finds only by luck, each with what it means in plain
// words and the fix.
var vetChecks = map[string]string{
	"waitgroup":    "wg.Add runs inside the goroutine it counts, so Wait can return before that goroutine was counted: call wg.Add before the go statement (or use wg.Go)",
	"lostcancel":   "a cancel func is dropped on some path, so that context and what waits on it live until the parent ends: defer cancel() right after creating it",
	"copylocks":    "a value that holds a lock is copied, so the copy and the original lock separately and guard nothing together: pass and keep it by pointer",
	"atomic":       "x = atomic.AddT(&x, n) also writes x non-atomically: call atomic.AddT(&x, n) alone, or use an atomic type such as atomic.Int64",
	"unusedresult": "the call's result is thrown away, so the call has no effect: use what it returns",
}

// vetFlags turns on exactly the analyzers of vetChecks.
func vetFlags() []string {
	var fs []string
	for name := range vetChecks {
		fs = append(fs, "-"+name)
	}
	sort.Strings(fs)
	return fs
}

var posnRE = regexp.MustCompile(`^(.*\.go):(\d+)(?::\d+)?$`)

// vetResult is what go vet says of the learner's package without the
// hidden tests.
type vetResult struct {
	findings []gate.Finding
	// alone: the package does not type-check without the hidden tests,
	// with the type checker's first error in the learner's files (go vet
	// reports one); nil when it does, or when vet failed for another
	// reason. The build, with the hidden tests, says the rest.
	alone *BuildFailure
}

var vetErrRE = regexp.MustCompile(`^vet: (.+\.go):(\d+)(?::\d+)?: (.*)$`)

// vet runs the concurrency analyzers of go vet over the learner's package,
// its test files left out (overlay, the grader's go.mod in a kit), and
// returns what they found in the learner's files.
//
// vet type-checks the package on its own first, which the build cannot:
// there the hidden tests are part of the package, so learner code that
// uses a name only they declare (assigns a variable of theirs, adds a
// method to a type of theirs) compiles, and changes what they check.
func (g *grader) vet(ctx context.Context, t Target, overlay string) (vetResult, error) {
	args := append([]string{"vet", "-json", "-overlay", overlay}, g.modArgs(t)...)
	if g.tc.Race {
		// The files the build compiles, no fewer: one that says
		// //go:build race is in the race build, so vet must see it too.
		args = append(args, "-race")
	}
	args = append(args, vetFlags()...)
	args = append(args, "./"+filepath.ToSlash(rel(g.root, t.Dir)))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = g.root, g.tc.BuildEnv()
	ownProcessGroup(cmd)
	out, err := cmd.Output() // -json: the findings on stdout, exit 0
	if ctx.Err() != nil {
		return vetResult{}, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return vetResult{alone: g.typeErrors(t, string(ee.Stderr))}, nil
	}
	if err != nil {
		return vetResult{}, nil
	}
	fs := g.vetFindings(t, out)
	return vetResult{findings: fs}, nil
}

// typeErrors reads vet's type errors in the learner's files: their code
// does not compile without the hidden tests.
func (g *grader) typeErrors(t Target, stderr string) *BuildFailure {
	hidden := t.hiddenSet()
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		m := vetErrRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(g.root, file)
		}
		if hidden[file] {
			continue
		}
		if shown, ok := t.Shown[file]; ok {
			file = shown
		}
		msg := "your package does not compile without the hidden tests: " + m[3]
		if name, ok := strings.CutPrefix(m[3], "undefined: "); ok {
			msg = fmt.Sprintf("your code uses %s, which only the hidden tests declare: your package must compile without them", name)
		}
		lines = append(lines, fmt.Sprintf("%s:%s: %s", rel(g.root, file), m[2], msg))
	}
	if len(lines) == 0 {
		return nil
	}
	return &BuildFailure{Kind: failure.Compile, Lines: capLines(lines)}
}

// vetFindings reads the findings of vet -json in the learner's files.
func (g *grader) vetFindings(t Target, out []byte) []gate.Finding {
	// {"pkg": {"analyzer": [{"posn": "file:line:col", "message": "..."}]}},
	// once for the package and once for its test variant.
	var report map[string]map[string]json.RawMessage
	if err := json.Unmarshal(out, &report); err != nil {
		return nil
	}
	hidden := t.hiddenSet()
	seen := map[string]bool{}
	var fs []gate.Finding
	for _, byAnalyzer := range report {
		for analyzer, raw := range byAnalyzer {
			var diags []struct {
				Posn    string `json:"posn"`
				Message string `json:"message"`
			}
			if json.Unmarshal(raw, &diags) != nil {
				continue // an analyzer's error, not a finding
			}
			for _, d := range diags {
				m := posnRE.FindStringSubmatch(d.Posn)
				if m == nil {
					continue
				}
				file := m[1]
				if !filepath.IsAbs(file) {
					file = filepath.Join(g.root, file)
				}
				if hidden[file] || seen[d.Posn+d.Message] {
					continue
				}
				seen[d.Posn+d.Message] = true
				line, _ := strconv.Atoi(m[2])
				fs = append(fs, gate.Finding{File: rel(g.root, file), Line: line, Rule: gate.RuleVet,
					Message: fmt.Sprintf("go vet: %s. %s", d.Message, vetChecks[analyzer])})
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Line < fs[j].Line
	})
	return fs
}
