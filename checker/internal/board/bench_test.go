package board

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"gokata/checker/internal/room"
)

const (
	participants = 100
	rounds       = 60 // a push a second for a minute
)

// BenchmarkRoom is a workshop's worst minute: 100 participants each push
// a grade every second for a minute, run as fast as the board takes them
// (each simulated second starts when every push of the one before was
// answered), with a board on the projector following /events. Every
// push must be acknowledged, be in the room's file, be in the grid, and
// come back after a restart. It reports pushes/s (make bench; the number is
// in docs/facilitator.md).
func BenchmarkRoom(b *testing.B) {
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		s, _ := start(b, dir)
		projector, err := http.Get(s.url + "/events")
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan struct{})
		go func() { // a board reads every table it is sent
			defer close(drained)
			r := bufio.NewReader(projector.Body)
			for {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
			}
		}()
		grades := make([][][]byte, participants)
		for p := range grades {
			for r := range rounds {
				grades[p] = append(grades[p], roundGrade(p, r))
			}
		}
		b.StartTimer()
		began := time.Now()
		var failed sync.Map
		for r := range rounds {
			var wg sync.WaitGroup
			for p := range participants {
				wg.Go(func() {
					if err := Push(context.Background(), s.url, token, "", grades[p][r]); err != nil {
						failed.Store([2]int{p, r}, err)
					}
				})
			}
			wg.Wait()
		}
		took := time.Since(began)
		b.StopTimer()
		failed.Range(func(k, v any) bool {
			b.Errorf("push %v: %v", k, v)
			return true
		})
		b.ReportMetric(float64(participants*rounds)/took.Seconds(), "pushes/s")
		if err := s.stop(); err != nil {
			b.Fatal(err)
		}
		projector.Body.Close()
		<-drained
		checkNothingLost(b, s.Server, dir)
	}
}

// roundGrade is participant p's grade in second r: a requirement more
// every 8 seconds, and the round in "runs" so that each push is told apart.
func roundGrade(p, r int) []byte {
	var g map[string]any
	if err := json.Unmarshal(gradeJSON(participantName(p), "06-retry", min(7, r/8), 7), &g); err != nil {
		panic(err)
	}
	g["runs"] = r + 1
	out, err := json.Marshal(g)
	if err != nil {
		panic(err)
	}
	return out
}

func participantName(p int) string {
	return "participant " + string(rune('A'+p/26)) + string(rune('a'+p%26))
}

// checkNothingLost: every push is in the file once, every participant's
// best grade is in the grid, and a board opened on the file again shows
// the same grid.
func checkNothingLost(b *testing.B, s *Server, dir string) {
	b.Helper()
	f, err := os.Open(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	seen := map[string]map[int]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, MaxBody*2)
	for sc.Scan() {
		var g struct {
			Participant string
			Runs        int
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			b.Fatalf("a stored line is not a grade: %v", err)
		}
		if seen[g.Participant] == nil {
			seen[g.Participant] = map[int]bool{}
		}
		if seen[g.Participant][g.Runs] {
			b.Errorf("%s's push %d is stored twice", g.Participant, g.Runs)
		}
		seen[g.Participant][g.Runs] = true
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	for p := range participants {
		if n := len(seen[participantName(p)]); n != rounds {
			b.Errorf("%s: %d of %d pushes in the file", participantName(p), n, rounds)
		}
	}
	want := tableOf(b, s)
	s.Grid(func(g *room.Grid) {
		if len(g.Rows) != participants {
			b.Errorf("%d rows in the grid, want %d", len(g.Rows), participants)
		}
		for _, r := range g.Rows {
			if c := r.Cells["06-retry"]; !c.Passed {
				b.Errorf("%s's last grade (a pass) is not in the grid: %s", r.Participant, c.Text())
			}
		}
	})
	again, err := Open(Config{Katas: katas, Dir: dir, Token: token})
	if err != nil {
		b.Fatal(err)
	}
	defer again.Close()
	if got := tableOf(b, again); got != want {
		b.Error("the room read back from its file differs from the room served")
	}
}
