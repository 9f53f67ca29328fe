package firstwins

// Explored B2: Collect returns as soon as every replica has answered, also
// when the answers land while Collect is still busy, not yet waiting:
// replicas that answer at once, on goroutines of their own, while Collect
// is still starting them, making its timer or checking what is missing,
// and replicas released together, in one step, so that one answer may wake
// Collect while the next lands before it waits again. Every replica
// answers in time; the model: Collect returns at the last answer, with no
// time passing on clk, whatever the timeout (none, or later). Each
// scenario plays its Collect several rounds in one bubble, each shaken
// afresh, so that an answer that lands between a check and a wait (a lost
// wake-up) shows in every run.

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testCollectWakeup struct {
	testCollectScenario
	rounds int
}

func (s testCollectWakeup) String() string {
	return fmt.Sprintf("%d rounds, one after the other (times count from each call of Collect), of: %v",
		s.rounds, s.testCollectScenario)
}

func testDrawCollectWakeup(r *rapid.T) testCollectWakeup {
	const unit = 10 * time.Millisecond
	s := testCollectWakeup{rounds: 10}
	n := rapid.IntRange(1, 4).Draw(r, "replicas")
	// All at once, or a few instants shared by several replicas.
	atOnce := rapid.Bool().Draw(r, "every replica answers at once")
	for i := range n {
		at := time.Duration(0)
		if !atOnce {
			at = time.Duration(rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("replica %d answers at (x10ms)", i))) * unit
		}
		s.reps = append(s.reps, testCollectReplica{
			answers: true,
			at:      at,
			kind:    rapid.IntRange(0, testCollectKinds-1).Draw(r, fmt.Sprintf("replica %d answers with", i)),
			honours: rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i)),
		})
	}
	// No timeout, or one that passes only after every answer.
	if rapid.Bool().Draw(r, "a timeout") {
		s.timeout = time.Duration(rapid.IntRange(3, 12).Draw(r, "timeout (x10ms)")) * unit
	} else {
		s.timeout = rapid.SampledFrom([]time.Duration{0, -1}).Draw(r, "no timeout")
	}
	return s
}

func TestB2_ExploreCollectReturnsOnceTheLastAnswerIsIn(t *testing.T) {
	katatest.Explore(t, 20, testDrawCollectWakeup, func(h *katatest.H, s testCollectWakeup) {
		for range s.rounds {
			if s.play(h); h.Failed() {
				return
			}
		}
	})
}
