package session_test

import (
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
	iv := session.NewInterview(kata(), "", t0, 30*time.Minute)
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
	iv := session.NewInterview(kata(), "", t0, 3*time.Minute)
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
	iv := session.NewInterview(k, "", t0, 30*time.Minute)
	iv.Graded(t0.Add(2*time.Minute), session.Graded{Result: result(k)}, "start")
	iv.Graded(t0.Add(7*time.Minute), session.Graded{Result: result(k, "R1")}, "save")
	iv.Graded(t0.Add(9*time.Minute), session.Graded{Result: result(k, "R2")}, "save")
	iv.Graded(t0.Add(12*time.Minute), session.Graded{Result: result(k, "R1", "R2")}, "save")
	assert.Equal(t, 4, iv.Grades)
	assert.Equal(t, map[string]time.Duration{"R1": 7 * time.Minute, "R2": 9 * time.Minute}, iv.FirstPass)
	assert.True(t, iv.Last.Passed())
}

// What a typed line asks for; hints in order, the last one again after it.
func TestInterviewTyped(t *testing.T) {
	iv := session.NewInterview(kata(), "", t0, 30*time.Minute)
	assert.Equal(t, session.Nothing, iv.Typed("  "))
	assert.Equal(t, session.Unknown, iv.Typed("help me"))
	for shown, want := range []int{1, 2, 2} {
		assert.Equal(t, session.AskHint, iv.Typed(" Hint "))
		h, ok := iv.Hint(t0, shown)
		assert.True(t, ok)
		assert.Equal(t, want, h.N, "after %d shown", shown)
		assert.Equal(t, 2, h.Of)
	}
	assert.Equal(t, "select", func() string { h, _ := iv.Hint(t0, 1); return h.Text }())
	assert.Equal(t, session.Finish, iv.Typed("DONE"))
	assert.Equal(t, "Done.", iv.Ending)

	none := session.NewInterview(catalog.Kata{Slug: "99-none"}, "", t0, time.Minute)
	none.Typed("hint")
	_, ok := none.Hint(t0, 0)
	assert.False(t, ok, "a kata without hints has none to show")
}

func TestClockText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 59*time.Second + 600*time.Millisecond: "1:00", 25 * time.Minute: "25:00", -time.Second: "0:00",
	} {
		assert.Equal(t, want, session.ClockText(d))
	}
}
