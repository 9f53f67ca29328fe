package session

import "testing"

func TestVersionAtLeast(t *testing.T) {
	cases := []struct {
		have, need string
		want       bool
	}{
		{"go1.26.8", "1.25.0", true},
		{"go1.25.0", "1.25.0", true},
		{"go1.25", "1.25.0", true},
		{"go1.25rc1", "1.25.0", true},
		{"go1.24.9", "1.25.0", false},
		{"go1.9", "1.25.0", false},
		{"go2.0.0", "1.25.0", true},
		{"devel go1.27-abcdef", "1.25.0", true},
		{"", "1.25.0", false},
	}
	for _, c := range cases {
		if got := versionAtLeast(c.have, c.need); got != c.want {
			t.Errorf("versionAtLeast(%q, %q) = %v, want %v", c.have, c.need, got, c.want)
		}
	}
}
