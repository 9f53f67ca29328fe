package pack

import (
	"fmt"
	"strings"

	"gokata/checker/internal/catalog"
)

// KeepDecisionsBack returns an interview kit's copy of kata k's task
// README: the story, the Ask-first questions, the requirements and the
// rest stay; the Decisions section keeps its heading and says in one line
// how the decisions are revealed. They answer the Ask-first questions, so
// a candidate who reads them first has nothing left to ask.
func KeepDecisionsBack(readme []byte, k catalog.Kata) []byte {
	lines := strings.Split(string(readme), "\n")
	var out []string
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "## ") {
			if in {
				out = append(out, "")
			}
			in = strings.TrimSpace(l[3:]) == "Decisions"
			out = append(out, l)
			if in {
				out = append(out, "", DecisionsKeptBack(k))
			}
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// DecisionsKeptBack is the line that stands for the decisions in an
// interview kit's README.
func DecisionsKeptBack(k catalog.Kata) string {
	return fmt.Sprintf("Kept back in this kit: they answer the questions above. `bin/checker interview %s` shows them once you have asked; `make decisions EX=%s` shows them at any time, and the interview's scorecard notes that you read them first.", k.ID(), k.ID())
}
