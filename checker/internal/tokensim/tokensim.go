// Package tokensim measures how alike two pieces of Go code are, token by
// token: the question a scorecard asks of a candidate's code and the
// kata's reference solution.
//
// The measure is the Jaccard index of the two codes' token 5-grams, counted
// as multisets: the 5-grams both have (each as often as the one that has
// it fewer times) over the 5-grams either has (each as often as the one
// that has it more times). Comments and layout do not count (go/scanner
// without comments; an automatic semicolon is a semicolon); names and
// literals do. Code that only moves functions around keeps almost all of
// its 5-grams, so reordering does not hide a copy; code written
// independently against the same API shares its declarations and short
// idioms, not long runs of tokens. It takes time and memory linear in the
// code's size, whatever the input.
package tokensim

import (
	"go/scanner"
	"go/token"
	"maps"
	"math"
	"slices"
	"strings"
)

// N is the length of the runs of tokens compared.
const N = 5

// Tokens is the Go files' tokens (name → source), file after file in name
// order, comments aside. Source that does not scan is taken as far as it
// goes: a stray character is a token of its own.
func Tokens(files map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		out = append(out, fileTokens(name, files[name])...)
	}
	return out
}

func fileTokens(name, src string) []string {
	fset := token.NewFileSet()
	f := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	s.Init(f, []byte(src), func(token.Position, string) {}, 0)
	var out []string
	for {
		_, tok, lit := s.Scan()
		switch {
		case tok == token.EOF:
			return out
		case tok == token.SEMICOLON:
			out = append(out, ";")
		case tok.IsLiteral() || tok == token.ILLEGAL:
			out = append(out, lit)
		default:
			out = append(out, tok.String())
		}
	}
}

// Similarity is how alike the token sequences a and b are, from 0 (no
// 5-gram in common, or nothing to compare) to 1 (the same 5-grams as often:
// identical sequences, or nearly). Sequences shorter than N are compared as
// one run each.
func Similarity(a, b []string) float64 {
	ga, gb := grams(a), grams(b)
	common, all := 0, 0
	for g, na := range ga {
		nb := gb[g]
		common += min(na, nb)
		all += max(na, nb)
	}
	for g, nb := range gb {
		if _, ok := ga[g]; !ok {
			all += nb
		}
	}
	if all == 0 {
		return 0
	}
	return float64(common) / float64(all)
}

// grams counts the runs of N tokens in ts.
func grams(ts []string) map[string]int {
	m := map[string]int{}
	if len(ts) == 0 {
		return m
	}
	n := min(N, len(ts))
	for i := 0; i+n <= len(ts); i++ {
		m[strings.Join(ts[i:i+n], "\x00")]++
	}
	return m
}

// Percent is s as a whole percentage, rounded down: 100 only when s is 1,
// so that nearly identical never reads as identical.
func Percent(s float64) int {
	return int(math.Floor(s*100 + 1e-9))
}
