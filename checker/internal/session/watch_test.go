package session_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/session"
	"gokata/checker/internal/state"
)

// A watch grades at once; Enter after a pass moves on to the next kata
// not passed; Ctrl-C stops it.
func TestWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root, k := checkout(t)
		next := kata()
		next.Num, next.Slug, next.Exercise = 7, "07-fanout", filepath.Join(root, "exercises", "07-fanout")
		require.NoError(t, os.MkdirAll(next.Exercise, 0o755))
		cat := &catalog.Catalog{Root: root, Katas: []catalog.Kata{k, next}}
		g := &session.Grader{Root: root}
		session.FakeGrades(g, func(_ context.Context, k catalog.Kata) *grade.Result {
			if k.Slug == "06-retry" {
				return result(k, "R1", "R2")
			}
			return result(k)
		})
		ctx, cancel := context.WithCancel(context.Background())
		lines := make(chan string)
		var ev events
		g.Emit = ev.emit
		done := make(chan error, 1)
		go func() {
			w := &session.Watch{Grader: g, Catalog: cat, Lines: lines, Emit: ev.emit}
			done <- w.Run(ctx, k)
		}()
		synctest.Wait()
		got := ev.since(0)
		require.Len(t, got, 2)
		assert.True(t, got[0].(session.Graded).Result.Passed())
		assert.Equal(t, session.Watching{Kata: "06-retry", Exercise: "exercises/06-retry", Passed: true, Next: "07-fanout"}, got[1])

		lines <- ""
		synctest.Wait()
		got = ev.since(2)
		require.Len(t, got, 2)
		assert.Equal(t, session.Watching{Kata: "07-fanout", Exercise: "exercises/07-fanout", Passed: false, Next: ""}, got[1],
			"06 passed: no other kata to go on to")
		lines <- "" // not passed: Enter does nothing
		synctest.Wait()
		assert.Empty(t, ev.since(4))

		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
		assert.Equal(t, []session.Event{session.Stopped{}}, ev.since(4))
		s, err := state.Load(root)
		require.NoError(t, err)
		assert.True(t, s.Kata("06-retry").Last.Passed, "each grade is recorded")
		assert.False(t, s.Kata("07-fanout").Last.Passed)
	})
}

func TestNextKata(t *testing.T) {
	cat := &catalog.Catalog{Katas: []catalog.Kata{{Slug: "01-a"}, {Slug: "02-b"}, {Slug: "03-c"}}}
	s := &state.State{Schema: 1}
	s.Record("02-b", state.Grade{Passed: true})
	for _, c := range []struct{ after, want string }{
		{"", "01-a"}, {"01-a", "03-c"}, {"03-c", "01-a"},
	} {
		k, ok := session.NextKata(cat, s, c.after)
		assert.True(t, ok)
		assert.Equal(t, c.want, k.Slug, "after %q", c.after)
	}
	s.Record("01-a", state.Grade{Passed: true})
	s.Record("03-c", state.Grade{Passed: true})
	k, _ := session.NextKata(cat, s, "")
	assert.Equal(t, "01-a", k.Slug, "all passed: the first")
	k, _ = session.NextKata(cat, s, "01-a")
	assert.Empty(t, k.Slug, "all passed: nowhere to go on to")
	_, ok := session.NextKata(&catalog.Catalog{}, s, "")
	assert.False(t, ok)
}
