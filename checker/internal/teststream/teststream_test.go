package teststream_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/teststream"
)

const stream = "\x16=== RUN   TestR1_A\n" +
	"    retry_test.go:10: hello\n" +
	"\x16--- PASS: TestR1_A (0.01s)\n" +
	"\x16=== NAME  \n" +
	"\x16=== RUN   TestR2_B\n" +
	"partial line without newline\x16--- FAIL: TestR2_B (0.00s)\n" +
	"\x16=== NAME  \n" +
	"\x16=== RUN   TestR3_C\n" +
	"panic: boom\n"

// chunked delivers r's bytes n at a time, as a pipe may.
type chunked struct {
	r io.Reader
	n int
}

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

func TestDecodeInEveryChunkSize(t *testing.T) {
	for n := 1; n <= len(stream); n++ {
		r, err := teststream.Decode(chunked{strings.NewReader(stream), n}, 1<<10)
		require.NoError(t, err)
		assert.Equal(t, []string{"TestR1_A", "TestR2_B", "TestR3_C"}, r.Order, "chunk %d", n)
		assert.Equal(t, "pass", r.Tests["TestR1_A"].Action)
		assert.Equal(t, 0.01, r.Tests["TestR1_A"].Elapsed)
		assert.Equal(t, "    retry_test.go:10: hello\n", r.Tests["TestR1_A"].Output())
		assert.Equal(t, "fail", r.Tests["TestR2_B"].Action)
		assert.Equal(t, "partial line without newline", r.Tests["TestR2_B"].Output())
		assert.Equal(t, []string{"TestR3_C"}, r.Running(), "the test that was running when the output ended")
		assert.Contains(t, r.Tests["TestR3_C"].Output(), "panic: boom")
		assert.Empty(t, r.Package, "no final PASS or FAIL: the binary died")
	}
}

// A print without a newline that holds the marker is output, not the
// start of a frame: the frame after it is still read, in every chunk size.
func TestDecodeMarkerGluedToOutput(t *testing.T) {
	s := "\x16=== RUN   TestR1_A\n" +
		"x\x16y\x16--- PASS: TestR1_A (0.00s)\n" +
		"\x16=== RUN   TestR2_B\n" +
		"\x16\x16=== RUN   TestR9_Fake\x16--- FAIL: TestR2_B (0.00s)\n" +
		"\x16PASS\n"
	for n := 1; n <= len(s); n++ {
		r, err := teststream.Decode(chunked{strings.NewReader(s), n}, 1<<10)
		require.NoError(t, err)
		assert.Equal(t, []string{"TestR1_A", "TestR2_B"}, r.Order, "chunk %d", n)
		assert.Equal(t, "pass", r.Tests["TestR1_A"].Action, "chunk %d", n)
		assert.Equal(t, "x\x16y", r.Tests["TestR1_A"].Output(), "chunk %d", n)
		assert.Equal(t, "fail", r.Tests["TestR2_B"].Action, "chunk %d", n)
		assert.Equal(t, "pass", r.Package, "chunk %d", n)
		assert.Empty(t, r.Forged, "chunk %d", n)
	}
}

func TestDecodeSubtestOutputIsTheParents(t *testing.T) {
	s := "\x16=== RUN   TestR1_A\n" +
		"\x16=== RUN   TestR1_A/limit_1\n" +
		"    bounded_test.go:20: want at most 1 running, saw 2\n" +
		"\x16--- FAIL: TestR1_A/limit_1 (0.00s)\n" +
		"\x16--- FAIL: TestR1_A (0.00s)\n\x16FAIL\n"
	r, err := teststream.Decode(strings.NewReader(s), 1<<10)
	require.NoError(t, err)
	assert.Equal(t, "fail", r.Tests["TestR1_A"].Action)
	assert.Equal(t, "    bounded_test.go:20: want at most 1 running, saw 2\n", r.Tests["TestR1_A"].Output(),
		"a failure inside t.Run is the parent test's message too")
	assert.Empty(t, r.Forged)
}

func TestDecodeRepeatedRuns(t *testing.T) {
	s := "\x16=== RUN   TestA\n\x16--- PASS: TestA (0.00s)\n" +
		"\x16=== RUN   TestA\n\x16--- FAIL: TestA (0.00s)\n" +
		"\x16=== RUN   TestA\n\x16--- PASS: TestA (0.00s)\n\x16FAIL\n"
	r, err := teststream.Decode(strings.NewReader(s), 1<<10)
	require.NoError(t, err)
	assert.Equal(t, []string{"pass", "fail", "pass"}, r.Tests["TestA"].Results)
	assert.Equal(t, "fail", r.Tests["TestA"].Action, "one failed run fails the test")
	assert.Equal(t, "fail", r.Package)
	assert.Empty(t, r.Running())
}

// A panic on a test's own goroutine (a synctest deadlock) ends the run
// after the test was reported failed: no test is running, and the test
// the binary died in is the one that failed last.
func TestDecodeDiedInAFailedTest(t *testing.T) {
	died := "\x16=== RUN   TestA\n\x16--- PASS: TestA (0.00s)\n\x16=== NAME  \n" +
		"\x16=== RUN   TestB\n\x16--- FAIL: TestB (0.00s)\n" +
		"panic: deadlock: all goroutines in bubble are blocked [recovered, repanicked]\n\ngoroutine 20 [running]:\n"
	r, err := teststream.Decode(strings.NewReader(died), 1<<10)
	require.NoError(t, err)
	assert.Empty(t, r.Running())
	assert.Equal(t, "TestB", r.DiedIn())
	assert.Contains(t, r.Tests["TestB"].Output(), "panic: deadlock", "the panic is the failed test's output")

	for name, s := range map[string]string{
		"ended with its final word": "\x16=== RUN   TestB\n\x16--- FAIL: TestB (0.00s)\n\x16FAIL\n",
		"the last test passed":      "\x16=== RUN   TestB\n\x16--- FAIL: TestB (0.00s)\n\x16=== RUN   TestA\n\x16--- PASS: TestA (0.00s)\npanic: boom\n",
		"a test still running":      "\x16=== RUN   TestB\npanic: boom\n",
		"no test ran":               "panic: in init\n",
	} {
		r, err := teststream.Decode(strings.NewReader(s), 1<<10)
		require.NoError(t, err)
		assert.Empty(t, r.DiedIn(), name)
	}
}

func TestDecodeKeepsHeadAndTailOfAFlood(t *testing.T) {
	flood := strings.Repeat("spam spam spam\n", 20_000)
	s := "\x16=== RUN   TestA\nfirst\n" + flood + "    a_test.go:9: the real failure\n\x16--- FAIL: TestA (0.00s)\n\x16FAIL\n"
	r, err := teststream.Decode(iotest.HalfReader(strings.NewReader(s)), 4<<10)
	require.NoError(t, err)
	out := r.Tests["TestA"].Output()
	assert.Less(t, len(out), 5<<10, "output is bounded")
	assert.True(t, strings.HasPrefix(out, "first\n"))
	assert.Contains(t, out, "bytes of output cut")
	assert.True(t, strings.HasSuffix(out, "the real failure\n"), "the tail, where failures are, survives")
}

func TestDecodeKeepsMessagesBuriedInAFlood(t *testing.T) {
	flood := strings.Repeat("spam spam spam\n", 5_000)
	s := "\x16=== RUN   TestA\n" + flood +
		"    call.go:21: [panic] panic: boom\n        at retry.go:9 Do\n" + flood +
		"WARNING: DATA RACE\nWrite at 0x1 by goroutine 7:\n  main.f()\n      /x/a.go:3 +0x1\n==================\n" + flood +
		"panic: test timed out after 5s\n" + flood +
		"\x16--- FAIL: TestA (0.00s)\n"
	r, err := teststream.Decode(strings.NewReader(s), 4<<10)
	require.NoError(t, err)
	out := r.Tests["TestA"].Output()
	assert.Less(t, len(out), 7<<10, "output is bounded")
	assert.Contains(t, out, "    call.go:21: [panic] panic: boom\n        at retry.go:9 Do\n", "the message and its continuation survive")
	assert.Contains(t, out, "WARNING: DATA RACE\nWrite at 0x1 by goroutine 7:\n  main.f()\n      /x/a.go:3 +0x1\n", "so does a race report")
	assert.Contains(t, out, "\npanic: test timed out after 5s\n", "and the line that says why the process died")
	assert.Equal(t, 1, strings.Count(out, "[panic]"), "kept once")
}

// Code under test can print the marker too. Frames that the testing
// package cannot have printed are kept as output and blamed on the test
// that was running; they change no result.
func TestDecodeForgedFrames(t *testing.T) {
	s := "\x16=== RUN   TestR1_A\n" +
		"\x16--- PASS: TestR2_B (0.00s)\n" + // a result for a test that is not running
		"\x16=== RUN   TestR2_B\n" + // a test starting inside another
		"\x16PASS\n" + // the final word, while a test runs
		"\x16--- PASS: TestR1_A (0.00s)\n" + // its own pass, printed early…
		"\x16=== RUN   TestR2_B\n" +
		"\x16=== RUN   TestR2_B/sub\n" + // a real subtest
		"\x16--- PASS: TestR2_B/sub (0.00s)\n" +
		"\x16--- FAIL: TestR2_B (0.00s)\n" +
		"\x16--- FAIL: TestR1_A (0.00s)\n" + // …and the real result after it
		"\x16FAIL\n"
	r, err := teststream.Decode(strings.NewReader(s), 1<<10)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"TestR1_A": "--- PASS: TestR2_B (0.00s)",
	}, r.Forged, "the first forged frame, blamed on the test that printed it")
	assert.Equal(t, []string{"pass"}, r.Tests["TestR1_A"].Results, "the early pass is the only result it got")
	assert.Equal(t, []string{"fail"}, r.Tests["TestR2_B"].Results, "forged frames change no result")
	assert.Contains(t, r.Tests["TestR1_A"].Output(), "--- PASS: TestR2_B", "forged frames stay visible as output")
	assert.Equal(t, "fail", r.Package)
	assert.Empty(t, r.Running())
}

// A learner's code may print megabytes; decoding must keep up with the pipe.
func BenchmarkDecodeFlood(b *testing.B) {
	s := "\x16=== RUN   TestA\n" + strings.Repeat("flood flood flood flood\n", 200_000) + "\x16--- FAIL: TestA (0.00s)\n\x16FAIL\n"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if _, err := teststream.Decode(strings.NewReader(s), 64<<10); err != nil {
			b.Fatal(err)
		}
	}
}

// endless yields n bytes of a repeated pattern, and notes the most heap
// in use while it is read.
type endless struct {
	block []byte // the pattern repeated
	n     int64
	off   int
	reads int
	peak  uint64
}

func newEndless(pattern string, n int64) *endless {
	return &endless{block: []byte(strings.Repeat(pattern, (64<<10)/len(pattern)+1)[:(64<<10)/len(pattern)*len(pattern)]), n: n}
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if e.reads++; e.reads%64 == 0 {
		// What the decoder keeps, not the garbage it left since the last
		// cycle: that depends on when the GC happens to run.
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		e.peak = max(e.peak, m.HeapAlloc)
	}
	n := copy(p[:min(int64(len(p)), e.n)], e.block[e.off:])
	e.off = (e.off + n) % len(e.block)
	e.n -= int64(n)
	return n, nil
}

// A flood of output costs memory in proportion to the limit, not to its
// size, whatever its shape: one line without end (after a test started, or
// after a marker, as a frame that never ends), or endless test names.
func TestDecodeMemoryIsBounded(t *testing.T) {
	const size = 128 << 20
	const limit = 64 << 10
	for name, flood := range map[string]struct {
		head, pattern string
		size          int64
	}{
		"no newline":    {"\x16=== RUN   TestA\n", "flood ", size},
		"endless frame": {"\x16=== RUN   TestA\n\x16--- PASS: ", "A", size},
		"test names":    {"\x16=== RUN   TestA\n", "\x16=== RUN   TestB\n\x16--- PASS: TestB (0.00s)\n\x16=== RUN   TestC\n\x16--- PASS: TestC (0.00s)\n", size / 16},
	} {
		t.Run(name, func(t *testing.T) {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			e := newEndless(flood.pattern, flood.size)
			r, err := teststream.Decode(io.MultiReader(strings.NewReader(flood.head), e), limit)
			require.NoError(t, err)
			assert.Less(t, int64(e.peak)-int64(m.HeapAlloc), int64(8<<20), "heap grown while decoding %d MiB", flood.size>>20)
			assert.Less(t, len(r.Tests["TestA"].Output()), 2*limit)
		})
	}
}

func TestDecodeTooManyNames(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x16=== RUN   TestFirst\n\x16--- PASS: TestFirst (0.00s)\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "\x16=== RUN   TestN%d\n\x16--- PASS: TestN%d (0.00s)\n", i, i)
	}
	r, err := teststream.Decode(strings.NewReader(b.String()), 1<<10)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(r.Tests), 10000)
	assert.Equal(t, "pass", r.Tests["TestFirst"].Action)
}
