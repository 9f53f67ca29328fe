package cli

import (
	"flag"
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
		return func(c *call) (int, error) { return interview(c, *name, *out, *minutes, *poll) }
	},
}

// interview runs a kata as a timed interview: the story, a pause for the
// candidate's questions, then the Decisions (the answers), a countdown
// from the kata's minutes with a grade on every save, and at the end a
// Markdown scorecard for the interviewer.
func interview(c *call, name, out string, minutes int, poll time.Duration) (int, error) {
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
		Clock: env.clock(), Poll: poll, Lines: readLines(env.Stdin), Emit: t.show,
	})
	switch {
	case ctx.Err() != nil:
		return ExitInterrupted, nil
	case err != nil:
		return 0, err
	case iv.Last.Passed():
		return ExitPass, nil
	}
	return ExitFail, nil
}
