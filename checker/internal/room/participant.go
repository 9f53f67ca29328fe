package room

import (
	"context"
	"os/exec"
	"strings"
)

// Participant is the name a grade carries: name (--name), else KATA_NAME,
// else git's user.name in dir; for a push, else the system's user name
// (USER, USERNAME), since the board needs one. env is the environment,
// KEY=value, that is read and that git runs with.
func Participant(ctx context.Context, name, dir string, env []string, forPush bool) string {
	for _, n := range []string{name, getenv(env, "KATA_NAME")} {
		if n != "" {
			return n
		}
	}
	if n := gitUserName(ctx, dir, env); n != "" || !forPush {
		return n
	}
	if n := getenv(env, "USER"); n != "" {
		return n
	}
	return getenv(env, "USERNAME")
}

// gitUserName is git's user.name in dir, or nothing.
func gitUserName(ctx context.Context, dir string, env []string) string {
	cmd := exec.CommandContext(ctx, "git", "config", "user.name")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// getenv is the value of key in env, KEY=value; the first one set.
func getenv(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
