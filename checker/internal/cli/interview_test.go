package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/cli"
	"gokata/checker/internal/record"
)

// An interview on a fake clock: the story and the ask-first pause, the
// Decisions after it, a grade on every save, a hint, the countdown, the
// final grade with repeats, a short summary on the candidate's screen,
// and the record and its scorecard.
func TestInterview(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC))
	iv := start(t, dir, cli.Env{Clock: clk}, "interview", "06", "--name", "Ada Lovelace", "--out", "card.md", "--poll=10ms", "--color=never")

	at := iv.out.await(t, 0, "Press Enter when they have answered")
	story := iv.out.String()
	assert.Contains(t, story, "Interview · 06 · "+k.Title)
	assert.NotContains(t, story, k.Ask[0], "the candidate finds the questions")
	assert.NotContains(t, story, k.Decisions[0], "the decisions come after the questions")

	clk.Add(3 * time.Minute) // asking
	iv.typeLine(t, "")
	at = iv.out.await(t, at, k.Decisions[0])
	at = iv.out.await(t, at, "Interview · 06-retry · 27:00 left")
	at = iv.out.await(t, at, "Score: 0/7 required")
	assert.Contains(t, iv.out.String(), "hint 1 covers it: type hint", "in an interview, hints are typed")
	assert.NotContains(t, iv.out.String(), "make hint", "make hint would go around the interview's count")

	iv.typeLine(t, "hint")
	at = iv.out.await(t, at, "Hint 1 of 3")

	clk.Add(10 * time.Minute)
	for _, f := range sources(t, k.Solution) {
		write(t, filepath.Join(k.Exercise, filepath.Base(f)), read(t, f))
	}
	at = iv.out.await(t, at, "Interview · 06-retry · 17:00 left")
	at = iv.out.await(t, at, "Score: 7/7 required")

	clk.Add(12 * time.Minute)
	at = iv.out.await(t, at, "5:00 left.")
	iv.typeLine(t, "done")
	assert.Equal(t, cli.ExitPass, iv.wait(t))
	at = iv.out.await(t, at, "Grading your last code once more, every test 20 times at GOMAXPROCS 1,2,4")
	at = iv.out.await(t, at, "Score: 7/7 required · bonus 2/2 (every test ran 60 times; a requirement counts only if it passed every run)")
	iv.out.await(t, at, "The record of this interview is in card.json, its scorecard in card.md.")
	assert.NotContains(t, iv.out.String(), "## Follow-up questions", "the candidate does not see the answers")

	card := read(t, filepath.Join(dir, "card.md"))
	for _, want := range []string{
		"# Interview scorecard · 06 · " + k.Title,
		"- **Candidate:** Ada Lovelace",
		"- **Date:** 2030-05-06 14:00 +00:00",
		"- **Time used:** 25:00 of 30:00 (asking first: 3:00) · **ended:** done typed",
		"- **Requirements passed:** 7 of 7 · **bonus:** 2 of 2 (final grade: 60 runs: 20 × GOMAXPROCS 1,2,4, 9 of 9 items passed every run)",
		"- **Hints used in the interview:** 1 of 3 (hint 1 at 3:00, typed in the interview)",
		"- **Decisions read before the interview showed them:** not with `decisions`; in this copy the task README shows them too",
		"| ✔ | **R1** ",
		" | 13:00 | 60 of 60 | pass |",
		"**R1** ✘ 3:00–13:00, ✔ from 13:00",
		"## Rubric",
		"## Did the candidate ask first?",
		"- [ ] " + k.Ask[0],
		"## Follow-up questions",
	} {
		assert.Contains(t, card, want)
	}
	followUps := card[strings.Index(card, "## Follow-up questions"):]
	assert.Contains(t, followUps, "\n- **", "the questions from WHY.md")
	assert.Empty(t, iv.errb.String())
}

// When time runs out, the last grade stands and the scorecard is written
// under .kata/interviews.
func TestInterviewTimeUp(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	clk := clock.NewMock()
	clk.Set(time.Date(2030, 5, 5, 18, 30, 0, 0, time.UTC))
	early := start(t, dir, cli.Env{Clock: clk}, "decisions", "06")
	require.Equal(t, cli.ExitPass, early.wait(t))
	assert.Contains(t, early.out.String(), "Decisions for 06-retry")
	clk.Add(15 * time.Hour)
	// One run each in the final grade: TestInterview checks its repeats.
	iv := start(t, dir, cli.Env{Clock: clk}, "interview", "06", "--minutes=10", "--repeat=1", "--poll=10ms", "--color=never")
	iv.stdin.Close() // no interviewer at the keyboard: no pause
	at := iv.out.await(t, 0, "Score: 0/7 required")
	clk.Add(5 * time.Minute)
	at = iv.out.await(t, at, "5:00 left.")
	clk.Add(4 * time.Minute)
	at = iv.out.await(t, at, "1:00 left.")
	clk.Add(time.Minute)
	assert.Equal(t, cli.ExitFail, iv.wait(t))
	at = iv.out.await(t, at, "Time is up.")
	iv.out.await(t, at, "its scorecard in .kata/interviews/20300506-093000-06-retry.md")
	cards, err := filepath.Glob(filepath.Join(dir, ".kata", "interviews", "*-06-retry.md"))
	require.NoError(t, err)
	require.Len(t, cards, 1)
	card := read(t, cards[0])
	assert.Contains(t, card, "- **Time used:** 10:00 of 10:00")
	assert.Contains(t, card, "- **Requirements passed:** 0 of 7")
	assert.Contains(t, card, "- **Hints used in the interview:** 0 of 3")
	assert.Contains(t, card, "- **Decisions read before the interview showed them:** yes, with `decisions 06` (first at 2030-05-05 18:30 +00:00)")
	assert.Contains(t, card, "| ✘ | **R1** ")
	assert.Contains(t, card, "not-implemented: ")
}

// Ctrl-C during the ask-first pause ends the interview at once.
func TestInterviewInterrupted(t *testing.T) {
	dir := checkout(t)
	iv := start(t, dir, cli.Env{Clock: clock.NewMock()}, "interview", "06")
	iv.out.await(t, 0, "Press Enter")
	assert.Equal(t, cli.ExitInterrupted, iv.stop(t))
}

// A bug-hunt interview: the planted code and its bug report before the
// story, the hunt solved by a save, and the scorecard says which mistake
// was planted and when it was fixed; the record's diff is the fix.
func TestInterviewBugHunt(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	k := kata(t, dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC))
	// One run each in the final grade: TestInterview checks its repeats.
	iv := start(t, dir, cli.Env{Clock: clk}, "interview", "06", "--bughunt", "--pick=clksleep", "--out", "card.md", "--repeat=1", "--poll=10ms", "--color=never")

	at := iv.out.await(t, 0, "Press Enter when they have answered")
	assert.Contains(t, iv.out.String(), "Bug report · 06-retry")
	assert.Contains(t, iv.out.String(), "The customer cancelled 100ms into a 200ms pause")
	assert.NotContains(t, iv.out.String(), "You have not passed", "an interview's hunt is the interviewer's choice, not a give-up")
	assert.Contains(t, read(t, filepath.Join(k.Exercise, "retry.go")), "\tclk.Sleep(d)\n")

	clk.Add(2 * time.Minute)
	iv.typeLine(t, "")
	at = iv.out.await(t, at, "Score: 6/7 required")
	at = iv.out.await(t, at, "Bug hunt under way in 06-retry: the planted mistake is still there.")

	clk.Add(10 * time.Minute)
	for _, f := range sources(t, k.Solution) {
		write(t, filepath.Join(k.Exercise, filepath.Base(f)), read(t, f))
	}
	at = iv.out.await(t, at, "Bug hunt solved: you found and fixed the planted mistake (clksleep).")
	iv.typeLine(t, "done")
	assert.Equal(t, cli.ExitPass, iv.wait(t))
	iv.out.await(t, at, "its scorecard in card.md")
	assert.NotContains(t, iv.out.String(), "make bughunt", "in an interview the candidate neither gives up nor starts another hunt")

	card := read(t, filepath.Join(dir, "card.md"))
	assert.Contains(t, card, "- **Bug hunt:** fixed after 12:00 · planted mistake (`clksleep`): pauses with clk.Sleep")
	assert.Contains(t, card, "  Bug report given: The customer cancelled 100ms")
	rec := read(t, filepath.Join(dir, "card.json"))
	assert.Contains(t, rec, `"startCode": "stub"`, "the interview started from the planted code")
	assert.Contains(t, rec, `+\tt := clk.Timer(d)`, "the diff is the candidate's fix")
}

// An interview with a witness, end to end: the interviewer's checker
// serve opens a room, the interview sends it every event as it happens
// and its record at the end, and the scorecard compares the record with
// the witness's copy, read from the server or from its file: it agrees,
// until the record is changed, even with its hash chain computed again.
// A witness that cannot be reached stops the interview before it begins.
func TestInterviewWithAWitness(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	room := filepath.Join(t.TempDir(), "room")
	srv := start(t, dir, cli.Env{}, "serve", "--addr", "127.0.0.1:0", "--token", "interviews-2030", "--admin-token", "interviewer-only", "--dir", room)
	srv.out.await(t, 0, "Ctrl-C stops the board.\n")
	m := regexp.MustCompile(`make interview EX=01 WITNESS=(http://127\.0\.0\.1:\d+) WITNESS_TOKEN=interviews-2030\n`).FindStringSubmatch(srv.out.String())
	require.NotNil(t, m, srv.out.String())
	base := m[1]

	clk := clock.NewMock() // not moved: the witness stamps the real time
	clk.Set(time.Now())
	iv := start(t, dir, cli.Env{Clock: clk}, "interview", "06", "--name", "Ada", "--out", "ada.md", "--repeat=1", "--poll=10ms", "--color=never",
		"--witness", base, "--witness-token", "interviews-2030")
	at := iv.out.await(t, 0, "A witness keeps its own copy of this interview as it happens: room ")
	at = iv.out.await(t, at, "Press Enter when they have answered")
	iv.typeLine(t, "")
	at = iv.out.await(t, at, "Score: 0/7 required")
	iv.typeLine(t, "done")
	assert.Equal(t, cli.ExitFail, iv.wait(t))
	iv.out.await(t, at, "The witness has it too: room ")
	srv.errb.await(t, 0, "got its record")
	assert.Empty(t, iv.errb.String())

	recPath := filepath.Join(dir, "ada.json")
	card := runEnv(t, dir, cli.Env{}, "scorecard", recPath, "--witness", base, "--witness-token", "interviewer-only")
	assert.Equal(t, cli.ExitPass, card.code, card.stdout+card.stderr)
	assert.Regexp(t, `(?m)^\*\*Witness:\*\* ✔ the record matches the copy the witness kept as it happened: its \d+ events, and the record it got at the end\.$`, card.stdout)
	fromFile := run(t, dir, "scorecard", recPath, "--witness", filepath.Join(room, "witness"))
	assert.Equal(t, card.stdout, fromFile.stdout, "the server's own file says the same")
	plain := run(t, dir, "scorecard", recPath)
	assert.Regexp(t, `(?m)^\*\*Witness:\*\* room [a-z0-9]+ at `+regexp.QuoteMeta(base)+` kept a copy as it happened; compare with it: `, plain.stdout)
	wrong := run(t, dir, "scorecard", recPath, "--witness", base, "--witness-token", "interviews-2030")
	assert.Equal(t, cli.ExitUsage, wrong.code, "with an admin token, only it reads the copies")
	assert.Contains(t, wrong.stderr, "the witness answered 401")

	rec, err := record.Load(recPath)
	require.NoError(t, err)
	rec.Final.Passed, rec.Final.Required = true, 7
	require.NoError(t, record.Save(recPath, rec)) // the chain computed again
	forged := run(t, dir, "scorecard", recPath, "--witness", filepath.Join(room, "witness"))
	assert.Equal(t, cli.ExitMismatch, forged.code)
	assert.Contains(t, forged.stdout, "**Record:** hash chain intact")
	assert.Contains(t, forged.stdout, "**Witness:** ✘ the record differs from the copy the witness kept as it happened:\n\n- The record's \"final\" differs from the record the witness got at the end.\n")
	assert.Contains(t, forged.stdout, "- ⚠ The record differs from its witness's copy")
	rec.Witness.Room = "../../../etc/passwd"
	require.NoError(t, record.Save(recPath, rec))
	outside := run(t, dir, "scorecard", recPath, "--witness", filepath.Join(room, "witness"))
	assert.Equal(t, cli.ExitUsage, outside.code)
	assert.Contains(t, outside.stderr, `the record names the witness room "../../../etc/passwd", which is no room's name`)
	assert.Equal(t, cli.ExitPass, srv.stop(t))

	gone := run(t, dir, "interview", "06", "--witness", base, "--witness-token", "interviews-2030")
	assert.Equal(t, cli.ExitUsage, gone.code)
	assert.Contains(t, gone.stderr, "checker: the witness: connection refused: is the interviewer's checker serve running, at that address and port?")
	noToken := run(t, dir, "interview", "06", "--witness", base)
	assert.Contains(t, noToken.stderr, "--witness needs the witness's token, as checker serve printed it")
}

// A take-home with a witness: every check sends its grade, with the code,
// to one room per kata, kept in .kata so that later checks use it; the
// regrade of the returned work says whether the witness saw that very
// code graded.
func TestTakeHomeWithAWitness(t *testing.T) {
	t.Parallel() // each grades in a checkout of its own
	dir := checkout(t)
	room := filepath.Join(t.TempDir(), "room")
	srv := start(t, dir, cli.Env{}, "serve", "--addr", "127.0.0.1:0", "--token", "takehome-2030", "--dir", room)
	srv.out.await(t, 0, "Ctrl-C stops the board.\n")
	m := regexp.MustCompile(`WITNESS=(http://127\.0\.0\.1:\d+) `).FindStringSubmatch(srv.out.String())
	require.NotNil(t, m, srv.out.String())
	base := m[1]

	for i := range 3 {
		switch i {
		case 1:
			hint := run(t, dir, "hint", "06")
			require.Equal(t, cli.ExitPass, hint.code, hint.stderr)
		case 2: // the hint read is forgotten (a reset, or the file deleted): the witness hears of it at the next check
			require.NoError(t, os.Remove(filepath.Join(dir, ".kata", "state.json")))
		}
		ck := run(t, dir, "check", "06", "--name", "Ada", "--witness", base, "--witness-token", "takehome-2030")
		assert.Equal(t, cli.ExitFail, ck.code, "the stub")
		assert.NotContains(t, ck.stderr, "witness", "every grade reached it")
	}
	rooms, err := os.ReadFile(filepath.Join(dir, ".kata", "witness.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rooms), `"06-retry"`)
	entries, err := os.ReadDir(filepath.Join(room, "witness"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "every check went to one room")

	folder := filepath.Join(dir, "exercises", "06-retry")
	same := run(t, dir, "regrade", "--repeat=1", "--witness", base, "--witness-token", "takehome-2030", folder)
	assert.Equal(t, cli.ExitFail, same.code)
	assert.Regexp(t, `(?m)^  ✔ 06-retry: the returned code is the code its last witnessed grade graded \(0/7 required\), of 3 grades from `, same.stdout)
	assert.Regexp(t, `(?m)^  ✔ 06-retry: .*\n      hint 1 read at .*\n      ⚠ progress found reset or edited: what it held before is gone at `, same.stdout,
		"what the progress state held at the next check went to the witness too, and that it was gone at the one after")

	stub := filepath.Join(folder, "retry.go")
	write(t, stub, read(t, stub)+"\n// edited after the last check\n")
	edited := run(t, dir, "regrade", "--repeat=1", "--witness", filepath.Join(room, "witness"), folder)
	assert.Regexp(t, `(?m)^  ⚠ 06-retry: the returned code was never graded while the witness listened: its last grade \(0/7 required, at .*, of 3\) was of other code$`, edited.stdout)

	require.NoError(t, os.Remove(filepath.Join(dir, ".kata", "witness.json")))
	none := run(t, dir, "regrade", "--repeat=1", "--witness", filepath.Join(room, "witness"), folder)
	assert.Contains(t, none.stdout, "  ⚠ 06-retry: the returned kit names no witness room")
	assert.Equal(t, cli.ExitPass, srv.stop(t))
}
