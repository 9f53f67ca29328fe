package cli

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A kit's help has no entry for a verb the kit does not have, keeps every
// other one, and leaves no empty heading or double blank line behind.
func TestKitHelp(t *testing.T) {
	kit := withoutVerbs(usage, kitAbsent)
	for verb := range kitAbsent {
		assert.NotRegexp(t, `(?m)^  `+verb+`\b`, kit)
		assert.Regexp(t, `(?m)^  `+verb+`\b`, usage, "the repository's help has it")
	}
	for _, gone := range []string{"--give-up", "--repeat-correct", "out of sight", "Maintainers:"} {
		assert.NotContains(t, kit, gone)
	}
	for _, kept := range []string{"list", "check", "watch", "hint", "reset", "help", "interview", "report", "doctor"} {
		assert.Regexp(t, `(?m)^  `+kept+`\b`, kit)
	}
	assert.Contains(t, kit, "Interviews and workshops:\n  interview NN")
	assert.Contains(t, kit, "check flags:\n  --json")
	assert.NotRegexp(t, regexp.MustCompile(`\n\n\n`), kit)
}
