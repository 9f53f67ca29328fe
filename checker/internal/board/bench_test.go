package board

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
// answered), with 30 pages following /events. Every push must be
// acknowledged, be in the room's file, be in the grid, and come back
// after a restart. It reports pushes/s; push-to-visible, p50 and p99,
// from the start of a push made during that load until a page shows it;
// and, on Linux, the process's peak RSS after a pass of oversized and
// malformed pushes (make bench; the numbers are in docs/facilitator.md).
func BenchmarkRoom(b *testing.B) {
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		s, _ := start(b, dir)
		pages := openPages(b, s.url, benchPages)
		grades := make([][][]byte, participants)
		for p := range grades {
			for r := range rounds {
				grades[p] = append(grades[p], roundGrade(p, r))
			}
		}
		b.StartTimer()
		began := time.Now()
		probing := make(chan struct{})
		probes := make(chan []time.Time, 1)
		go func() { probes <- probe(b, s.url, probing) }()
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
		close(probing)
		b.StopTimer()
		failed.Range(func(k, v any) bool {
			b.Errorf("push %v: %v", k, v)
			return true
		})
		b.ReportMetric(float64(participants*rounds)/took.Seconds(), "pushes/s")
		reportVisible(b, pages, <-probes)
		oversized(b, s.url)
		if rss, ok := peakRSS(); ok {
			b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
		}
		if err := s.stop(); err != nil {
			b.Fatal(err)
		}
		pages.wait()
		checkNothingLost(b, s.Server, dir)
	}
}

// benchPages is how many pages follow the board during the benchmark: the
// projector and a page per participant of a large room who looks.
const benchPages = 30

// pages are boards following /events, each noting when it first showed
// each probe's row.
type pages struct {
	mu      sync.Mutex
	shown   []map[int]time.Time // per page: probe → when it showed
	bodies  []io.Closer
	drained sync.WaitGroup
}

var probeRE = regexp.MustCompile(`data-participant="probe (\d+)"`)

func openPages(b *testing.B, url string, n int) *pages {
	ps := &pages{}
	for i := range n {
		resp, err := http.Get(url + "/events")
		if err != nil {
			b.Fatal(err)
		}
		ps.mu.Lock()
		ps.shown = append(ps.shown, map[int]time.Time{})
		ps.mu.Unlock()
		ps.bodies = append(ps.bodies, resp.Body)
		ps.drained.Go(func() { // a page reads every table it is sent
			r := bufio.NewReader(resp.Body)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				now := time.Now()
				ps.mu.Lock()
				for _, m := range probeRE.FindAllStringSubmatch(line, -1) {
					n, _ := strconv.Atoi(m[1])
					if _, ok := ps.shown[i][n]; !ok {
						ps.shown[i][n] = now
					}
				}
				ps.mu.Unlock()
			}
		})
	}
	return ps
}

// wait closes the pages and waits for their readers.
func (ps *pages) wait() {
	for _, body := range ps.bodies {
		body.Close()
	}
	ps.drained.Wait()
}

// probe pushes, until done is closed, a grade of a new participant
// ("probe N") every 20 ms, and returns when each push began.
func probe(b *testing.B, url string, done <-chan struct{}) []time.Time {
	var sent []time.Time
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-done:
			return sent
		case <-t.C:
		}
		sent = append(sent, time.Now())
		if err := Push(context.Background(), url, token, "", gradeJSON(fmt.Sprintf("probe %d", n), "06-retry", 7, 7)); err != nil {
			b.Errorf("probe %d: %v", n, err)
		}
	}
}

// reportVisible waits until every page showed every probe (for up to 10
// s), and reports push-to-visible's p50 and p99 over every page and probe.
func reportVisible(b *testing.B, ps *pages, sent []time.Time) {
	deadline := time.Now().Add(10 * time.Second)
	var lat []time.Duration
	for {
		ps.mu.Lock()
		lat = lat[:0]
		for _, shown := range ps.shown {
			for n, at := range shown {
				if n < len(sent) {
					lat = append(lat, at.Sub(sent[n]))
				}
			}
		}
		ps.mu.Unlock()
		if len(lat) == len(ps.shown)*len(sent) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := len(ps.shown) * len(sent); len(lat) != want || want == 0 {
		b.Fatalf("pages showed %d of %d probes", len(lat), want)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "visible-p50-ms")
	b.ReportMetric(pct(0.99), "visible-p99-ms")
}

// oversized pushes, 50 at a time, 200 grades over MaxBody (413) and 200
// of MaxBody bytes that are not JSON (400).
func oversized(b *testing.B, url string) {
	big := bytes.Repeat([]byte("x"), MaxBody+64<<10)
	junk := bytes.Repeat([]byte("{"), MaxBody)
	sem := make(chan struct{}, 50)
	var wg sync.WaitGroup
	for i := range 400 {
		body, want := big, http.StatusRequestEntityTooLarge
		if i%2 == 1 {
			body, want = junk, http.StatusBadRequest
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, _ := http.NewRequest(http.MethodPost, url+"/push", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Errorf("oversized push: %v", err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Errorf("oversized push: %d, want %d", resp.StatusCode, want)
			}
		})
	}
	wg.Wait()
}

// peakRSS is the process's peak resident set (VmHWM), on Linux.
func peakRSS() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`).FindSubmatch(data)
	if m == nil {
		return 0, false
	}
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10, err == nil
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
		rows := 0
		for _, r := range g.Rows {
			if !strings.HasPrefix(r.Participant, "probe ") {
				rows++
			}
		}
		if rows != participants {
			b.Errorf("%d rows in the grid, want %d", rows, participants)
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
