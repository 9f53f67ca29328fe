package cli

import (
	"bufio"
	"flag"
	"fmt"

	"gokata/checker/internal/record"
	"gokata/checker/internal/session"
)

// scorecard renders an interview's record again, after the interviewer
// has filled in its rubric.
var scorecardVerb = verb{
	name: "scorecard", args: "RECORD", section: workshops,
	summary: "print the Markdown scorecard of an interview's record (the .json\nbeside the scorecard), e.g. after filling in its rubric",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		wf := defineWitness(fs, "compare the record with the copy the interview's witness kept:\nits server's `URL` (checker serve's), or the room's .jsonl there")
		return func(c *call) (int, error) {
			r, err := loadRecord(c)
			if err != nil {
				return 0, err
			}
			if *wf.url != "" {
				cp, err := witnessCopy(c, wf, r)
				if err != nil {
					return 0, err
				}
				if err := r.Witness(cp); err != nil {
					return 0, &usageError{Msg: c.args[0] + ": " + err.Error(), Try: ""}
				}
			}
			fmt.Fprint(c.env.Stdout, r.Scorecard())
			return recordExit(r), nil
		}
	},
}

// replay steps through an interview's record: each grade's time, its
// verdicts and what changed in the code.
var replayVerb = verb{
	name: "replay", args: "RECORD", section: workshops,
	summary: "step through an interview's record: each grade's time, its\nverdicts and the code's diff from the grade before",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		step := fs.Bool("step", false, "one grade at a time: Enter for the next, b back, a grade's\nnumber or a time (12:30) to jump, q to quit")
		return func(c *call) (int, error) {
			r, err := loadRecord(c)
			if err != nil {
				return 0, err
			}
			if *step && c.env.Stdin != nil {
				stepThrough(c.env, r)
			} else {
				r.Replay(c.env.Stdout, nil)
			}
			return recordExit(r), nil
		}
	},
}

// stepThrough shows record r one grade at a time, moving as the lines
// typed say (record.Navigate); at the end of input it shows the rest.
func stepThrough(env Env, r *session.Record) {
	head, pages := r.ReplayPages()
	fmt.Fprint(env.Stdout, head)
	in := bufio.NewReader(env.Stdin)
	cur := 0
	fmt.Fprint(env.Stdout, pages[cur].Text)
	for {
		fmt.Fprintf(env.Stdout, "\n%s ", record.NavigateHelp)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintln(env.Stdout)
			for _, p := range pages[cur+1:] { // input ended: the rest without waiting
				fmt.Fprint(env.Stdout, p.Text)
			}
			return
		}
		next, quit, nerr := record.Navigate(pages, cur, line)
		if quit {
			return
		}
		if nerr != nil {
			fmt.Fprintf(env.Stdout, "%s\n", nerr)
			continue
		}
		cur = next
		fmt.Fprintf(env.Stdout, "\n[grade %d of %d]\n%s", cur+1, len(pages), pages[cur].Text)
	}
}

// recordExit is the exit code of a verb that showed record r: a record
// changed since the interview wrote it, or unlike its witness's copy, is
// not the record it claims to be.
func recordExit(r *session.Record) int {
	if r.Differs() {
		return ExitMismatch
	}
	return ExitPass
}

// loadRecord reads the record named by the one argument.
func loadRecord(c *call) (*session.Record, error) {
	if len(c.args) != 1 {
		return nil, &usageError{Msg: c.verb + " takes one record: the .json an interview wrote", Try: "checker " + c.verb + " .kata/interviews/FILE.json"}
	}
	return session.OpenRecord(c.env.Dir, c.args[0])
}
