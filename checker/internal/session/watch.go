package session

import (
	"context"
	"sync"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/state"
	"gokata/checker/internal/watch"
)

// Watch grades a kata, then grades it again each time the learner saves;
// on a pass, a line typed (Enter) moves on to the next kata not passed.
type Watch struct {
	Grader  *Grader
	Catalog *catalog.Catalog
	Poll    time.Duration // how often to look for saves; 0: the watcher's default
	Lines   <-chan string // the lines typed; closed at the end of input
	Emit    func(Event)
}

// Run watches kata k until ctx is cancelled, which it reports with Stopped
// and returns as ctx.Err(). Each grade is followed by Watching.
func (w *Watch) Run(ctx context.Context, k catalog.Kata) error {
	lines := w.Lines
	for {
		next, err := w.watchKata(ctx, k, &lines)
		if err != nil {
			return stopped(ctx, err, w.Emit)
		}
		k = next
	}
}

// watchKata watches one kata until Enter after a pass moves on to next.
func (w *Watch) watchKata(ctx context.Context, k catalog.Kata, lines *<-chan string) (catalog.Kata, error) {
	g := grading{grader: w.Grader, poll: w.Poll}
	r, stop, err := g.start(ctx, k)
	if err != nil {
		return k, err
	}
	defer stop()
	next, _ := NextKata(w.Catalog, progress(w.Catalog.Root, w.Emit), k.Slug)
	w.watching(k, r, next)
	for {
		select {
		case <-ctx.Done():
			return k, ctx.Err()
		case <-g.changes:
			if r, err = g.grader.Grade(ctx, k); err != nil {
				return k, err
			}
			w.watching(k, r, next)
		case _, ok := <-*lines:
			if !ok {
				*lines = nil // input ended: only Ctrl-C stops now
				continue
			}
			if r.Passed() && next.Slug != "" {
				return next, nil
			}
		}
	}
}

func (w *Watch) watching(k catalog.Kata, r *grade.Result, next catalog.Kata) {
	emitter(w.Emit).emit(Watching{Kata: k.Slug, Exercise: rel(w.Catalog.Root, k.Exercise), Passed: r.Passed(), Next: next.Slug})
}

// grading is a kata's files watched for saves while it is graded.
type grading struct {
	grader  *Grader
	poll    time.Duration
	changes <-chan struct{}
	// saves, when set, gets the code of every settled save, also of one
	// that a later save overtook before it was graded.
	saves *saves
}

// start watches kata k's files and grades it once; stop ends the watch.
func (g *grading) start(ctx context.Context, k catalog.Kata) (r *grade.Result, stop func(), err error) {
	wctx, stop := context.WithCancel(ctx)
	read := func() (string, error) { return state.Fingerprint(k.Exercise) }
	opt := watch.Options{Poll: g.poll}
	if g.saves != nil {
		var lastFP string // what read saw last, on the watching goroutine
		var lastCode map[string][]byte
		read = func() (string, error) {
			code, fp, err := fingerprint.Read(k.Exercise)
			if err == nil {
				lastFP, lastCode = fp, code
			}
			return fp, err
		}
		opt.Settled = func(fp string) {
			if fp == lastFP {
				g.saves.add(lastCode)
			}
		}
	}
	g.changes = watch.Changes(wctx, read, opt)
	if r, err = g.grader.Grade(ctx, k); err != nil {
		stop()
		return nil, nil, err
	}
	return r, stop, nil
}

// saves are the versions of the code the watch saw settle, each with the
// time on the session's clock, until taken.
type saves struct {
	now  func() time.Time
	mu   sync.Mutex
	list []savedCode
}

type savedCode struct {
	at   time.Time
	code map[string][]byte
}

func (s *saves) add(code map[string][]byte) {
	at := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, savedCode{at, code})
}

// take returns the saves not yet taken, oldest first.
func (s *saves) take() []savedCode {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.list
	s.list = nil
	return out
}

// stopped reports an interrupted session with Stopped; other errors pass
// through.
func stopped(ctx context.Context, err error, emit func(Event)) error {
	if ctx.Err() != nil {
		emitter(emit).emit(Stopped{})
		return ctx.Err()
	}
	return err
}

// NextKata is the first kata after the one named after (all of them when
// after is "", wrapping around) whose last grade in s did not pass; the
// first kata when none is left, and the zero Kata when after was the only
// one. ok is false when there are no katas.
func NextKata(cat *catalog.Catalog, s *state.State, after string) (k catalog.Kata, ok bool) {
	if len(cat.Katas) == 0 {
		return catalog.Kata{}, false
	}
	start := 0
	for i, k := range cat.Katas {
		if k.Slug == after {
			start = i + 1
		}
	}
	for i := range cat.Katas {
		k := cat.Katas[(start+i)%len(cat.Katas)]
		if k.Slug == after {
			continue
		}
		if last := s.Kata(k.Slug).Last; last == nil || !last.Passed {
			return k, true
		}
	}
	if after != "" {
		return catalog.Kata{}, true
	}
	return cat.Katas[0], true
}
