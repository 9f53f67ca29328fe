package cli

import (
	"flag"
	"fmt"
	"time"

	"gokata/checker/internal/hunt"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

var interviewVerb = verb{
	name: "interview", args: "NN", section: workshops, needs: needKata | needToolchain,
	summary: "the story, a pause to ask questions, the decisions, a countdown\nwith a grade on every save (type hint or done), a final grade\nwith repeats, then a JSON record and its Markdown scorecard",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		name := fs.String("name", "", "the candidate's `NAME` on the scorecard")
		out := fs.String("out", "", "write the scorecard to `FILE`, the record beside it as .json\n(default: .kata/interviews/DATE-TIME-KATA-NAME.md)")
		minutes := fs.Int("minutes", 0, "the time limit in `N` minutes (default: the kata's)")
		fs.Int("repeat", session.DefaultRepeat, "the final grade runs every test `N` times at each --cpu\nvalue")
		cpuFlag(fs)
		fresh := fs.Bool("fresh", false, "first reset the kata for a new candidate: the stub back (your\nfiles backed up), its hints, give-up and progress cleared")
		interviewer := fs.Bool("interviewer", false, "the interviewer runs the session: show the scorecard, with the\nfollow-up questions and their answers, at the end")
		colorFlag(fs)
		timeoutFlag(fs)
		poll := pollFlag(fs)
		bughunt := fs.Bool("bughunt", false, "a bug-hunt interview: plant a real mistake in a working solution\n(your .go files are kept in .kata/backup), give its bug report, and\ntime the fix")
		pick := fs.String("pick", "", "with --bughunt, plant the mutant `NAME` instead of a random one")
		wf := defineWitness(fs, "send every event of the record, as it happens, to the interviewer's\nwitness at `URL` (checker serve prints it; default $KATA_WITNESS)")
		return func(c *call) (int, error) {
			if *pick != "" && !*bughunt {
				return 0, &usageError{Msg: "--pick names the mistake of a bug hunt: add --bughunt", Try: "checker interview " + nextMark + " --bughunt --pick=" + *pick}
			}
			return interview(c, interviewOptions{*name, *out, *minutes, *poll, *fresh, *interviewer, *bughunt, *pick, wf})
		}
	},
}

type interviewOptions struct {
	name, out   string
	minutes     int
	poll        time.Duration
	fresh       bool
	interviewer bool
	bughunt     bool   // plant a bug hunt before the clock starts
	pick        string // its mutant; "" for a random one
	witness     witnessFlags
}

// interview runs a kata as a timed interview: the story, a pause for the
// candidate's questions, then the Decisions (the answers), a countdown
// from the kata's minutes with a grade on every save, a final grade with
// repeats, and at the end the record and its scorecard for the
// interviewer. The candidate's screen shows a short summary.
func interview(c *call, o interviewOptions) (int, error) {
	ctx, cat, k, tc, env := c.ctx, c.cat, c.kata, c.tc, c.env
	style := c.style
	style.Interview = true
	if o.minutes < 0 {
		return 0, &usageError{Msg: "--minutes must be positive", Try: "checker interview " + nextMark + " --minutes=45"}
	}
	if o.minutes == 0 {
		o.minutes = k.Minutes
	}
	packed, err := huntRequest(c, o)
	if err != nil {
		return 0, err
	}
	wit, err := dialWitness(c, o.witness, o.name)
	if err != nil {
		return 0, err
	}
	var witnessed session.Witness
	if wit != nil {
		defer wit.Close()
		witnessed = wit
		w := wit.Where()
		fmt.Fprintf(env.Stdout, "A witness keeps its own copy of this interview as it happens: room %s at %s.\n\n", w.Room, w.URL)
	}
	if o.fresh {
		if code, err := reset(ctx, cat, k, true, env); err != nil || code != ExitPass {
			return code, err
		}
		env.Stdout.Write([]byte("\n"))
	}
	planted, err := interviewHunt(c, o, packed)
	if err != nil {
		return 0, err
	}
	if planted != nil {
		report.BugReport(env.Stdout, rel(cat.Root, k.Exercise), k, planted)
		fmt.Fprintln(env.Stdout)
	}
	t := screen(env, style)
	t.Interviewer = o.interviewer
	if o.out != "" {
		o.out = absPath(env.Dir, o.out)
	}
	each := c.opt // every save is graded once; the final grade repeats
	each.Repeat, each.CPU = 1, ""
	iv, err := session.RunInterview(ctx, session.InterviewRun{
		Grader: grader(tc, cat.Root, each, env, t), Kata: k, Candidate: o.name, Minutes: o.minutes, Out: o.out,
		KeptBack: env.interviewKit(), Kit: hasPacked(), Repeat: c.opt.Repeat, CPU: c.opt.CPU, Stub: checkout(cat.Root, env).Stub(ctx, k),
		Clock: env.clock(), Poll: o.poll, Lines: readLines(env.Stdin), Emit: t.Show, Hunt: planted,
		Witness: witnessed,
	})
	switch {
	case ctx.Err() != nil:
		return ExitInterrupted, nil
	case err != nil:
		return 0, err
	case finalPassed(iv) && (planted == nil || iv.HuntFixed != nil):
		return ExitPass, nil
	}
	return ExitFail, nil
}

// huntRequest checks the bug hunt the options ask for before anything
// changes, and reports whether the kata has a hunt planted when its kit
// was packed, which the interview then starts from, --bughunt or not.
// An interview kit carries no mistakes to plant now.
func huntRequest(c *call, o interviewOptions) (packed bool, err error) {
	k := c.kata
	p, err := hunt.ReadPacked(k.Solution)
	switch {
	case err != nil:
		return false, err
	case p != nil && o.pick != "":
		return false, &usageError{Msg: fmt.Sprintf("the bug hunt in %s was planted when this kit was packed: --pick chooses nothing here", k.Slug), Try: "checker interview " + k.ID()}
	case p == nil && o.bughunt && c.env.interviewKit():
		return false, &usageError{Msg: fmt.Sprintf("this interview kit carries no known mistakes, so there is none to plant in %s", k.Slug), Try: "checker interview " + k.ID()}
	}
	return p != nil, nil
}

// interviewHunt is the bug hunt the interview starts from: the one
// planted when the kit was packed (packed), else one planted now with
// --bughunt; nil for none.
func interviewHunt(c *call, o interviewOptions, packed bool) (*session.Planted, error) {
	co := checkout(c.cat.Root, c.env)
	switch {
	case packed:
		return co.PackedHunt(c.ctx, c.kata, true)
	case o.bughunt:
		return co.Plant(c.kata, session.HuntChoice{Name: o.pick}, true, true)
	}
	return nil, nil
}

// finalPassed is whether the interview's last word on the code is a pass:
// the final grade, else the last one.
func finalPassed(iv *session.Interview) bool {
	r := iv.Last
	if iv.Final != nil {
		r = iv.Final
	}
	return r != nil && r.Passed()
}
