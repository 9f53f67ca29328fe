package board

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"gokata/checker/internal/escape"
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
