package receipt_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/internal/receipt"
)

func TestVerify(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	other := []byte("fedcba9876543210fedcba9876543210")
	signed := func(k []byte, seq int, kind, name, result string) receipt.Receipt {
		r := receipt.Receipt{Seq: seq, Kind: kind, Name: name, Result: result}.Sign(k)
		parsed, ok := receipt.Parse(r.Frame())
		assert.True(t, ok, "%q does not parse", r.Frame())
		return parsed
	}
	cases := []struct {
		name     string
		rs       []receipt.Receipt
		ended    bool
		confirms map[string]bool // test → Confirms(test, 1)
		bad      int
	}{
		{"an honest run", []receipt.Receipt{
			signed(key, 1, receipt.Test, "TestR1_A", "pass"),
			signed(key, 2, receipt.Test, "TestR2_B", "fail"),
			signed(key, 3, receipt.End, "-", "1/2"),
		}, true, map[string]bool{"TestR1_A": true, "TestR2_B": false}, 0},
		{"a subtest's receipt counts for its test", []receipt.Receipt{
			signed(key, 1, receipt.Test, "TestR1_A/sub", "pass"),
			signed(key, 2, receipt.End, "-", "0/1"),
		}, true, map[string]bool{"TestR1_A": true}, 0},
		{"another run's key", []receipt.Receipt{
			signed(other, 1, receipt.Test, "TestR1_A", "pass"),
			signed(other, 2, receipt.End, "-", "0/1"),
		}, false, map[string]bool{"TestR1_A": false}, 2},
		{"a receipt printed twice", []receipt.Receipt{
			signed(key, 1, receipt.Test, "TestR1_A", "pass"),
			signed(key, 1, receipt.Test, "TestR1_A", "pass"),
			signed(key, 2, receipt.End, "-", "0/1"),
		}, true, map[string]bool{"TestR1_A": true}, 1},
		{"an edited result", []receipt.Receipt{
			func() receipt.Receipt {
				r := signed(key, 1, receipt.Test, "TestR1_A", "fail")
				r.Result = "pass"
				return r
			}(),
			signed(key, 2, receipt.End, "-", "0/1"),
		}, false, map[string]bool{"TestR1_A": false}, 2},
		{"an end that misses a test receipt", []receipt.Receipt{
			signed(key, 1, receipt.End, "-", "0/1"),
		}, false, map[string]bool{"TestR1_A": false}, 0},
		{"nothing after the end counts", []receipt.Receipt{
			signed(key, 1, receipt.End, "-", "0/0"),
			signed(key, 2, receipt.Test, "TestR1_A", "pass"),
		}, true, map[string]bool{"TestR1_A": false}, 1},
		{"malformed", []receipt.Receipt{{}}, false, map[string]bool{"TestR1_A": false}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := receipt.Verify(key, c.rs)
			assert.Equal(t, c.ended, l.Ended, "ended")
			assert.Equal(t, c.bad, l.Bad, "bad receipts")
			for test, want := range c.confirms {
				assert.Equal(t, want, l.Confirms(test, 1), "confirms %s", test)
			}
		})
	}
}

func TestConfirmsEveryRun(t *testing.T) {
	l := receipt.Ledger{Tests: map[string][]string{"TestR1_A": {"pass", "pass"}, "TestR2_B": {"pass", "fail"}}}
	assert.True(t, l.Confirms("TestR1_A", 2))
	assert.False(t, l.Confirms("TestR1_A", 3), "a run without its receipt")
	assert.False(t, l.Confirms("TestR2_B", 1), "one failed run")
}
