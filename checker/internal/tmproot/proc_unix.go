//go:build unix

package tmproot

import (
	"os"
	"syscall"
)

// alive reports whether process pid exists (or may: when unsure, yes).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) != syscall.ESRCH
}

func mine(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
