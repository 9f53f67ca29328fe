// Package chromium finds a headless-capable Chromium for the checker's
// own page tests (the room report, the live board).
package chromium

import (
	"os"
	"os/exec"
	"testing"
)

// Path is the path of a headless-capable Chromium. Without one the test
// is skipped, except in CI, which installs it (.ci/run): there it fails.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium in CI: .ci/run installs it")
	}
	t.Skip("no chromium (Debian: apt-get install chromium)")
	return ""
}
