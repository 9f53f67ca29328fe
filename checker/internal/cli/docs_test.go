package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

// TestDocs keeps the guides honest: every command that README.md and
// docs/*.md show still works and still prints what they show.
//
//   - A ```console block is a transcript: each "$ " line is a command, the
//     lines after it are its output (stdout and stderr as a terminal shows
//     them). The commands run with sh, in order, from the root of a fresh
//     copy of the checkout (one per guide, so state carries from block to
//     block), with an empty HOME. A line "..." matches any number of lines;
//     durations, make's Makefile line numbers and a scorecard's times in
//     parentheses are masked on both sides.
//   - A ```go block whose info string names a file ("go file=PATH") is
//     written to PATH in that copy before the blocks after it run: a guide's
//     example test is real code that the next console block runs.
//   - A ```sh block, and inline code that starts with "make " or
//     "bin/checker ", shows commands that are not run here (interactive or
//     slow ones). Each must name a real make target and variables, or a
//     checker verb and flags that `checker help` documents, and an EX= kata
//     must exist.
func TestDocs(t *testing.T) {
	t.Parallel() // beside TestScripts: the guides start while the last scripts run
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	guides = append([]string{filepath.Join(root, "README.md")}, guides...)
	known := loadKnown(t, root)
	for _, path := range guides {
		name, _ := filepath.Rel(root, path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			blocks, spans := parseMarkdown(string(data))
			for _, s := range spans {
				if err := known.check(s.text); err != nil {
					t.Errorf("%s:%d: `%s`: %v", name, s.line, s.text, err)
				}
			}
			var repo string // made for the first console block
			for _, b := range blocks {
				switch b.lang {
				case "sh":
					for i, line := range b.lines {
						if cmd := stripComment(line); cmd != "" {
							if err := known.check(cmd); err != nil {
								t.Errorf("%s:%d: %s: %v", name, b.line+1+i, cmd, err)
							}
						}
					}
				case "go":
					if path, ok := strings.CutPrefix(b.info, "file="); ok {
						if repo == "" {
							repo = freshRepo(t, root)
						}
						p := filepath.Join(repo, filepath.FromSlash(path))
						require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
						require.NoError(t, os.WriteFile(p, []byte(strings.Join(b.lines, "\n")+"\n"), 0o644))
					}
				case "console":
					if repo == "" {
						repo = freshRepo(t, root)
					}
					for _, step := range transcript(b) {
						got := runShown(t, repo, step.cmd)
						if !outputMatches(step.want, got) {
							t.Errorf("%s:%d: $ %s\nthe guide shows:\n%s\nthe command printed:\n%s",
								name, step.line, step.cmd, indent(strings.Join(step.want, "\n")), indent(got))
						}
					}
				}
			}
		})
	}
}

// block is a fenced code block: its info string and its lines.
type block struct {
	lang  string
	info  string // what follows the language: "file=PATH"
	line  int    // of the opening fence, 1-based
	lines []string
}

// span is a piece of inline code that shows a command.
type span struct {
	text string
	line int
}

var inlineRE = regexp.MustCompile("`([^`]+)`")

// parseMarkdown returns the fenced blocks of a Markdown file and the inline
// code outside them that starts with "make " or "bin/checker ".
func parseMarkdown(s string) (blocks []block, spans []span) {
	var cur *block
	for i, line := range strings.Split(s, "\n") {
		if fence := strings.TrimSpace(line); strings.HasPrefix(fence, "```") {
			if cur == nil {
				lang, info, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(fence, "```")), " ")
				cur = &block{lang: lang, info: strings.TrimSpace(info), line: i + 1}
			} else {
				blocks, cur = append(blocks, *cur), nil
			}
			continue
		}
		if cur != nil {
			cur.lines = append(cur.lines, line)
			continue
		}
		for _, m := range inlineRE.FindAllStringSubmatch(line, -1) {
			if strings.HasPrefix(m[1], "make ") || strings.HasPrefix(m[1], "bin/checker ") {
				spans = append(spans, span{m[1], i + 1})
			}
		}
	}
	return blocks, spans
}

// step is one command of a transcript and the output the guide shows.
type step struct {
	cmd  string
	line int
	want []string
}

func transcript(b block) []step {
	var steps []step
	for i, line := range b.lines {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, step{cmd: cmd, line: b.line + 1 + i})
		} else if len(steps) > 0 {
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		}
	}
	return steps
}

// freshRepo copies the checkout's files (tracked, and new ones git does not
// ignore) into a new git repository with one commit, like a fresh clone.
func freshRepo(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	require.NoError(t, err)
	repo := filepath.Join(t.TempDir(), "katas")
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Stat(filepath.Join(root, rel))
		if os.IsNotExist(err) {
			continue // deleted, not yet committed
		}
		require.NoError(t, err)
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, rel), data, fi.Mode().Perm()))
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=Docs", "-c", "user.email=docs@example.com", "commit", "-q", "-m", "checkout"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, shownEnv(t, repo)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return repo
}

// shownEnv is the environment of the commands a guide shows: an empty
// HOME, and this machine's Go caches.
func shownEnv(t *testing.T, repo string) []string {
	home := filepath.Join(filepath.Dir(repo), "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	for k, v := range goEnv(t) {
		env = append(env, k+"="+v)
	}
	return env
}

// runShown runs a transcript's command and returns its output.
func runShown(t *testing.T, repo, command string) string {
	t.Helper()
	// A hang is stopped with the command named just before go test's
	// -timeout would end the whole run; how long a command may take is
	// not this test's business (verify takes minutes on a loaded machine).
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-30*time.Second))
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir, cmd.Env, cmd.WaitDelay = repo, shownEnv(t, repo), 5*time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); ctx.Err() != nil {
		t.Fatalf("$ %s: still running when the test's time ran out (%v)", command, err)
	}
	return out.String()
}

var (
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b|\b\d+m\d+(\.\d+)?s\b`)
	makeLineRE = regexp.MustCompile(`Makefile:\d+:`)
	// a time into an interview in parentheses, as a scorecard's flags
	// give it: "graded at the start (0:12)"
	clockRE = regexp.MustCompile(`\(\d+:\d\d\)`)
)

// normalize splits output into lines, masks what changes from run to run
// (durations; a scorecard's times into the interview in parentheses; the
// progress lines of a build, which show when the machine is slow), and
// drops trailing spaces and blank lines at the end.
func normalize(s string) []string {
	s = withoutBuildLines(s)
	s = durationRE.ReplaceAllString(s, "<duration>")
	s = makeLineRE.ReplaceAllString(s, "Makefile:<line>:")
	s = clockRE.ReplaceAllString(s, "(<clock>)")
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " \t")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// outputMatches compares shown output with real output; a shown line
// "..." stands for any number of lines.
func outputMatches(shown []string, got string) bool {
	return linesMatch(normalize(strings.Join(shown, "\n")), normalize(got))
}

func linesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if want[0] == "..." {
		for i := 0; i <= len(got); i++ {
			if linesMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && want[0] == got[0] && linesMatch(want[1:], got[1:])
}

func indent(text string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n\t")
}

// stripComment drops a "# comment" (whole line or trailing) and spaces.
func stripComment(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "#") {
		return ""
	}
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.TrimSpace(line)
}

// known is what a shown command may name: the Makefile's targets and
// variables, the checker's documented verbs and flags, and the katas.
type known struct {
	targets, vars []string
	usage         string
	katas         *catalog.Catalog
}

func loadKnown(t *testing.T, root string) known {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	var k known
	for _, m := range regexp.MustCompile(`(?m)^([a-z]+):`).FindAllStringSubmatch(string(data), -1) {
		k.targets = append(k.targets, m[1])
	}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z][A-Z_]*)\s*[?:]?=`).FindAllStringSubmatch(string(data), -1) {
		k.vars = append(k.vars, m[1])
	}
	k.usage = run(t, root, "help").stdout
	k.katas, err = catalog.Load(root)
	require.NoError(t, err)
	return k
}

// check reports what is wrong with a command that is shown but not run.
func (k known) check(command string) error {
	args, err := splitWords(command)
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		return nil
	case args[0] == "make":
		for _, a := range args[1:] {
			name, value, isVar := strings.Cut(a, "=")
			switch {
			case isVar && !slices.Contains(k.vars, name):
				return fmt.Errorf("the Makefile has no variable %s", name)
			case isVar && name == "EX" && value != "":
				if _, ok := k.katas.Find(value); !ok {
					return fmt.Errorf("there is no kata %s", value)
				}
			case !isVar && !slices.Contains(k.targets, a):
				return fmt.Errorf("the Makefile has no target %q", a)
			}
		}
		return nil
	case args[0] == "bin/checker":
		if len(args) > 1 && !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(args[1])+`\b`).MatchString(k.usage) {
			return fmt.Errorf("checker help lists no verb %q", args[1])
		}
		for _, a := range args[2:] {
			flag, _, _ := strings.Cut(a, "=")
			if strings.HasPrefix(flag, "--") && !strings.Contains(k.usage, flag) {
				return fmt.Errorf("checker help documents no flag %s", flag)
			}
		}
		return nil
	default:
		return fmt.Errorf("a command shown but not run must be make or bin/checker; show others in a console block, which runs them")
	}
}

// splitWords splits a command line into words, honouring quotes; it
// refuses shell syntax a shown-but-not-run command should not need.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case strings.ContainsRune("|&;<>()$`\\", r):
			return nil, fmt.Errorf("shell syntax %q: show it in a console block, which runs it", r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unbalanced quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestDocsMatching pins how TestDocs compares shown and real output, and
// what it accepts in commands that are shown but not run.
func TestDocsMatching(t *testing.T) {
	shown := []string{"06-retry · took 1.2s", "...", "make: *** [Makefile:31: check] Error 1"}
	assert.True(t, outputMatches(shown, "06-retry · took 350ms\nline\nline  \nmake: *** [Makefile:40: check] Error 1\n\n"))
	assert.True(t, outputMatches(shown, "06-retry · took 2m3s\nmake: *** [Makefile:9: check] Error 1\n"), "... matches no line")
	assert.False(t, outputMatches(shown, "06-retry · took 1s\nmake: *** [Makefile:31: hint] Error 1\n"))
	assert.False(t, outputMatches([]string{"a"}, "a\nb\n"), "an extra line is a difference")
	assert.False(t, outputMatches([]string{"R6"}, "R1\n"))
	assert.True(t, outputMatches([]string{"Score: 0/7"}, "checker: building 06-retry under the race detector: about a minute…\nchecker: built 06-retry in 41s\nScore: 0/7\n"),
		"a slow build's progress lines depend on the machine's load")

	blocks, _ := parseMarkdown("```go file=exercises/03-bounded/a_test.go\npackage bounded\n```\n```console\n$ ls\n```\n")
	require.Len(t, blocks, 2)
	assert.Equal(t, block{lang: "go", info: "file=exercises/03-bounded/a_test.go", line: 1, lines: []string{"package bounded"}}, blocks[0], "a Go example written to a file")
	assert.Equal(t, "console", blocks[1].lang)

	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	k := loadKnown(t, root)
	for cmd, wantErr := range map[string]string{
		`make check EX=06`:                           "",
		`make reset EX=06 FORCE=1`:                   "",
		`bin/checker check --json --name "Ada L" 06`: "",
		`make nosuch`:                                "no target",
		`make check EX=99`:                           "no kata 99",
		`make check COLOUR=1`:                        "no variable",
		`bin/checker frobnicate`:                     "no verb",
		`bin/checker check --bogus`:                  "no flag --bogus",
		`bin/checker check --json > ada.json`:        "shell syntax",
		`go test ./...`:                              "must be make or bin/checker",
	} {
		err := k.check(cmd)
		if wantErr == "" {
			assert.NoError(t, err, cmd)
		} else if assert.Error(t, err, cmd) {
			assert.Contains(t, err.Error(), wantErr, cmd)
		}
	}
}
