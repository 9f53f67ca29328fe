package counter

import "testing"

func TestR1_Add(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Error("Add(1, 2) must be 3")
	}
}
