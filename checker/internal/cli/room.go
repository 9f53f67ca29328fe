package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/room"
)

var reportVerb = verb{
	name: "report", args: "DIR", section: workshops,
	summary: "the room grid from participants' check --json files in DIR:\nDIR/room.html and DIR/room.md",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		out := fs.String("out", "", "write room.html and room.md to `DIR2` instead")
		return func(c *call) (int, error) { return roomReport(c.args, *out, c.env) }
	},
}

// roomReport gathers the participants' JSON grades in a directory into the
// room grid: room.html (one self-contained page) and room.md, the Markdown
// also on stdout. Inside the checkout every kata gets a column, graded or not.
func roomReport(args []string, out string, env Env) (int, error) {
	if len(args) != 1 {
		return 0, &usageError{"name the directory that holds the participants' JSON grades", "checker report results/"}
	}
	dir := absPath(env.Dir, args[0])
	var katas []room.Kata
	if cat, err := load(env); err == nil {
		katas = roomKatas(cat)
	}
	g := room.New(katas)
	problems, err := g.ReadDir(dir)
	for _, p := range problems {
		fmt.Fprintf(env.Stderr, "checker: skipped %s\n", escape.Line(p)) // a participant's file name
	}
	if err != nil {
		return 0, &usageError{err.Error(), "each participant runs: bin/checker check --json > results/NAME.json"}
	}
	dst := dir
	if out != "" {
		dst = absPath(env.Dir, out)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return 0, err
		}
	}
	var html, md bytes.Buffer
	if err := g.HTML(&html); err != nil {
		return 0, err
	}
	if err := g.Markdown(&md); err != nil {
		return 0, err
	}
	for name, data := range map[string][]byte{"room.html": html.Bytes(), "room.md": md.Bytes()} {
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return 0, err
		}
	}
	env.Stdout.Write(md.Bytes())
	fmt.Fprintf(env.Stderr, "checker: wrote %s and %s\n", filepath.Join(dst, "room.html"), filepath.Join(dst, "room.md"))
	return ExitPass, nil
}

// gitUserName is the participant's name for a JSON grade when --name is
// not given: git's user.name, or nothing.
func gitUserName(ctx context.Context, dir string, env Env) string {
	cmd := exec.CommandContext(ctx, "git", "config", "user.name")
	cmd.Dir, cmd.Env = dir, env.Vars
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func absPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
