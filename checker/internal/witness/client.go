package witness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/record"
)

// Timeout bounds one request to the witness; a failed one is tried
// Tries times in all.
const (
	Timeout = 5 * time.Second
	Tries   = 3
)

// client talks to the witness directly, without a proxy: it is on the
// interviewer's network.
var client = &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: Timeout}).DialContext}}

// Client sends an interview's events to its room, in the order they are
// given, from a goroutine of its own: the interview never waits for the
// network, except in Flush and End.
type Client struct {
	base, room, token string

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []post // not sent yet
	busy    bool   // one is being sent
	unsent  int    // events given up on
	lastErr error
	closed  bool
}

type post struct {
	path string
	body []byte
}

// Dial opens a room for the interview o on the witness at base
// ("http://host:8080") with the server's token. Its error is one line:
// what went wrong, never the token.
func Dial(ctx context.Context, base, token string, o Open) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not a witness's address: give one like http://192.168.1.20:8080", base)
	}
	base = strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
	body, _ := json.Marshal(o)
	resp, err := do(ctx, base+"/witness/open", token, body)
	if err != nil {
		return nil, err
	}
	var room struct{ Room, Token string }
	if err := json.Unmarshal(resp, &room); err != nil || !RoomRE.MatchString(room.Room) || room.Token == "" {
		return nil, fmt.Errorf("%s did not answer as a witness does", base)
	}
	c := &Client{base: base, room: room.Room, token: room.Token}
	c.wake = sync.NewCond(&c.mu)
	go c.send()
	return c, nil
}

// Token is the room's token, for a later Resume.
func (c *Client) Token() string { return c.token }

// Where is the witness and the room, for the record.
func (c *Client) Where() record.Witness { return record.Witness{URL: c.base, Room: c.room} }

// Event sends e, without waiting.
func (c *Client) Event(e record.Event) {
	e.Seq, e.Prev = 0, "" // the record's chain is made when it is written
	body, err := json.Marshal(e)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.queue = append(c.queue, post{"/event", body})
	c.wake.Broadcast()
}

// Flush waits until every event given so far is sent or given up on,
// for at most wait, and says how many never reached the witness.
func (c *Client) Flush(wait time.Duration) (unsent int, err error) {
	stop := time.AfterFunc(wait, func() {
		c.mu.Lock()
		c.closed = true // past the wait: nothing more is sent
		c.wake.Broadcast()
		c.mu.Unlock()
	})
	defer stop.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for (len(c.queue) > 0 || c.busy) && !c.closed {
		c.wake.Wait()
	}
	return c.unsent + len(c.queue), c.lastErr
}

// End sends the record as written and waits for it, then stops the
// client. Its error says why the witness does not have it.
func (c *Client) End(data []byte) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("the witness could not be reached in time")
	}
	c.closed = true
	c.wake.Broadcast()
	for c.busy {
		c.wake.Wait()
	}
	c.mu.Unlock()
	return c.post(context.Background(), post{"/end", data})
}

// Close stops the client; what is not sent yet is not.
func (c *Client) Close() {
	c.mu.Lock()
	c.closed = true
	c.wake.Broadcast()
	c.mu.Unlock()
}

// send posts the queue in order until the client is closed.
func (c *Client) send() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.queue) == 0 && !c.closed {
			c.wake.Wait()
		}
		if c.closed {
			return
		}
		p := c.queue[0]
		c.queue = c.queue[1:]
		c.busy = true
		c.mu.Unlock()
		err := c.post(context.Background(), p)
		c.mu.Lock()
		c.busy = false
		if err != nil {
			c.unsent++
			c.lastErr = err
		}
		c.wake.Broadcast()
	}
}

// post sends p to the room, trying again after a failure.
func (c *Client) post(ctx context.Context, p post) error {
	var err error
	for try := range Tries {
		if try > 0 {
			time.Sleep(time.Duration(try) * 500 * time.Millisecond)
		}
		if _, err = do(ctx, c.base+"/witness/"+c.room+p.path, c.token, p.body); err == nil {
			return nil
		}
	}
	return err
}

// do posts body to u with token and answers the body of a 2xx answer.
func do(ctx context.Context, u, token string, body []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		var dns *net.DNSError
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("the witness gave no answer within %v", Timeout)
		case errors.Is(err, syscall.ECONNREFUSED):
			return nil, errors.New("connection refused: is the interviewer's checker serve running, at that address and port?")
		case errors.As(err, &dns):
			return nil, fmt.Errorf("no such host %q", dns.Name)
		}
		return nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(http.MaxBytesReader(nil, resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return b.Bytes(), nil
	}
	reason, _ := bufio.NewReader(&b).ReadString('\n')
	reason = escape.Line(strings.TrimSpace(reason))
	if reason == "" {
		reason = http.StatusText(resp.StatusCode)
	}
	return nil, fmt.Errorf("the witness answered %d: %s", resp.StatusCode, reason)
}

// Fetch reads room's copy from the witness at base with token.
func Fetch(ctx context.Context, base, room, token string) (*Copy, error) {
	if !RoomRE.MatchString(room) {
		return nil, fmt.Errorf("%q is not a witness room's name", room)
	}
	ctx, cancel := context.WithTimeout(ctx, 4*Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/witness/"+room, nil)
	if err != nil {
		return nil, fmt.Errorf("%q is not a witness's address: give one like http://192.168.1.20:8080", base)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the witness at %s: %v", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		reason, _ := bufio.NewReader(resp.Body).ReadString('\n')
		return nil, fmt.Errorf("the witness answered %d: %s", resp.StatusCode, escape.Line(strings.TrimSpace(reason)))
	}
	return ReadCopy(room, http.MaxBytesReader(nil, resp.Body, MaxRoomSize))
}

// Resume is a client for a room opened before (by an earlier check of
// the same kit, say), with its token.
func Resume(base, room, token string) *Client {
	c := &Client{base: strings.TrimSuffix(base, "/"), room: room, token: token}
	c.wake = sync.NewCond(&c.mu)
	go c.send()
	return c
}
