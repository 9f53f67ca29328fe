//go:build amd64 || arm64

package shake

import "unsafe"

// getg returns the runtime's descriptor of the calling goroutine.
func getg() unsafe.Pointer

// hasG tells whether getg exists on this architecture.
const hasG = true
