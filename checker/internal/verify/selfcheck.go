package verify

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"gokata/checker/internal/catch"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
)

// selfCheck gathers, for one kata, what catch would say of its hidden
// tests written by a learner: verify's own runs of the reference and the
// mutants are catch's runs (package catch), so this costs no build.
type selfCheck struct {
	mu      sync.Mutex
	ref     *grade.Result
	mutants []judged
}

type judged struct {
	m *mutant.Mutant
	r *grade.Result // nil: the patch no longer applies
}

func (c *selfCheck) reference(r *grade.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ref = r
}

func (c *selfCheck) mutant(m *mutant.Mutant, r *grade.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mutants = append(c.mutants, judged{m, r})
}

func (c *selfCheck) stale(m *mutant.Mutant) { c.mutant(m, nil) }

// catchTotal adds up the self-checks of every kata.
type catchTotal struct{ caught, mutants, alarms int }

// line judges the runs as catch does and adds them to total: every
// mutant caught by a test that passes every run on the reference, and
// no test that fails there.
func (c *selfCheck) line(total *catchTotal) line {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ref == nil {
		return line{false, "catch self-check: the reference did not run"}
	}
	alarms, _, trusted := catch.Alarms(c.ref)
	var missed []string
	caught := 0
	for _, j := range c.mutants {
		if j.r == nil {
			missed = append(missed, j.m.Name+" (its patch does not apply)")
			continue
		}
		v := catch.Judge(j.m, trusted, j.r)
		switch {
		case v.Caught:
			caught++
		case len(v.Sometimes) > 0:
			missed = append(missed, j.m.Name+" (caught in only some runs)")
		default:
			missed = append(missed, j.m.Name)
		}
	}
	var problems []string
	for _, a := range alarms {
		problems = append(problems, fmt.Sprintf("false alarm: %s fails on the reference: %s", a.Test, a.Message))
	}
	if len(missed) > 0 {
		slices.Sort(missed)
		problems = append(problems, "not caught: "+strings.Join(missed, ", "))
	}
	total.caught += caught
	total.mutants += len(c.mutants)
	total.alarms += len(alarms)
	text := fmt.Sprintf("catch self-check: the hidden tests, run as a learner's, catch %d of %d mutants, %s", caught, len(c.mutants), alarmText(len(alarms)))
	if len(problems) > 0 {
		return line{false, text + "\n      " + strings.Join(problems, "\n      ")}
	}
	return line{true, text}
}

func alarmText(n int) string {
	switch n {
	case 0:
		return "no false alarm"
	case 1:
		return "1 false alarm"
	}
	return fmt.Sprintf("%d false alarms", n)
}
