package cli

import (
	"flag"
	"path/filepath"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/room"
	"gokata/checker/internal/session"
)

var reportVerb = verb{
	name: "report", args: "DIR", section: workshops,
	summary: "the room grid from participants' check --json files in DIR:\nDIR/room.html and DIR/room.md",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		out := fs.String("out", "", "write room.html and room.md to `DIR2` instead")
		return func(c *call) (int, error) { return roomReport(c.args, *out, c.env) }
	},
}

// roomReport draws the room grid from the JSON grades in the directory
// named (room.Report). Inside the checkout every kata gets a column,
// graded or not.
func roomReport(args []string, out string, env Env) (int, error) {
	if len(args) != 1 {
		return 0, &usageError{Msg: "name the directory that holds the participants' JSON grades", Try: "checker report results/"}
	}
	cfg := room.ReportConfig{WorkDir: env.Dir, Dir: args[0], Out: out}
	if cat, err := load(env); err == nil {
		cfg.Katas = roomKatas(cat)
	}
	if err := room.Report(cfg, env.Stdout, env.Stderr); err != nil {
		return 0, err
	}
	return ExitPass, nil
}

// roomKatas is the catalog as the board and the report know it: each
// kata's items and the fingerprint of its hidden tests.
func roomKatas(cat *catalog.Catalog) []room.Kata {
	var katas []room.Kata
	for _, k := range cat.Katas {
		rk := room.Kata{Slug: k.Slug, Title: k.Title, Tests: session.TestsFingerprint(k)}
		for _, it := range k.Requirements {
			rk.Requirements = append(rk.Requirements, room.Item{ID: it.ID, Text: it.Text})
		}
		for _, it := range k.Bonus {
			rk.Bonus = append(rk.Bonus, room.Item{ID: it.ID, Text: it.Text})
		}
		katas = append(katas, rk)
	}
	return katas
}

func absPath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
