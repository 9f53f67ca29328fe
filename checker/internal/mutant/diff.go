package mutant

import (
	"fmt"
	"sort"
	"strings"
)

// context is how many unchanged lines a hunk shows around a change, as
// diff -u does.
const context = 3

// diff returns the hunks that turn a into b (editScript).
func diff(a, b []line) []Hunk { return hunks(editScript(a, b)) }

// editScript turns a into b: a longest common subsequence of lines, after
// the common prefix and suffix are set aside (a mutant changes a few
// places of a file of a few hundred lines).
func editScript(a, b []line) []Op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	ops := make([]Op, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		ops = append(ops, Op{' ', l})
	}
	ops = append(ops, lcs(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, Op{' ', l})
	}
	return ops
}

// lcs is the edit script from a to b through a longest common subsequence,
// removals before additions where both are possible.
func lcs(a, b []line) []Op {
	n, m := len(a), len(b)
	// l[i][j]: length of the longest common subsequence of a[i:] and b[j:].
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var ops []Op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, Op{' ', a[i]})
			i++
			j++
		case i < n && (j == m || l[i+1][j] >= l[i][j+1]):
			ops = append(ops, Op{'-', a[i]})
			i++
		default:
			ops = append(ops, Op{'+', b[j]})
			j++
		}
	}
	return ops
}

// hunks groups an edit script into hunks with context lines around each
// change; changes closer than twice the context share a hunk.
func hunks(ops []Op) []Hunk {
	var hs []Hunk
	oldLine, newLine := 1, 1 // of ops[i]
	for i := 0; i < len(ops); {
		if ops[i].Kind == ' ' {
			oldLine++
			newLine++
			i++
			continue
		}
		// A change at i: start context lines earlier.
		start := max(0, i-context)
		for start < i && ops[start].Kind != ' ' {
			start++
		}
		back := i - start
		h := Hunk{OldStart: oldLine - back, NewStart: newLine - back}
		end := i // ops[start:end] belong to the hunk
		for end < len(ops) {
			if ops[end].Kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].Kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, run)
				break
			}
			end = run
		}
		h.Ops = ops[start:end]
		for _, op := range h.Ops {
			if op.Kind != '+' {
				h.OldCount++
			}
			if op.Kind != '-' {
				h.NewCount++
			}
		}
		for _, op := range ops[i:end] {
			if op.Kind != '+' {
				oldLine++
			}
			if op.Kind != '-' {
				newLine++
			}
		}
		// diff -u names the line before an empty range.
		if h.OldCount == 0 {
			h.OldStart--
		}
		if h.NewCount == 0 {
			h.NewStart--
		}
		hs = append(hs, h)
		i = end
	}
	return hs
}

// writeFileDiff writes fd in unified form.
func writeFileDiff(b *strings.Builder, fd FileDiff) {
	fmt.Fprintf(b, "--- %s\n+++ %s\n", fd.Name, fd.Name)
	for _, h := range fd.Hunks {
		b.WriteString(h.header())
		b.WriteByte('\n')
		for _, op := range h.Ops {
			b.WriteByte(op.Kind)
			b.WriteString(op.text)
			b.WriteByte('\n')
			if !op.eol {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
}

// Diff is the unified diff that turns the files old into the files new
// (name → content): a section per file that differs, in name order, a
// file only on one side diffed against nothing. "" when they are the same.
func Diff(old, new map[string][]byte) string {
	var b strings.Builder
	for _, n := range fileNames(old, new) {
		if hs := diff(splitLines(old[n]), splitLines(new[n])); len(hs) > 0 {
			writeFileDiff(&b, FileDiff{Name: n, Hunks: hs})
		}
	}
	return b.String()
}

// Changed counts the lines that turn the files old into the files new
// (name → content), blank lines aside: in each run of changes, the larger
// of the lines removed and the lines added, so that a line rewritten
// counts once, as does a line added or removed.
func Changed(old, new map[string][]byte) int {
	total := 0
	for _, n := range fileNames(old, new) {
		removed, added := 0, 0
		for _, op := range editScript(nonBlank(old[n]), nonBlank(new[n])) {
			switch op.Kind {
			case '-':
				removed++
			case '+':
				added++
			default:
				total += max(removed, added)
				removed, added = 0, 0
			}
		}
		total += max(removed, added)
	}
	return total
}

// nonBlank is data's lines that are not blank, each with its newline.
func nonBlank(data []byte) []line {
	var out []line
	for _, l := range splitLines(data) {
		if strings.TrimSpace(l.text) != "" {
			out = append(out, line{l.text, true})
		}
	}
	return out
}

// fileNames lists the names of the files of old and new, sorted, each
// once.
func fileNames(old, new map[string][]byte) []string {
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range new {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	return sorted
}
