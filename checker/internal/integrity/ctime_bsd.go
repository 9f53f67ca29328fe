//go:build darwin || freebsd || netbsd

package integrity

import "syscall"

func ctime(st *syscall.Stat_t) syscall.Timespec { return st.Ctimespec }
