package cli

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"gokata/checker/internal/board"
	"gokata/checker/internal/room"
)

var serveVerb = verb{
	name: "serve", section: workshops, needs: needCatalog,
	summary: "the live room board: participants' checks push their grades\n(check --push), and the board shows the room grid as it changes",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		addr := fs.String("addr", ":8080", "listen on `host:port`")
		dir := fs.String("dir", "", "keep the room's grades in `DIR` (default .kata/room/ in the checkout)")
		token := fs.String("token", "", "the room's join `TOKEN` (default: a new random one, printed)")
		return func(c *call) (int, error) { return serve(c, *addr, *dir, *token) }
	},
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~-]{8,100}$`)

// serve runs the live room board until Ctrl-C: it prints the board's
// address and the command participants type, then a line per push.
func serve(c *call, addr, dir, token string) (int, error) {
	switch {
	case token == "":
		token = strings.ToLower(rand.Text()[:16]) // 80 bits
	case !tokenRE.MatchString(token):
		return 0, &usageError{"--token: use 8 to 100 letters, digits, or . _ ~ -, so that participants can type it", "checker serve --token workshop-2026"}
	}
	if dir == "" {
		dir = filepath.Join(c.cat.Root, ".kata", "room")
	} else {
		dir = absPath(c.env.Dir, dir)
	}
	var katas []room.Kata
	for _, k := range c.cat.Katas {
		katas = append(katas, room.Kata{Slug: k.Slug, Title: k.Title})
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, listenError(addr, err)
	}
	defer l.Close()
	b, err := board.Open(board.Config{Katas: katas, Dir: dir, Token: token, Log: c.env.Stderr})
	if err != nil {
		return 0, fmt.Errorf("open the room: %w", err)
	}
	host, port := boardHost(addr), l.Addr().(*net.TCPAddr).Port
	base := fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(port)))
	out := c.env.Stdout
	fmt.Fprintf(out, "Room board: %s/\n", base)
	fmt.Fprintf(out, "Participants push their grades from their kata checkout with:\n")
	fmt.Fprintf(out, "  make check EX=01 PUSH=%s TOKEN=%s NAME=\"Their Name\"\n", base, token)
	fmt.Fprintf(out, "or, so that make watch and every later check push too:\n")
	fmt.Fprintf(out, "  export KATA_PUSH=%s KATA_TOKEN=%s KATA_NAME=\"Their Name\"\n", base, token)
	who := fmt.Sprintf("%d participants", b.Participants())
	if b.Participants() == 1 {
		who = "1 participant"
	}
	fmt.Fprintf(out, "The room is kept in %s (%s so far). Ctrl-C stops the board.\n", rel(c.env.Dir, b.Path()), who)
	if err := b.Serve(c.ctx, l); err != nil {
		return 0, err
	}
	fmt.Fprintf(c.env.Stderr, "checker: board stopped; the room is kept in %s\n", rel(c.env.Dir, b.Path()))
	return ExitPass, nil
}

// listenError says in one line why the board cannot listen on addr.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &usageError{fmt.Sprintf("cannot serve on %s: the port is in use; choose another, e.g. make serve ADDR=:8081", addr), ""}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		err = op.Err
	}
	return &usageError{fmt.Sprintf("cannot serve on %s: %v", addr, err), ""}
}

// boardHost is the host participants reach the board at: the one in addr
// if it names one, else this machine's first non-loopback address, else
// localhost.
func boardHost(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return host
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "localhost"
	}
	var v6 string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || !n.IP.IsGlobalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return n.IP.String()
		}
		if v6 == "" {
			v6 = n.IP.String()
		}
	}
	if v6 != "" {
		return v6
	}
	return "localhost"
}
