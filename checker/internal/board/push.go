package board

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/room"
)

// PushTimeout bounds a push: grading never waits longer for a board.
const PushTimeout = time.Second

// client connects to the board directly: the board is on the room's
// network, where an HTTP proxy from the environment would only be in
// the way.
var client = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	DialContext:         (&net.Dialer{Timeout: PushTimeout}).DialContext,
	MaxIdleConnsPerHost: 100, // a process pushes to one board
	IdleConnTimeout:     time.Minute,
}}

// Push sends one JSON grade to the board at base ("http://host:8080")
// with the room's token and, if not "", the participant's join code, and
// gives up after PushTimeout. Its error is one
// line, fit to show a participant: what went wrong, never the token.
func Push(ctx context.Context, base, token, code string, grade []byte) error {
	u, err := PushURL(base)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, PushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(grade))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if code != "" {
		req.Header.Set(CodeHeader, code)
	}
	resp, err := client.Do(req)
	if err != nil {
		return pushError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return nil
	}
	reason, _ := bufio.NewReader(resp.Body).ReadString('\n')
	reason = escape.Line(strings.TrimSpace(reason)) // shown in the participant's terminal
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return fmt.Errorf("the board answered %d: %s", resp.StatusCode, reason)
}

// PushURL is where grades go on the board at base; base must be an http
// or https URL with a host.
func PushURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not a board's address: give one like http://192.168.1.20:8080", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/push"
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// pushError says in a few words why a request got no answer.
func pushError(ctx context.Context, err error) error {
	var dns *net.DNSError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no answer within %v", PushTimeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("connection refused: is the board running, at that address and port?")
	case errors.As(err, &dns):
		return fmt.Errorf("no such host %q", dns.Name)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err
}

// PushConfig is where a participant's grades go: the flags of check and
// watch, or else the environment's KATA_PUSH, KATA_TOKEN and KATA_CODE.
type PushConfig struct {
	URL, Token, Code string    // --push, --token, --code
	Name             string    // --name (see room.Participant)
	Env              []string  // the environment, KEY=value
	Dir              string    // the checkout, where git's user.name is read
	Verb             string    // the checker verb pushing, for what to try
	Log              io.Writer // a line per grade not sent
}

// Pusher sends a participant's grades to the room board. A push that
// fails costs one line on the log and at most PushTimeout: the grade is
// shown and counts as without it.
type Pusher struct {
	url, token string
	code       string // the participant's join code, if the room has codes
	name       string // the participant
	log        io.Writer
}

// NewPusher is the pusher cfg names; nil when it names no board. A board
// named without its token, or a token without a board, is a *UsageError.
func NewPusher(ctx context.Context, cfg PushConfig) (*Pusher, error) {
	base, token, code := cfg.URL, cfg.Token, cfg.Code
	if base == "" {
		base = getenv(cfg.Env, "KATA_PUSH")
	}
	if token == "" {
		token = getenv(cfg.Env, "KATA_TOKEN")
	}
	try := "checker " + cfg.Verb + " --push http://HOST:8080 --token TOKEN"
	if base == "" {
		if cfg.Token != "" {
			return nil, &UsageError{Msg: "--token is the room's token for --push: name the board too", Try: try}
		}
		return nil, nil
	}
	if _, err := PushURL(base); err != nil {
		return nil, &UsageError{Msg: "--push: " + err.Error(), Try: try}
	}
	if token == "" {
		return nil, &UsageError{Msg: "--push needs the room's token: --token (or KATA_TOKEN), as the facilitator gave it", Try: "checker " + cfg.Verb + " --push " + base + " --token TOKEN"}
	}
	if code == "" {
		code = getenv(cfg.Env, "KATA_CODE")
	}
	log := cfg.Log
	if log == nil {
		log = io.Discard
	}
	name := room.Participant(ctx, cfg.Name, cfg.Dir, cfg.Env, true)
	return &Pusher{url: base, token: token, code: code, name: name, log: log}, nil
}

// Send sends a grade of kata to the board, as encode writes it in JSON
// under the participant's name. A nil pusher sends nothing.
func (p *Pusher) Send(ctx context.Context, kata string, encode func(w io.Writer, participant string) error) {
	if p == nil {
		return
	}
	var b bytes.Buffer
	if err := encode(&b, p.name); err != nil {
		fmt.Fprintf(p.log, "checker: grade not sent to the board: %v\n", err)
		return
	}
	if err := Push(ctx, p.url, p.token, p.code, b.Bytes()); err != nil && ctx.Err() == nil {
		fmt.Fprintf(p.log, "checker: grade of %s not sent to the board at %s: %v\n", kata, p.url, err)
	}
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
