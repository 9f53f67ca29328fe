package board

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"gokata/checker/internal/room"
	"gokata/checker/internal/usage"
	"gokata/checker/internal/witness"
)

// UsageError is a request that cannot be done as made (usage.Error).
type UsageError = usage.Error

// ServeConfig is what Serve needs: the facilitator's choices (checker
// serve's flags) and the checkout's katas.
type ServeConfig struct {
	Addr string // listen on host:port
	// Root is the checkout; WorkDir is where Dir and Codes are relative to.
	Root, WorkDir string
	Dir           string // keeps the room's file; "": .kata/room in Root
	Token         string // the participants' join token; "": a new random one
	AdminToken    string // the facilitator's token (Config.AdminToken); "": none
	Codes         string // a file of join codes (ReadCodes); "": none
	// Catalog is every kata of the checkout (Config.Catalog). Agenda names
	// the ones the board shows, as typed ("03,06"; "": all), and Find
	// tells the slug of a kata so named (needed when Agenda is set).
	Catalog []room.Kata
	Agenda  string
	Find    func(name string) (slug string, ok bool)
	// The rest are as in Config.
	VerifiedOnly           bool
	QuietAfter, StuckAfter time.Duration
	MaxPushes              int
	MaxStored, MaxData     ByteSize
}

// WitnessDir is where, in the room's directory, the witness keeps its
// rooms: one per interview.
const WitnessDir = "witness"

// tokenRE is what a token may be: a word participants can type.
var tokenRE = regexp.MustCompile(`^[A-Za-z0-9._~-]{8,100}$`)

// Serve runs the room board until ctx is done: it prints to out the
// board's address and the command participants type, and logs a line
// per push to log. A choice in cfg that cannot be served is a *UsageError.
func Serve(ctx context.Context, cfg ServeConfig, out, log io.Writer) error {
	if err := cfg.check(); err != nil {
		return err
	}
	agenda, err := cfg.agenda()
	if err != nil {
		return err
	}
	if len(agenda) == 0 {
		return errors.New("the checkout has no katas to show")
	}
	codes, err := cfg.readCodes()
	if err != nil {
		return err
	}
	wit, err := witness.NewServer(filepath.Join(cfg.Dir, WitnessDir), cfg.Token, cfg.AdminToken, nil, log)
	if err != nil {
		return &UsageError{Msg: "open the witness's rooms: " + err.Error(), Try: ""}
	}
	b, err := Open(Config{Witness: wit.Handler(), Catalog: cfg.Catalog, Katas: agenda, Dir: cfg.Dir, Token: cfg.Token, AdminToken: cfg.AdminToken, Codes: codes, Log: log,
		VerifiedOnly: cfg.VerifiedOnly, QuietAfter: cfg.QuietAfter, StuckAfter: cfg.StuckAfter,
		MaxPushes: cfg.MaxPushes, MaxStored: int64(cfg.MaxStored), MaxData: int64(cfg.MaxData)})
	if err != nil {
		return &UsageError{Msg: "open the room: " + err.Error(), Try: ""}
	}
	defer b.Close()
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return listenError(cfg.Addr, err)
	}
	defer l.Close()
	base := "http://" + net.JoinHostPort(boardHost(cfg.Addr), fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	witnessing := fmt.Sprintf("An interview sends this server its witness copy with:\n  make interview EX=%s WITNESS=%s WITNESS_TOKEN=%s\n", short(agenda[0].Slug), base, cfg.Token) +
		fmt.Sprintf("and its scorecard compares with it: checker scorecard RECORD --witness %s/\n", rel(cfg.WorkDir, wit.Dir()))
	cfg.banner(out, base, short(agenda[0].Slug), codes != nil, b, witnessing)
	if err := b.Serve(ctx, l); err != nil {
		return err
	}
	fmt.Fprintf(log, "checker: board stopped; the room is kept in %s\n", rel(cfg.WorkDir, b.Path()))
	return nil
}

// check checks cfg's tokens, limits and durations, and fills in the
// token and the room's directory when not given.
func (cfg *ServeConfig) check() error {
	switch {
	case cfg.Token == "":
		cfg.Token = strings.ToLower(rand.Text()[:16]) // 80 bits
	case !tokenRE.MatchString(cfg.Token):
		return &UsageError{Msg: "--token: use 8 to 100 letters, digits, or . _ ~ -, so that participants can type it", Try: "checker serve --token workshop-2026"}
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(cfg.Root, ".kata", "room")
	} else {
		cfg.Dir = abs(cfg.WorkDir, cfg.Dir)
	}
	if cfg.AdminToken != "" && (!tokenRE.MatchString(cfg.AdminToken) || cfg.AdminToken == cfg.Token) {
		return &UsageError{Msg: "--admin-token: use 8 to 100 letters, digits, or . _ ~ -, other than the participants' token", Try: "checker serve --admin-token facilitator-2026"}
	}
	if cfg.MaxPushes <= 0 {
		return &UsageError{Msg: "--max-pushes is a number of pushes above zero", Try: "checker serve --max-pushes 60"}
	}
	if cfg.QuietAfter < 0 || cfg.StuckAfter <= 0 {
		return &UsageError{Msg: "--quiet and --stuck are durations above zero (--quiet 0: never dim)", Try: "checker serve --quiet 10m --stuck 10m"}
	}
	return nil
}

// agenda is the katas of the catalog that cfg.Agenda names, in its
// order; the whole catalog when it names none.
func (cfg *ServeConfig) agenda() ([]room.Kata, error) {
	if strings.TrimSpace(cfg.Agenda) == "" {
		return cfg.Catalog, nil
	}
	var agenda []room.Kata
	for _, name := range strings.Split(cfg.Agenda, ",") {
		slug, ok := cfg.Find(name)
		if !ok {
			return nil, &UsageError{Msg: fmt.Sprintf("--katas: no kata %q; the katas are %s", strings.TrimSpace(name), slugs(cfg.Catalog)), Try: "checker serve --katas 01,06"}
		}
		for _, k := range cfg.Catalog {
			if k.Slug == slug && !slices.ContainsFunc(agenda, func(a room.Kata) bool { return a.Slug == slug }) {
				agenda = append(agenda, k)
			}
		}
	}
	return agenda, nil
}

// slugs lists katas as "01-fanout, 06-retry" for messages.
func slugs(katas []room.Kata) string {
	s := make([]string, len(katas))
	for i, k := range katas {
		s[i] = k.Slug
	}
	return strings.Join(s, ", ")
}

// readCodes reads the join codes of cfg.Codes; nil for "".
func (cfg *ServeConfig) readCodes() (map[string]string, error) {
	if cfg.Codes == "" {
		return nil, nil
	}
	f, err := os.Open(abs(cfg.WorkDir, cfg.Codes))
	if err != nil {
		return nil, &UsageError{Msg: "--codes: " + err.Error(), Try: ""}
	}
	defer f.Close()
	codes, err := ReadCodes(f)
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("--codes: %s: %v", cfg.Codes, err), Try: ""}
	}
	return codes, nil
}

// banner tells the facilitator where the board is, what participants
// type to push to it (first shows the agenda's first kata), and where
// the room is kept.
// banner says where the board is and how to push to it, then witnessing,
// and ends with the line "… Ctrl-C stops the board.": once that line is
// out, the whole banner is.
func (cfg *ServeConfig) banner(out io.Writer, base, first string, codes bool, b *Server, witnessing string) {
	fmt.Fprintf(out, "Room board: %s/\n", base)
	fmt.Fprintf(out, "Participants type this once in their kata checkout's shell, so that every\nmake check and make watch pushes its grade:\n")
	code, makeCode := "", ""
	if codes {
		code, makeCode = " KATA_CODE=their-code", " CODE=their-code"
	}
	fmt.Fprintf(out, "  export KATA_PUSH=%s KATA_TOKEN=%s KATA_NAME=\"Their Name\"%s\n", base, cfg.Token, code)
	fmt.Fprintf(out, "or push one check:\n")
	fmt.Fprintf(out, "  make check EX=%s PUSH=%s TOKEN=%s NAME=\"Their Name\"%s\n", first, base, cfg.Token, makeCode)
	if cfg.AdminToken != "" {
		fmt.Fprintf(out, "Your controls: POST %s/admin/hide and /admin/drop with the admin token.\n", base)
	}
	io.WriteString(out, witnessing)
	who := fmt.Sprintf("%d participants", b.Participants())
	if b.Participants() == 1 {
		who = "1 participant"
	}
	fmt.Fprintf(out, "The room is kept in %s (%s so far). Ctrl-C stops the board.\n", rel(cfg.WorkDir, b.Path()), who)
}

// short is a kata's number as participants type it: "06-retry" → "06".
func short(slug string) string {
	n, _, _ := strings.Cut(slug, "-")
	return n
}

// listenError says in one line why the board cannot listen on addr.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &UsageError{Msg: fmt.Sprintf("cannot serve on %s: the port is in use; choose another, e.g. make serve ADDR=:8081", addr), Try: ""}
	}
	var op *net.OpError
	if errors.As(err, &op) {
		err = op.Err
	}
	return &UsageError{Msg: fmt.Sprintf("cannot serve on %s: %v", addr, err), Try: ""}
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

// abs is path p, relative to dir unless it is absolute.
func abs(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// rel names path relative to dir for messages, when it is inside it.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
