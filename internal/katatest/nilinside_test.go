package katatest

import (
	"errors"
	"strings"
	"testing"
)

type testNilErr struct{}

func (*testNilErr) Error() string { return "never" }

func TestNilInsideNamesOnlyATypedNil(t *testing.T) {
	var typed *testNilErr
	if msg := NilInside(typed); !strings.Contains(msg, "*katatest.testNilErr") {
		t.Errorf("NilInside(a nil *testNilErr) = %q; want it named", msg)
	}
	for _, err := range []error{nil, errors.New("boom"), &testNilErr{}} {
		if msg := NilInside(err); msg != "" {
			t.Errorf("NilInside(%#v) = %q; want \"\"", err, msg)
		}
	}
}
