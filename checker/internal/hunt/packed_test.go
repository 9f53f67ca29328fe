package hunt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/hunt"
)

// A packed hunt keeps what grading needs and nothing that names or shows
// the mistake, and reads back as a bug of the same level and bug report.
func TestPackedKeepsNoAnswer(t *testing.T) {
	b := hunt.Bug{Name: "clksleep", Mistake: "pauses with clk.Sleep", Symptom: "the cancel waited", Why: "`clk.Sleep`",
		Level: hunt.Reasoning, Fails: []string{"R4", "B2"}}
	p := hunt.Pack(b, []string{"B1", "B2"})
	data, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"level":"reasoning","symptom":"the cancel waited","bonus":["B2"]}`, string(data))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, hunt.PackedFile), data, 0o600))
	got, err := hunt.ReadPacked(dir)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, hunt.Bug{Name: hunt.PackedName, Symptom: "the cancel waited", Level: hunt.Reasoning, Fails: []string{"B2"}}, got.Bug())
}

func TestReadPacked(t *testing.T) {
	for _, tc := range []struct {
		name, content, err string
	}{
		{"none", "", ""},
		{"not JSON", "{", "hunt.json: unexpected end of JSON input"},
		{"no bug report", `{"level":"one-line"}`, "hunt.json: no bug report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.content != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, hunt.PackedFile), []byte(tc.content), 0o600))
			}
			p, err := hunt.ReadPacked(dir)
			assert.Nil(t, p)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.err)
			}
		})
	}
}
