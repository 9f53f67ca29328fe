//go:build !race

package katatest

const raceEnabled = false
