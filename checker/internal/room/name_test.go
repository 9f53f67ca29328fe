package room_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/room"
)

func TestName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  Ada   Lovelace\n", "Ada Lovelace"},
		{"Ada\u200b Lovelace", "Ada Lovelace"},             // zero-width space
		{"\u202eAda Lovelace", "Ada Lovelace"},             // right-to-left override
		{"Ada\u2066 Love\u2069lace\u00ad", "Ada Lovelace"}, // isolates, soft hyphen
		{"\u200b\u200c\u200d\ufeff", ""},                   // nothing that shows
		{"\u3164\u115f\u2800", ""},                         // blank letters
		{"Ａｄａ　Ｌｏｖｅｌａｃｅ", "Ada Lovelace"},                   // fullwidth, ideographic space
		{"Ada\x1b]0;x\a\x1b[2J", "Ada]0;x[2J"},             // terminal escapes
		{"Ada\U000E0041", "Ada"},                           // tag characters
		{"Zoë Ōtsuka 王小明", "Zoë Ōtsuka 王小明"},
		{"Zoë ﬁnch Ada⁵", "Zoë finch Ada5"}, // NFKC: composed, ligature, superscript
	} {
		assert.Equal(t, tc.want, room.Name(tc.in), "%q", tc.in)
	}
}

func TestLookAlikes(t *testing.T) {
	assert.Equal(t, "Latin and Cyrillic", room.MixedScript("\u0410da Lovelace"))
	assert.Equal(t, "Latin and Greek", room.MixedScript("\u0391da"))
	assert.Equal(t, "", room.MixedScript("Ada Lovelace"))
	assert.Equal(t, "", room.MixedScript("Анна Каренина"))
	assert.True(t, room.LooksLike("Ada Lovelace", "\u0410d\u0430 L\u043ev\u0435l\u0430\u0441\u0435"))
	assert.True(t, room.LooksLike("HOME", "\u0397\u039f\u039c\u0395"), "Greek capitals")
	assert.False(t, room.LooksLike("Ada", "ada"), "the same name, in another case")
	assert.False(t, room.LooksLike("Ada", "Ida"))
}

// A report cuts a long name; a name of nothing visible takes the file's.
func TestNamesInTheGrid(t *testing.T) {
	g := room.New(nil)
	assert.NoError(t, g.Add(strings.NewReader(grade(strings.Repeat("x", 100), "06-retry", false, 1, 7, 0, 2)), "f"))
	assert.NoError(t, g.Add(strings.NewReader(grade("\u200b\u200b", "06-retry", false, 1, 7, 0, 2)), "from-file"))
	assert.NoError(t, g.Add(strings.NewReader(grade("Ada\u200b Lovelace", "06-retry", false, 1, 7, 0, 2)), ""))
	assert.NoError(t, g.Add(strings.NewReader(grade("\u202eAda Lovelace", "06-retry", false, 2, 7, 0, 2)), ""))
	var names []string
	for _, r := range g.Rows {
		names = append(names, r.Participant)
	}
	assert.Equal(t, []string{"Ada Lovelace", "from-file", strings.Repeat("x", 39) + "…"}, names)
}
