// Package counter adds and doubles.
package counter

// Add returns a+b.
func Add(a, b int) int {
	// The sum, never the difference.
	return a + b
}

// Double returns 2a.
func Double(a int) int {
	f := func() int {
		return a * 2 // twice, not three times
	}
	return f()
}
