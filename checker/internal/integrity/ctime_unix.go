//go:build linux || darwin || freebsd || netbsd || openbsd

package integrity

import (
	"fmt"
	"io/fs"
	"syscall"
)

// changeID identifies a file by inode, size, mode and its modification
// and change times.
func changeID(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%v %d %d %d %d %v", fi.Mode(), st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), ctime(st)), true
}
