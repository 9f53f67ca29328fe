// Package receipt is the proof that the hidden tests really ran, shared by
// the harness, which writes receipts, and the checker, which verifies them.
//
// The code under test runs inside the test binary, before any test (in
// package initialization), and can print anything and end the process with
// any status, so neither what the binary printed nor how it exited proves
// that a test passed. So the checker hands the binary a fresh random key
// that only the harness can read: the read end of a pipe holding the key,
// inherited as an extra file descriptor named by the environment variable
// [FDEnv]. The harness is a dependency of the package under test, so it is
// initialized first: it reads the key, closes the descriptor and unsets the
// variable before any code of the learner's runs.
//
// The harness then prints a receipt when a hidden test ends (its name and
// result) and one when the run ends (the exit code and how many test
// receipts came before), each a line framed like the test binary's own
// lines and signed with HMAC-SHA256 under the key together with its sequence
// number in the run:
//
//	^Vreceipt 3 test TestR1_Pauses pass 9f86d0…
//	^Vreceipt 12 end - 0/11 3c4ab2…
//
// A receipt copied from an earlier run does not verify (the key is new for
// every process), and one cannot be made for a test that failed.
package receipt

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// FDEnv names the environment variable that holds the number of the file
// descriptor the key is read from.
const FDEnv = "KATA_RECEIPT_FD"

// KeySize is the length of a key, in bytes.
const KeySize = 32

// Prefix starts a receipt frame, after the 0x16 marker of the test stream.
const Prefix = "receipt "

// The kinds of receipt.
const (
	Test = "test" // a hidden test ended; Name and Result ("pass", "fail" or "skip")
	End  = "end"  // the run ended; Result is "CODE/COUNT": m.Run's exit code, test receipts before
)

// Receipt is one signed statement of the harness.
type Receipt struct {
	Seq    int    // 1 for the first receipt of a process, then 2, 3…
	Kind   string // Test or End
	Name   string // the test, "-" for End
	Result string
	MAC    string // hex HMAC-SHA256 of the other fields under the run's key
}

func (r Receipt) payload() string {
	return fmt.Sprintf("%d %s %s %s", r.Seq, r.Kind, r.Name, r.Result)
}

// Sign sets r.MAC under key.
func (r Receipt) Sign(key []byte) Receipt {
	r.MAC = hex.EncodeToString(mac(key, r.payload()))
	return r
}

// Valid reports whether r was signed under key.
func (r Receipt) Valid(key []byte) bool {
	got, err := hex.DecodeString(r.MAC)
	return err == nil && len(key) > 0 && hmac.Equal(got, mac(key, r.payload()))
}

// Frame is the receipt as the harness prints it, without the marker and
// the newline.
func (r Receipt) Frame() string { return Prefix + r.payload() + " " + r.MAC }

// Parse reads a frame made by Frame (without the marker).
func Parse(frame string) (Receipt, bool) {
	rest, ok := strings.CutPrefix(frame, Prefix)
	if !ok {
		return Receipt{}, false
	}
	f := strings.Split(rest, " ")
	if len(f) != 5 {
		return Receipt{}, false
	}
	seq, err := strconv.Atoi(f[0])
	if err != nil || seq < 1 {
		return Receipt{}, false
	}
	return Receipt{Seq: seq, Kind: f[1], Name: f[2], Result: f[3], MAC: f[4]}, true
}

// EndResult is the Result of an End receipt.
func EndResult(code, tests int) string { return fmt.Sprintf("%d/%d", code, tests) }

// ParseEnd reads the Result of an End receipt.
func ParseEnd(result string) (code, tests int, ok bool) {
	c, t, found := strings.Cut(result, "/")
	code, err1 := strconv.Atoi(c)
	tests, err2 := strconv.Atoi(t)
	return code, tests, found && err1 == nil && err2 == nil
}

func mac(key []byte, payload string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// Ledger is what the receipts of one process prove.
type Ledger struct {
	// Tests maps a top-level test to the results its valid receipts state,
	// in order (one per run of it: -test.count repeats a test).
	Tests map[string][]string
	Valid int  // receipts that verified, End included
	Ended bool // a valid End receipt came last and counted every test receipt
	Code  int  // the exit code the End receipt states
	// Bad counts receipts that did not verify (forged, copied from another
	// process, or out of sequence).
	Bad int
}

// Verify checks the receipts of one process, in the order they were
// printed, under its key. A receipt counts only with a valid MAC and the
// next sequence number; a subtest's receipt counts for its top-level test.
func Verify(key []byte, rs []Receipt) Ledger {
	l := Ledger{Tests: map[string][]string{}}
	tests := 0
	for _, r := range rs {
		if !r.Valid(key) || r.Seq != l.Valid+1 || l.Ended {
			l.Bad++
			continue
		}
		l.Valid++
		switch r.Kind {
		case Test:
			top, _, _ := strings.Cut(r.Name, "/")
			l.Tests[top] = append(l.Tests[top], r.Result)
			tests++
		case End:
			code, n, ok := ParseEnd(r.Result)
			l.Ended, l.Code = ok && n == tests, code
		}
	}
	return l
}

// Confirms reports whether the receipts prove that test passed every one
// of its runs and ran at least runs times.
func (l Ledger) Confirms(test string, runs int) bool {
	rs := l.Tests[test]
	if len(rs) == 0 || len(rs) < runs {
		return false
	}
	for _, r := range rs {
		if r != "pass" {
			return false
		}
	}
	return true
}
