//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package board

import (
	"errors"
	"os"
	"syscall"
)

// tryLock opens path and takes an exclusive flock on it, without waiting.
// The kernel drops the lock when the process ends, even by kill -9.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, err
	}
	return f, nil
}
