package cli

import (
	"flag"
	"fmt"
	"time"

	"gokata/checker/internal/session"
)

var interviewVerb = verb{
	name: "interview", args: "NN", section: workshops, needs: needKata | needToolchain,
	summary: "the story, a pause to ask questions, the decisions, a countdown\nwith a grade on every save, then a Markdown scorecard\n(type hint or done)",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		name := fs.String("name", "", "the candidate's `NAME` on the scorecard")
		out := fs.String("out", "", "write the scorecard to `FILE` (default: .kata/interviews/KATA-DATE.md)")
		minutes := fs.Int("minutes", 0, "the time limit in `N` minutes (default: the kata's)")
		colorFlag(fs)
		timeoutFlag(fs)
		poll := pollFlag(fs)
		bughunt := fs.Bool("bughunt", false, "a bug-hunt interview: plant a real mistake in a working solution\n(your .go files are kept in .kata/backup), give its bug report, and\ntime the fix")
		pick := fs.String("pick", "", "with --bughunt, plant the mutant `NAME` instead of a random one")
		return func(c *call) (int, error) {
			if *pick != "" && !*bughunt {
				return 0, &usageError{"--pick names the mistake of a bug hunt: add --bughunt", "checker interview " + nextMark + " --bughunt --pick=" + *pick}
			}
			var h *session.Planted
			if *bughunt {
				b, files, _, err := plant(c.cat, c.kata, *pick, true, true, c.env)
				if err != nil {
					return 0, err
				}
				bugReport(c.env.Stdout, c.cat.Root, c.kata, b, files)
				fmt.Fprintln(c.env.Stdout)
				h = &session.Planted{Mutant: b.Name, Mistake: b.Mistake, Symptom: b.Symptom, Files: files}
			}
			return interview(c, *name, *out, *minutes, *poll, h)
		}
	},
}

// interview runs a kata as a timed interview: the story, a pause for the
// candidate's questions, then the Decisions (the answers), a countdown
// from the kata's minutes with a grade on every save, and at the end a
// Markdown scorecard for the interviewer.
func interview(c *call, name, out string, minutes int, poll time.Duration, h *session.Planted) (int, error) {
	ctx, cat, k, tc, env, opt := c.ctx, c.cat, c.kata, c.tc, c.env, c.opt
	style := c.style
	style.Interview = true
	if minutes < 0 {
		return 0, &usageError{"--minutes must be positive", "checker interview " + nextMark + " --minutes=45"}
	}
	if minutes == 0 {
		minutes = k.Minutes
	}
	t := &terminal{env: env, style: style}
	if out != "" {
		out = absPath(env.Dir, out)
	}
	iv, err := session.RunInterview(ctx, session.InterviewRun{
		Grader: grader(tc, cat.Root, opt, env, t), Kata: k, Candidate: name, Minutes: minutes, Out: out, KeptBack: env.interviewKit(),
		Clock: env.clock(), Poll: poll, Lines: readLines(env.Stdin), Emit: t.show, Hunt: h,
	})
	switch {
	case ctx.Err() != nil:
		return ExitInterrupted, nil
	case err != nil:
		return 0, err
	case iv.Last.Passed() && (h == nil || iv.HuntFixed != nil):
		return ExitPass, nil
	}
	return ExitFail, nil
}
