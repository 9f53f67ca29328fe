package cli

import (
	"context"
	"flag"
	"io"
	"time"

	"gokata/checker/internal/board"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
	"gokata/checker/internal/room"
	"gokata/checker/internal/session"
)

// pushFlags are the flags of the verbs that grade and can send each grade
// to a workshop's live board (checker serve).
type pushFlags struct {
	url, token, code *string
}

func definePush(fs *flag.FlagSet) pushFlags {
	return pushFlags{
		url:   fs.String("push", "", "also send each grade to the room board at `URL`, as JSON\n(default $KATA_PUSH; the facilitator's checker serve prints it)"),
		token: fs.String("token", "", "the room's join `TOKEN` for --push (default $KATA_TOKEN)"),
		code:  fs.String("code", "", "your own join `CODE` for --push, when the facilitator gave\nyou one (default $KATA_CODE)"),
	}
}

// pusher sends each grade a session makes to the room board
// (board.Pusher).
type pusher struct {
	ctx   context.Context
	env   Env
	board *board.Pusher
}

// newPusher reads --push, --token and --code, or the environment; nil
// when neither names a board. name is --name.
func newPusher(c *call, f pushFlags, name string) (*pusher, error) {
	b, err := board.NewPusher(c.ctx, board.PushConfig{URL: *f.url, Token: *f.token, Code: *f.code, Name: name,
		Env: c.env.Vars, Dir: checkoutDir(c), Verb: c.verb, Log: c.env.Stderr})
	if err != nil || b == nil {
		return nil, err
	}
	return &pusher{ctx: c.ctx, env: c.env, board: b}, nil
}

// show pushes the grade of a Graded event.
func (p *pusher) show(e session.Event) {
	if g, ok := e.(session.Graded); ok {
		p.push(g.Result, report.Meta{Time: p.env.clock().Now().Truncate(time.Second), Fingerprint: g.Fingerprint})
	}
}

// push sends r as check --json prints it, with meta's time and
// fingerprints under the pusher's name.
func (p *pusher) push(r *grade.Result, meta report.Meta) {
	if p == nil {
		return
	}
	p.board.Send(p.ctx, r.Kata.Slug, func(w io.Writer, name string) error {
		meta.Participant = name
		return report.JSON(w, r, meta)
	})
}

// participant is the name a grade carries (room.Participant).
func participant(c *call, name string, forPush bool) string {
	return room.Participant(c.ctx, name, checkoutDir(c), c.env.Vars, forPush)
}

// checkoutDir is where git's user.name is read: the checkout, else the
// working directory.
func checkoutDir(c *call) string {
	if c.cat != nil {
		return c.cat.Root
	}
	return c.env.Dir
}
