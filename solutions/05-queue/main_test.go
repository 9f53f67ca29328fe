package queue

import (
	"testing"

	"gokata/internal/katatest"
)

// TestMain prints the run's end receipt: the checker believes a pass only
// from a run that proves the hidden tests ran (see package receipt).
func TestMain(m *testing.M) { katatest.Main(m) }
