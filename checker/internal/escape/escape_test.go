package escape_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/escape"
)

func TestTerminal(t *testing.T) {
	cases := []struct{ in, terminal, line string }{
		{"plain text, ✔ and tabs\t", "plain text, ✔ and tabs\t", "plain text, ✔ and tabs\t"},
		{"two\nlines", "two\nlines", `two\nlines`},
		{"\x1b[2J\x1b]0;title\a", `\x1b[2J\x1b]0;title\a`, `\x1b[2J\x1b]0;title\a`},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`, `\x1b]8;;http://x\x1b\link\x1b]8;;\x1b\`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"c1 \u009b2J, bidi \u202eevil\u2066", `c1 \u009b2J, bidi \u202eevil\u2066`, `c1 \u009b2J, bidi \u202eevil\u2066`},
		{"bad \xff utf-8", `bad \xff utf-8`, `bad \xff utf-8`},
	}
	for _, c := range cases {
		assert.Equal(t, c.terminal, escape.Terminal(c.in), "Terminal(%q)", c.in)
		assert.Equal(t, c.line, escape.Line(c.in), "Line(%q)", c.in)
	}
}

func TestMarkdown(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Pauses grow from `BaseDelay`, to the nanosecond.", "Pauses grow from `BaseDelay`, to the nanosecond."},
		{"**Which errors?** 429 & 503", "**Which errors?** 429 &amp; 503"},
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"code `ch <- v` stays code", "code `ch <- v` stays code"},
		{"a span over\n  two lines: `select { case ch <- v: default: return\n  ErrFull }` sheds load", "a span over\n  two lines: `select { case ch <- v: default: return ErrFull }` sheds load"},
		{"[click](javascript:alert(1)) ![x](http://t/p.png) <http://x>", `\[click\](javascript:alert(1)) !\[x\](http://t/p.png) &lt;http://x&gt;`},
		{"\\`<img src=x onerror=alert(1)>`", "\\\\`<img src=x onerror=alert(1)>`"},
		{"a lone ` backtick <b>", "a lone \\` backtick &lt;b&gt;"},
		{"``a ` b``", "``a ` b``"},
		{"`` `x` ``", "`` `x` ``"},
		{"```\n<script>\n```", "` <script> `"},
		{"- item\n- <i>two</i>", "- item\n- &lt;i&gt;two&lt;/i&gt;"},
		{"esc \x1b[31mred", `esc \\x1b\[31mred`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, escape.Markdown(c.in), "Markdown(%q)", c.in)
	}
}

func TestCellInlineCodeBlock(t *testing.T) {
	assert.Equal(t, `a \| b `+"`x \\| y`"+` c`, escape.Cell("a | b `x | y`\n c"))
	assert.Equal(t, "one line &lt;b&gt;", escape.Inline("one\n line <b>"))
	assert.Equal(t, "`clksleep`", escape.Code("clksleep"))
	assert.Equal(t, "``a`b``", escape.Code("a`b"))
	assert.Equal(t, "`` `x ``", escape.Code("`x"))
	assert.Equal(t, "```diff\n-a\n+b\n```\n", escape.Block("-a\n+b\n", "diff"))
	assert.Equal(t, "````diff\n```\n<script>\\x1b\n````\n", escape.Block("```\n<script>\x1b", "diff"))
}
