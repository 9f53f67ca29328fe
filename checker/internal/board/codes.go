package board

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strings"

	"gokata/checker/internal/room"
)

// CodeHeader carries a participant's join code with a push, on a board
// that has codes (Config.Codes).
const CodeHeader = "X-Kata-Code"

// ReadCodes reads a file of join codes: a line per participant, their
// name then their code (the last word: a name may have spaces); blank
// lines and lines starting with # are skipped.
func ReadCodes(r io.Reader) (map[string]string, error) {
	codes := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexAny(line, " \t")
		if i < 0 {
			return nil, fmt.Errorf("line %d: give a name, then the participant's code", n)
		}
		name, code := room.Name(line[:i]), line[i+1:]
		if _, err := checkName(name); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if len(code) < 4 || len(code) > 100 {
			return nil, fmt.Errorf("line %d: a code is 4 to 100 characters", n)
		}
		if _, dup := codes[key(name)]; dup {
			return nil, fmt.Errorf("line %d: %s has a code already", n, name)
		}
		codes[key(name)] = code
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(codes) == 0 {
		return nil, fmt.Errorf("no codes in it: a line per participant, their name then their code")
	}
	return codes, nil
}

// hashCodes is codes by the key of each participant's name, hashed.
func hashCodes(codes map[string]string) map[string][sha256.Size]byte {
	hashed := map[string][sha256.Size]byte{}
	for name, code := range codes {
		hashed[key(room.Name(name))] = sha256.Sum256([]byte(code))
	}
	return hashed
}

// codeOK reports whether the push carries the join code of the
// participant it names, in constant time; true on a board without codes.
func (s *Server) codeOK(r *http.Request, participant string) bool {
	if s.codes == nil {
		return true
	}
	want, listed := s.codes[key(participant)]
	got := sha256.Sum256([]byte(r.Header.Get(CodeHeader)))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1 && listed && r.Header.Get(CodeHeader) != ""
}
