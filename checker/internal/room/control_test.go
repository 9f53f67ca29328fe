package room_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/room"
)

// A board's file with controls among its grades: a hidden participant's
// row is gone, even with a grade pushed after the hide; a dropped kata's
// cell is gone until a later grade.
func TestControls(t *testing.T) {
	at := "2026-05-04T10:00:00Z"
	file := grade("Ada", "01-fanout", true, 6, 6, 0, 2) +
		grade("Ada", "06-retry", false, 3, 7, 0, 2) +
		grade("Troll", "06-retry", true, 7, 7, 0, 2) +
		grade("Grace", "06-retry", false, 2, 7, 0, 2) +
		`{"control":"hide","participant":"troll","received":"` + at + `"}` + "\n" +
		`{"control":"drop","participant":"Ada","kata":"06-retry","received":"` + at + `"}` + "\n" +
		`{"control":"drop","participant":"Grace","kata":"06-retry","received":"` + at + `"}` + "\n" +
		grade("Troll", "01-fanout", true, 6, 6, 0, 2) +
		grade("Grace", "01-fanout", false, 1, 6, 0, 2)
	g := room.New(nil)
	require.NoError(t, g.Add(strings.NewReader(file), ""))
	var names []string
	for _, r := range g.Rows {
		names = append(names, r.Participant)
	}
	assert.Equal(t, []string{"Ada", "Grace"}, names)
	assert.True(t, g.Rows[0].Cells["01-fanout"].Passed)
	assert.NotContains(t, g.Rows[0].Cells, "06-retry")
	assert.Equal(t, 1, g.Rows[1].Cells["01-fanout"].Required)
	assert.NotContains(t, g.Rows[1].Cells, "06-retry")
	assert.True(t, g.Hidden("Troll"))

	for _, bad := range []string{`{"control":"erase","participant":"Ada"}`, `{"control":"drop","participant":"Ada"}`, `{"control":"hide","participant":" "}`} {
		_, ok, err := room.ParseControl([]byte(bad))
		assert.True(t, ok, bad)
		assert.Error(t, err, bad)
	}
	_, ok, _ := room.ParseControl([]byte(grade("Ada", "01-fanout", true, 6, 6, 0, 2)))
	assert.False(t, ok, "a grade is not a control")
}
