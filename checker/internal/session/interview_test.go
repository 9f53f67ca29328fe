package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/session"
	"gokata/internal/failure"
)

var t0 = time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)

func kata() catalog.Kata {
	return catalog.Kata{Num: 6, Slug: "06-retry", Meta: catalog.Meta{
		Title:        "Retry",
		Requirements: []catalog.Item{{ID: "R1", Text: "retries"}, {ID: "R2", Text: "stops on cancel"}},
		Bonus:        []catalog.Item{{ID: "B1", Text: "jitter"}},
		Ask:          []string{"How many attempts?"},
	}, Reveal: catalog.Reveal{
		Decisions: []string{"Three attempts."},
		Hints:     []catalog.Hint{{Covers: []string{"R1"}, Text: "loop"}, {Covers: []string{"R2"}, Text: "select"}},
	}}
}

// result passes the items named and fails the others with an assertion.
func result(k catalog.Kata, passing ...string) *grade.Result {
	r := &grade.Result{Kata: k}
	for _, it := range k.Items() {
		v := grade.Verdict{Kind: failure.Assertion, Message: "want 3 attempts"}
		for _, p := range passing {
			if p == it.ID {
				v = grade.Verdict{Kind: failure.Pass}
			}
		}
		r.Items = append(r.Items, grade.ItemResult{Item: it, Bonus: it.ID[0] == 'B', Verdict: v})
	}
	return r
}

// The countdown, on fixed instants: a notice at 5:00 and at 1:00 left,
// each given once, the timer set for the next one, then the time is up.
func TestInterviewCountdown(t *testing.T) {
	iv := session.NewInterview(kata(), "", t0, 30*time.Minute, 0)
	for _, step := range []struct {
		at       time.Duration
		announce bool
		wake     time.Duration
		over     bool
	}{
		{0, false, 25 * time.Minute, false},
		{10 * time.Minute, false, 15 * time.Minute, false}, // a save woke it
		{25 * time.Minute, true, 4 * time.Minute, false},
		{25 * time.Minute, false, 4 * time.Minute, false}, // given once
		{29 * time.Minute, true, time.Minute, false},
		{29*time.Minute + 30*time.Second, false, 30 * time.Second, false},
		{30 * time.Minute, false, 0, true},
	} {
		announce, wake, over := iv.Tick(t0.Add(step.at))
		assert.Equal(t, step.announce, announce, "announce at %v", step.at)
		assert.Equal(t, step.wake, wake, "wake-up at %v", step.at)
		assert.Equal(t, step.over, over, "over at %v", step.at)
	}
	assert.Equal(t, "Time is up.", iv.Ending)
}

// An interview shorter than a notice announces its time at once, and only
// the notices still ahead after that.
func TestInterviewShortCountdown(t *testing.T) {
	iv := session.NewInterview(kata(), "", t0, 3*time.Minute, 0)
	announce, wake, _ := iv.Tick(t0)
	assert.True(t, announce, "3:00 left is announced at the start")
	assert.Equal(t, 2*time.Minute, wake, "the next notice is 1:00 left")
	announce, wake, _ = iv.Tick(t0.Add(2 * time.Minute))
	assert.True(t, announce)
	assert.Equal(t, time.Minute, wake, "then the end")
}

// A grade counts; an item gets the time it first passed, and keeps it.
func TestInterviewGrades(t *testing.T) {
	k := kata()
	iv := session.NewInterview(k, "", t0, 30*time.Minute, 0)
	iv.Graded(t0.Add(2*time.Minute), result(k))
	iv.Graded(t0.Add(7*time.Minute), result(k, "R1"))
	iv.Graded(t0.Add(9*time.Minute), result(k, "R2"))
	iv.Graded(t0.Add(12*time.Minute), result(k, "R1", "R2"))
	assert.Equal(t, 4, iv.Grades)
	assert.Equal(t, map[string]time.Duration{"R1": 7 * time.Minute, "R2": 9 * time.Minute}, iv.FirstPass)
	assert.True(t, iv.Last.Passed())
}

// What a typed line asks for; hints in order, the last one again after it.
func TestInterviewTyped(t *testing.T) {
	iv := session.NewInterview(kata(), "", t0, 30*time.Minute, 0)
	assert.Equal(t, session.Nothing, iv.Typed("  "))
	assert.Equal(t, session.Unknown, iv.Typed("help me"))
	for _, want := range []int{1, 2, 2} {
		assert.Equal(t, session.AskHint, iv.Typed(" Hint "))
		h, ok := iv.Hint()
		assert.True(t, ok)
		assert.Equal(t, want, h.N)
		assert.Equal(t, 2, h.Of)
	}
	assert.Equal(t, "select", func() string { h, _ := iv.Hint(); return h.Text }())
	assert.Equal(t, session.Finish, iv.Typed("DONE"))
	assert.Equal(t, "Done.", iv.Ending)

	none := session.NewInterview(catalog.Kata{Slug: "99-none"}, "", t0, time.Minute, 0)
	none.Typed("hint")
	_, ok := none.Hint()
	assert.False(t, ok, "a kata without hints has none to show")
}

// Hints used are those asked for in the interview, or read with the hint
// verb meanwhile (the state file's count went up), never more than the
// kata has.
func TestInterviewHintsUsed(t *testing.T) {
	iv := session.NewInterview(kata(), "", t0, 30*time.Minute, 1)
	iv.Typed("hint")
	iv.HintsAfter = 1
	assert.Equal(t, 1, iv.HintsUsed(), "asked for once")
	iv.HintsAfter = 3
	assert.Equal(t, 2, iv.HintsUsed(), "two more read with the hint verb")
	iv.HintsAfter = 9
	assert.Equal(t, 2, iv.HintsUsed(), "the kata has two")
}

func TestScorecard(t *testing.T) {
	k := kata()
	iv := session.NewInterview(k, "Ada", t0, 30*time.Minute, 0)
	iv.Answered(t0.Add(3*time.Minute), nil)
	iv.Graded(t0.Add(13*time.Minute), result(k, "R1", "B1"))
	iv.Typed("hint")
	iv.Ended(t0.Add(40 * time.Minute))
	card := session.Scorecard(iv)
	for _, want := range []string{
		"# Interview scorecard · 06 · Retry\n",
		"- **Candidate:** Ada\n",
		"- **Date:** 2030-05-06 14:00\n",
		"- **Time used:** 30:00 of 30:00 (asking first: 3:00)\n", // never more than the limit
		"- **Requirements passed:** 1 of 2 · **bonus:** 1 of 1\n",
		"- **Hints used:** 1 of 2\n",
		"- **Decisions read before the interview showed them:** not with `decisions`; in this copy the task README shows them too",
		"- **Grades:** 1 (one per save)\n",
		"| ✔ | **R1** retries | 13:00 | pass |\n",
		"| ✘ | **R2** stops on cancel |  | assertion: want 3 attempts |\n",
		"## Bonus",
		"- [ ] How many attempts?\n",
		"This copy has no solutions/06-retry/WHY.md.",
	} {
		assert.Contains(t, card, want)
	}
	assert.False(t, strings.Contains(card, "Last code"), "the code compiled")
}

// The scorecard says whether the decisions were read before the interview
// showed them: with the decisions verb, or not at all in an interview kit.
func TestScorecardDecisionsRead(t *testing.T) {
	k := kata()
	iv := session.NewInterview(k, "", t0, 30*time.Minute, 0)
	read := t0.Add(-20 * time.Hour)
	iv.Answered(t0.Add(time.Minute), &read)
	iv.Graded(t0.Add(2*time.Minute), result(k))
	assert.Contains(t, session.Scorecard(iv), "- **Decisions read before the interview showed them:** yes, with `decisions 06` (first at 2030-05-05 18:00)\n")
	iv.Answered(t0.Add(time.Minute), nil)
	iv.KeptBack = true
	assert.Contains(t, session.Scorecard(iv), "- **Decisions read before the interview showed them:** no\n")
}

func TestClockText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 59*time.Second + 600*time.Millisecond: "1:00", 25 * time.Minute: "25:00", -time.Second: "0:00",
	} {
		assert.Equal(t, want, session.ClockText(d))
	}
}
