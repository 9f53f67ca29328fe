//go:build !race

package syncpoint_test

const raceEnabled = false
