package teststream_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/teststream"
)

// What the code prints and what the tests, the race detector and the
// runtime print share the test's output; Printed keeps only the former.
const mixed = "\x16=== RUN   TestR1_A\n" +
	"attempt 1\n" + // fmt.Println
	"2000/01/01 00:00:00 pausing 100ms\n" + // log.Printf
	"    retry_test.go:41: want 2 attempts, got 1\n" + // t.Error
	"        Error Trace:\tretry_test.go:41\n" + // its continuation lines
	"        Messages:   \tthe pause must end\n" +
	"    indented by the code\n" + // no file:line: the code's
	"==================\n" + // a race report
	"WARNING: DATA RACE\n" +
	"Write at 0x00c000012345 by goroutine 7:\n" +
	"  retry.Do()\n" +
	"==================\n" +
	"==================\n" + // a row of '=' the code printed
	"no newline" + "    katatest.go:88: [leak] goroutines still running\n" +
	"\x16=== RUN   TestR1_A/sub\n" +
	"in the subtest\n" +
	"\x16--- FAIL: TestR1_A/sub (0.00s)\n" +
	"\x16=== NAME  TestR1_A\n" +
	"last words\r\n" +
	"panic: boom\n" + // the runtime's dump from here on
	"\n" +
	"goroutine 7 [running]:\n" +
	"retry.Do()\n"

func TestPrintedInEveryChunkSize(t *testing.T) {
	want := teststream.Printed{Head: []string{
		"attempt 1",
		"2000/01/01 00:00:00 pausing 100ms",
		"    indented by the code",
		"==================",
		"no newline",
		"in the subtest",
		"last words",
	}}
	for n := 1; n <= len(mixed); n++ {
		r, err := teststream.Decode(chunked{strings.NewReader(mixed), n}, 1<<10)
		require.NoError(t, err)
		assert.Equal(t, want, r.Tests["TestR1_A"].Printed(), "chunk %d", n)
		assert.Equal(t, want, r.Tests["TestR1_A/sub"].Printed(), "a subtest's is its test's, chunk %d", n)
	}
}

func TestPrintedKeepsHeadAndTail(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x16=== RUN   TestA\n")
	for i := 1; i <= 20_000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
		if i%1000 == 0 {
			b.WriteString("    a_test.go:9: a message\n")
		}
	}
	b.WriteString("\x16--- FAIL: TestA (0.00s)\n\x16FAIL\n")
	r, err := teststream.Decode(strings.NewReader(b.String()), 4<<10)
	require.NoError(t, err)
	p := r.Tests["TestA"].Printed()
	require.Len(t, p.Head, teststream.PrintedLines)
	require.Len(t, p.Tail, teststream.PrintedLines)
	assert.Equal(t, "line 1", p.Head[0])
	assert.Equal(t, "line 19991", p.Tail[0])
	assert.Equal(t, "line 20000", p.Tail[len(p.Tail)-1])
	assert.Equal(t, 20_000-2*teststream.PrintedLines, p.Cut)
	assert.Equal(t, 20_000, p.Total())
}

func TestPrintedLinesAreShortAndHarmless(t *testing.T) {
	long := strings.Repeat("é", teststream.MaxPrintedLine) // 2 bytes each: the cut falls inside one
	s := "\x16=== RUN   TestA\n" + long + "\n" + "\x1b[2Jcleared\x07 \xff\n\x16--- PASS: TestA (0.00s)\n"
	r, err := teststream.Decode(strings.NewReader(s), 1<<10)
	require.NoError(t, err)
	p := r.Tests["TestA"].Printed()
	require.Len(t, p.Head, 2)
	assert.True(t, utf8.ValidString(p.Head[0]))
	assert.True(t, strings.HasSuffix(p.Head[0], "é…"), "a long line is cut, and says so")
	assert.LessOrEqual(t, len(p.Head[0]), teststream.MaxPrintedLine+len("…"))
	assert.Equal(t, `\x1b[2Jcleared\a \xff`, p.Head[1], "control characters are shown, not obeyed")
}

func TestPrintedNothing(t *testing.T) {
	r, err := teststream.Decode(strings.NewReader(stream), 1<<10)
	require.NoError(t, err)
	assert.True(t, r.Tests["TestR1_A"].Printed().Empty(), "a test message is not the code's")
	assert.Equal(t, []string{"partial line without newline"}, r.Tests["TestR2_B"].Printed().Head)
	assert.True(t, r.Tests["TestR3_C"].Printed().Empty(), "a panic is the runtime's")
}
