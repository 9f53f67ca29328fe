//go:build unix

package grade

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup makes cancelling cmd kill everything it started.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
