package cli

import (
	"flag"
	"time"

	"gokata/checker/internal/board"
	"gokata/checker/internal/room"
)

var serveVerb = verb{
	name: "serve", section: workshops, needs: needCatalog,
	summary: "the live room board: participants' checks push their grades\n(check --push), and the board shows the room grid as it changes;\nand the witness that keeps a copy of each interview (interview --witness)",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		cfg := board.ServeConfig{MaxStored: board.DefaultMaxStored, MaxData: board.DefaultMaxData}
		fs.StringVar(&cfg.Addr, "addr", ":8080", "listen on `host:port`")
		fs.StringVar(&cfg.Dir, "dir", "", "keep the room's grades in `DIR` (default .kata/room/ in the checkout)")
		fs.StringVar(&cfg.Token, "token", "", "the room's join `TOKEN` (default: a new random one, printed)")
		fs.StringVar(&cfg.Agenda, "katas", "", "show only the agenda's katas, `NN,NN` (default all; grades\nof the others are still kept)")
		fs.DurationVar(&cfg.QuietAfter, "quiet", 10*time.Minute, "dim a participant quiet for this `duration` (0: never)")
		fs.DurationVar(&cfg.StuckAfter, "stuck", room.DefaultStuckAfter, "count a participant stuck after this `duration` on one item")
		fs.BoolVar(&cfg.VerifiedOnly, "verified-only", false, "refuse a grade made by other hidden tests than this checkout's\n(default: keep it, marked)")
		fs.StringVar(&cfg.AdminToken, "admin-token", "", "the facilitator's `TOKEN` for /admin/hide and /admin/drop\n(default $KATA_ADMIN_TOKEN; none: no admin requests)")
		fs.StringVar(&cfg.Codes, "codes", "", "take pushes only from the participants in `FILE`, each with\ntheir own join code: a line per participant, their name then their code")
		fs.IntVar(&cfg.MaxPushes, "max-pushes", board.DefaultMaxPushes, "take at most `N` pushes a minute from each participant")
		fs.Var(&cfg.MaxStored, "max-stored", "keep at most `SIZE` of grades per participant, in KiB, MiB or GiB")
		fs.Var(&cfg.MaxData, "max-data", "let the room's file grow to at most `SIZE`, in KiB, MiB or GiB")
		return func(c *call) (int, error) { return serve(c, cfg) }
	},
}

// serve runs the live room board until Ctrl-C (board.Serve).
func serve(c *call, cfg board.ServeConfig) (int, error) {
	if cfg.AdminToken == "" {
		cfg.AdminToken = c.env.get("KATA_ADMIN_TOKEN")
	}
	cfg.Root, cfg.WorkDir, cfg.Catalog = c.cat.Root, c.env.Dir, roomKatas(c.cat)
	cfg.Find = func(name string) (string, bool) {
		k, ok := c.cat.Find(name)
		return k.Slug, ok
	}
	if err := board.Serve(c.ctx, cfg, c.env.Stdout, c.env.Stderr); err != nil {
		return 0, err
	}
	return ExitPass, nil
}
