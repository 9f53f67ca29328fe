package board

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockName is the lock file in a room's directory: held by the server
// that has the room open, and holding its process id.
const LockName = "serve.lock"

// errLocked is what tryLock returns when another process holds the lock.
var errLocked = errors.New("locked")

// lockRoom takes the room's lock file, or says which process has it.
func lockRoom(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, err := tryLock(path)
	if errors.Is(err, errLocked) {
		who := "another process"
		if data, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil {
				who = fmt.Sprintf("process %d", pid)
			}
		}
		return nil, fmt.Errorf("another board (%s) is serving the room in %s: stop it, or give this one another directory", who, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("lock the room: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
