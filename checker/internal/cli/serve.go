package cli

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gokata/checker/internal/board"
	"gokata/checker/internal/catalog"
	"gokata/checker/internal/room"
	"gokata/checker/internal/session"
)

// short is a kata's number as participants type it: "06-retry" → "06".
func short(slug string) string {
	n, _, _ := strings.Cut(slug, "-")
	return n
}

var serveVerb = verb{
	name: "serve", section: workshops, needs: needCatalog,
	summary: "the live room board: participants' checks push their grades\n(check --push), and the board shows the room grid as it changes",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		addr := fs.String("addr", ":8080", "listen on `host:port`")
		dir := fs.String("dir", "", "keep the room's grades in `DIR` (default .kata/room/ in the checkout)")
		token := fs.String("token", "", "the room's join `TOKEN` (default: a new random one, printed)")
		agenda := fs.String("katas", "", "show only the agenda's katas, `NN,NN` (default all; grades\nof the others are still kept)")
		quiet := fs.Duration("quiet", 10*time.Minute, "dim a participant quiet for this `duration` (0: never)")
		stuck := fs.Duration("stuck", room.DefaultStuckAfter, "count a participant stuck after this `duration` on one item")
		verified := fs.Bool("verified-only", false, "refuse a grade made by other hidden tests than this checkout's\n(default: keep it, marked)")
		adminToken := fs.String("admin-token", "", "the facilitator's `TOKEN` for /admin/hide and /admin/drop\n(default $KATA_ADMIN_TOKEN; none: no admin requests)")
		codes := fs.String("codes", "", "take pushes only from the participants in `FILE`, each with\ntheir own join code: a line per participant, their name then their code")
		o := serveOptions{maxData: board.DefaultMaxData, maxStored: board.DefaultMaxStored}
		fs.IntVar(&o.maxPushes, "max-pushes", board.DefaultMaxPushes, "take at most `N` pushes a minute from each participant")
		fs.Var(&o.maxStored, "max-stored", "keep at most `SIZE` of grades per participant, in KiB, MiB or GiB")
		fs.Var(&o.maxData, "max-data", "let the room's file grow to at most `SIZE`, in KiB, MiB or GiB")
		return func(c *call) (int, error) {
			o.addr, o.dir, o.token, o.agenda, o.admin, o.codes = *addr, *dir, *token, *agenda, *adminToken, *codes
			o.quiet, o.stuck, o.verified = *quiet, *stuck, *verified
			return serve(c, o)
		}
	},
}

// serveOptions are serve's flags.
type serveOptions struct {
	addr, dir, token, agenda string
	admin, codes             string // the admin token; the codes file
	quiet, stuck             time.Duration
	verified                 bool
	maxPushes                int
	maxStored, maxData       byteSize
}

// byteSize is a flag's size in bytes, given as 512KiB, 64MiB, 1GiB or a
// number of bytes.
type byteSize int64

var sizeUnits = []struct {
	suffix string
	shift  int
}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}}

func (b *byteSize) String() string {
	for _, u := range sizeUnits {
		if *b >= 1<<u.shift && *b%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", *b>>u.shift, u.suffix)
		}
	}
	return fmt.Sprint(int64(*b))
}

func (b *byteSize) Set(s string) error {
	num, shift := s, 0
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, shift = n, u.shift
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > 1<<40>>shift {
		return errors.New("give a size above zero such as 64MiB, 512KiB or 1GiB")
	}
	*b = byteSize(n << shift)
	return nil
}

// roomKatas is the catalog as the board and the report know it: each
// kata's items and the fingerprint of its hidden tests.
func roomKatas(cat *catalog.Catalog) []room.Kata {
	var katas []room.Kata
	for _, k := range cat.Katas {
		rk := room.Kata{Slug: k.Slug, Title: k.Title, Tests: session.TestsFingerprint(k)}
		for _, it := range k.Requirements {
			rk.Requirements = append(rk.Requirements, room.Item{ID: it.ID, Text: it.Text})
		}
		for _, it := range k.Bonus {
			rk.Bonus = append(rk.Bonus, room.Item{ID: it.ID, Text: it.Text})
		}
		katas = append(katas, rk)
	}
	return katas
}

// agendaOf is the katas of all that list names ("03,06"); all for "".
func agendaOf(cat *catalog.Catalog, all []room.Kata, list string) ([]room.Kata, error) {
	if strings.TrimSpace(list) == "" {
		return all, nil
	}
	var agenda []room.Kata
	for _, name := range strings.Split(list, ",") {
		k, ok := cat.Find(name)
		if !ok {
			return nil, &usageError{fmt.Sprintf("--katas: no kata %q; the katas are %s", strings.TrimSpace(name), cat.Names()), "checker serve --katas 01,06"}
		}
		for _, rk := range all {
			if rk.Slug == k.Slug && !slices.ContainsFunc(agenda, func(a room.Kata) bool { return a.Slug == k.Slug }) {
				agenda = append(agenda, rk)
			}
		}
	}
	return agenda, nil
}

var tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~-]{8,100}$`)

// serve runs the live room board until Ctrl-C: it prints the board's
// address and the command participants type, then a line per push.
func serve(c *call, o serveOptions) (int, error) {
	addr, dir, token := o.addr, o.dir, o.token
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
	if o.admin == "" {
		o.admin = c.env.get("KATA_ADMIN_TOKEN")
	}
	if o.admin != "" && (!tokenRE.MatchString(o.admin) || o.admin == token) {
		return 0, &usageError{"--admin-token: use 8 to 100 letters, digits, or . _ ~ -, other than the participants' token", "checker serve --admin-token facilitator-2026"}
	}
	if o.maxPushes <= 0 {
		return 0, &usageError{"--max-pushes is a number of pushes above zero", "checker serve --max-pushes 60"}
	}
	if o.quiet < 0 || o.stuck <= 0 {
		return 0, &usageError{"--quiet and --stuck are durations above zero (--quiet 0: never dim)", "checker serve --quiet 10m --stuck 10m"}
	}
	all := roomKatas(c.cat)
	agenda, err := agendaOf(c.cat, all, o.agenda)
	if err != nil {
		return 0, err
	}
	if len(agenda) == 0 {
		return 0, errors.New("the checkout has no katas to show")
	}
	codes, err := readCodes(c, o.codes)
	if err != nil {
		return 0, err
	}
	b, err := board.Open(board.Config{Catalog: all, Katas: agenda, Dir: dir, Token: token, AdminToken: o.admin, Codes: codes, Log: c.env.Stderr,
		VerifiedOnly: o.verified, QuietAfter: o.quiet, StuckAfter: o.stuck,
		MaxPushes: o.maxPushes, MaxStored: int64(o.maxStored), MaxData: int64(o.maxData)})
	if err != nil {
		return 0, &usageError{"open the room: " + err.Error(), ""}
	}
	defer b.Close()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, listenError(addr, err)
	}
	defer l.Close()
	host, port := boardHost(addr), l.Addr().(*net.TCPAddr).Port
	base := fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(port)))
	out := c.env.Stdout
	fmt.Fprintf(out, "Room board: %s/\n", base)
	fmt.Fprintf(out, "Participants type this once in their kata checkout's shell, so that every\nmake check and make watch pushes its grade:\n")
	code, makeCode := "", ""
	if codes != nil {
		code, makeCode = " KATA_CODE=their-code", " CODE=their-code"
	}
	fmt.Fprintf(out, "  export KATA_PUSH=%s KATA_TOKEN=%s KATA_NAME=\"Their Name\"%s\n", base, token, code)
	fmt.Fprintf(out, "or push one check:\n")
	fmt.Fprintf(out, "  make check EX=%s PUSH=%s TOKEN=%s NAME=\"Their Name\"%s\n", short(agenda[0].Slug), base, token, makeCode)
	if o.admin != "" {
		fmt.Fprintf(out, "Your controls: POST %s/admin/hide and /admin/drop with the admin token.\n", base)
	}
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

// readCodes reads serve's --codes file; nil for "".
func readCodes(c *call, path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(absPath(c.env.Dir, path))
	if err != nil {
		return nil, &usageError{"--codes: " + err.Error(), ""}
	}
	defer f.Close()
	codes, err := board.ReadCodes(f)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("--codes: %s: %v", path, err), ""}
	}
	return codes, nil
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
