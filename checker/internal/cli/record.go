package cli

import (
	"bufio"
	"flag"
	"fmt"

	"gokata/checker/internal/session"
)

// scorecard renders an interview's record again, after the interviewer
// has filled in its rubric.
var scorecardVerb = verb{
	name: "scorecard", args: "RECORD", section: workshops,
	summary: "print the Markdown scorecard of an interview's record (the .json\nbeside the scorecard), e.g. after filling in its rubric",
	setup: func(*flag.FlagSet) func(*call) (int, error) {
		return func(c *call) (int, error) {
			r, err := loadRecord(c)
			if err != nil {
				return 0, err
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
		step := fs.Bool("step", false, "wait for Enter before each grade")
		return func(c *call) (int, error) {
			r, err := loadRecord(c)
			if err != nil {
				return 0, err
			}
			var next func()
			if *step && c.env.Stdin != nil {
				in := bufio.NewReader(c.env.Stdin)
				next = func() {
					fmt.Fprint(c.env.Stdout, "\n[Enter: the next grade]")
					if _, err := in.ReadString('\n'); err != nil {
						next = nil // input ended: the rest without waiting
					}
				}
			}
			r.Replay(c.env.Stdout, func() {
				if next != nil {
					next()
				}
			})
			return recordExit(r), nil
		}
	},
}

// recordExit is the exit code of a verb that showed record r: a record
// changed since the interview wrote it is not the record it claims to be.
func recordExit(r *session.Record) int {
	if r.Changed() {
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
