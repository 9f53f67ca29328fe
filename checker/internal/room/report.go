package room

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/usage"
)

// UsageError is a request that cannot be done as made (usage.Error).
type UsageError = usage.Error

// ReportConfig is what Report draws, and where from and to.
type ReportConfig struct {
	Katas   []Kata // a column each, graded or not
	WorkDir string // Dir and Out are relative to it
	Dir     string // the participants' JSON grades, *.json
	Out     string // where room.html and room.md go; "": Dir
}

// Report draws the room grid from the participants' grades in cfg.Dir:
// room.html (one self-contained page) and room.md, the Markdown also on
// stdout. Each file skipped, and the files written, are a line on log.
// A directory with no grades to read is a *UsageError.
func Report(cfg ReportConfig, stdout, log io.Writer) error {
	dir := abs(cfg.WorkDir, cfg.Dir)
	g := New(cfg.Katas)
	problems, err := g.ReadDir(dir)
	for _, p := range problems {
		fmt.Fprintf(log, "checker: skipped %s\n", escape.Line(p)) // a participant's file name
	}
	if err != nil {
		return &UsageError{Msg: err.Error(), Try: "each participant runs: bin/checker check --json > results/NAME.json"}
	}
	dst := dir
	if cfg.Out != "" {
		dst = abs(cfg.WorkDir, cfg.Out)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	}
	var html, md bytes.Buffer
	if err := g.HTML(&html); err != nil {
		return err
	}
	if err := g.Markdown(&md); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"room.html": html.Bytes(), "room.md": md.Bytes()} {
		if err := os.WriteFile(filepath.Join(dst, name), data, 0o644); err != nil {
			return err
		}
	}
	stdout.Write(md.Bytes())
	fmt.Fprintf(log, "checker: wrote %s and %s\n", filepath.Join(dst, "room.html"), filepath.Join(dst, "room.md"))
	return nil
}

// abs is path p, relative to dir unless it is absolute.
func abs(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
