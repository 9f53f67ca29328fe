package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"time"

	"gokata/checker/internal/board"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/report"
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

// pusher sends each grade a session makes to the room board. A push that
// fails costs one line on stderr and at most board.PushTimeout: the grade
// is shown and counts as without it.
type pusher struct {
	ctx        context.Context
	env        Env
	url, token string
	code       string // the participant's join code, if the room has codes
	name       string // the participant
}

// newPusher reads --push and --token, or KATA_PUSH and KATA_TOKEN; nil
// when neither names a board. name is --name.
func newPusher(c *call, f pushFlags, name string) (*pusher, error) {
	url, token := *f.url, *f.token
	if url == "" {
		url = c.env.get("KATA_PUSH")
	}
	if token == "" {
		token = c.env.get("KATA_TOKEN")
	}
	if url == "" {
		if *f.token != "" {
			return nil, &usageError{"--token is the room's token for --push: name the board too", "checker " + c.verb + " --push http://HOST:8080 --token TOKEN"}
		}
		return nil, nil
	}
	if _, err := board.PushURL(url); err != nil {
		return nil, &usageError{"--push: " + err.Error(), "checker " + c.verb + " --push http://HOST:8080 --token TOKEN"}
	}
	if token == "" {
		return nil, &usageError{"--push needs the room's token: --token (or KATA_TOKEN), as the facilitator gave it", "checker " + c.verb + " --push " + url + " --token TOKEN"}
	}
	code := *f.code
	if code == "" {
		code = c.env.get("KATA_CODE")
	}
	return &pusher{ctx: c.ctx, env: c.env, url: url, token: token, code: code, name: participant(c, name, true)}, nil
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
	meta.Participant = p.name
	var b bytes.Buffer
	if err := report.JSON(&b, r, meta); err != nil {
		fmt.Fprintf(p.env.Stderr, "checker: grade not sent to the board: %v\n", err)
		return
	}
	if err := board.Push(p.ctx, p.url, p.token, p.code, b.Bytes()); err != nil && p.ctx.Err() == nil {
		fmt.Fprintf(p.env.Stderr, "checker: grade of %s not sent to the board at %s: %v\n", r.Kata.Slug, p.url, err)
	}
}

// participant is the name a grade carries: --name, else KATA_NAME, else
// git's user.name; for a push, else the system's user name, since the
// board needs one.
func participant(c *call, name string, forPush bool) string {
	for _, n := range []string{name, c.env.get("KATA_NAME")} {
		if n != "" {
			return n
		}
	}
	root := c.env.Dir
	if c.cat != nil {
		root = c.cat.Root
	}
	if n := gitUserName(c.ctx, root, c.env); n != "" || !forPush {
		return n
	}
	if n := c.env.get("USER"); n != "" {
		return n
	}
	return c.env.get("USERNAME")
}
