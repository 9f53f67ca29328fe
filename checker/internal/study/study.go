// Package study is the taxonomy of real Go concurrency bugs that the
// mutants are measured against: "Understanding Real-World Concurrency
// Bugs in Go" (Tu, Liu, Song and Zhang, ASPLOS 2019) studied 171 fixed
// bugs of Docker, Kubernetes, etcd, CockroachDB, gRPC and BoltDB and
// sorted them by behaviour (blocking or not) and cause (shared memory or
// message passing) into twelve categories.
//
// A mutant names its category in its header, "// Study: blocking/mutex";
// a mutant whose mistake is no concurrency bug (an error value, the
// arithmetic, an input check) names none. [Table] is the coverage table
// docs/authoring.md shows: each category, its share of the real bugs, and
// the mutants and bug hunts in it.
package study

import (
	"fmt"
	"slices"
	"strings"
)

// Category is one cell of the study's taxonomy.
type Category struct {
	Key   string // as a mutant's header names it: blocking/mutex
	Name  string // as the table shows it
	Bugs  int    // how many of the study's 171 bugs it holds
	Shows string // what the mistake looks like, one line
}

// Total is the number of bugs the study sorted.
const Total = 171

// Categories are the study's twelve, in its order (its Tables 6 and 9).
var Categories = []Category{
	{"blocking/mutex", "Mutex", 28, "a lock never unlocked on some path, locked twice, or locks taken in opposite orders"},
	{"blocking/rwmutex", "RWMutex", 5, "a read lock taken again while a writer waits"},
	{"blocking/wait", "Wait (Cond, WaitGroup)", 3, "a Cond.Wait nothing signals, a WaitGroup.Wait whose count never reaches zero"},
	{"blocking/chan", "Channel", 29, "a send or receive no one will ever match"},
	{"blocking/chan-and-lock", "Channel with a lock or another primitive", 16, "a channel operation while holding a lock the other side needs"},
	{"blocking/library", "Messaging library", 4, "a context never cancelled, a timer or pipe waited on for ever"},
	{"nonblocking/traditional", "Shared memory, traditional", 46, "a data race, a check and an act split over two critical sections"},
	{"nonblocking/anonymous-function", "Anonymous function", 11, "a goroutine's closure writes a variable its parent still reads or has returned"},
	{"nonblocking/waitgroup", "WaitGroup misuse", 6, "an Add inside the goroutine, a Done before the work is done"},
	{"nonblocking/library", "Library misuse", 6, "a library's concurrency contract broken (a shared context, a test's FailNow off its goroutine)"},
	{"nonblocking/chan", "Channel misuse", 16, "a channel closed twice, a select relied on to prefer a case"},
	{"nonblocking/message-library", "Timer and context misuse", 1, "a timer that fires at the wrong time, a lost cancel func"},
}

// Find returns the category of key.
func Find(key string) (Category, error) {
	if i := slices.IndexFunc(Categories, func(c Category) bool { return c.Key == key }); i >= 0 {
		return Categories[i], nil
	}
	keys := make([]string, len(Categories))
	for i, c := range Categories {
		keys[i] = c.Key
	}
	return Category{}, fmt.Errorf("no study category %q; the categories are %s", key, strings.Join(keys, ", "))
}

// Mutant is what the table needs of one mutant.
type Mutant struct {
	Kata  string // 08
	Name  string // lockorder
	Study string // its category's key; "" for none
	Hunt  bool   // it is a bug hunt
	Wild  bool   // the pattern of a cited real bug (// From:)
}

// Table is the coverage table in Markdown: for each category, its share of
// the study's bugs, how many of ms are in it (of them hunts, and mistakes
// from the wild), and a few names; then the mutants in no category, and
// the categories with no mutant.
func Table(ms []Mutant) string {
	var b strings.Builder
	b.WriteString("| Category | Real bugs | Mutants | Hunts | From the wild | Examples |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|\n")
	var gaps []string
	in := 0
	for _, c := range Categories {
		var n, hunts, wild int
		var names []string
		for _, m := range ms {
			if m.Study != c.Key {
				continue
			}
			n++
			if m.Hunt {
				hunts++
			}
			if m.Wild {
				wild++
				names = append(names, m.Kata+" "+m.Name)
			}
		}
		for _, m := range ms {
			if m.Study == c.Key && !m.Wild && len(names) < 3 {
				names = append(names, m.Kata+" "+m.Name)
			}
		}
		in += n
		if n == 0 {
			gaps = append(gaps, c.Key)
		}
		fmt.Fprintf(&b, "| `%s` %s | %d (%.1f%%) | %d | %d | %d | %s |\n", c.Key, c.Name, c.Bugs,
			100*float64(c.Bugs)/Total, n, hunts, wild, strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\n%d of %d mutants fall in a category of the study; the other %d are mistakes of another kind "+
		"(error values, arithmetic, input checks, a design the README rules out).\n", in, len(ms), len(ms)-in)
	if len(gaps) == 0 {
		b.WriteString("Every category has at least one mutant.\n")
	} else {
		fmt.Fprintf(&b, "Categories with no mutant: %s.\n", strings.Join(gaps, ", "))
	}
	return b.String()
}
