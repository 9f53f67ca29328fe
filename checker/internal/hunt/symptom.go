package hunt

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Code is what a learner can search during a hunt, and what a bug report
// must therefore not quote: the reference (with its comments), the code
// as planted, and the stub. Each maps a file's name to its content.
type Code struct {
	Reference, Planted, Stub map[string][]byte
}

// MinQuote is the shortest piece of a string literal a bug report may not
// quote, and MinWords the shortest run of the code's words.
const (
	MinQuote = 6
	MinWords = 4
)

// Findable lists what a search of the code finds in symptom, a bug
// report, each found piece once, in the report's order: the search
// would lead straight to the planted line instead of to reasoning.
//
//   - A piece of a string literal of the reference, the planted code or
//     the stub: the literal cut at its formatting verbs (%d, %w), each
//     piece trimmed of spaces; a piece of MinQuote characters or more
//     counts, compared without case.
//   - A name written as code (between backquotes) that the reference or
//     the planted code declares and the stub does not, longer than 3
//     characters: a name of the code's insides (a field, a helper, a
//     variable), which only the code can have told the reporter.
//   - MinWords or more words in a row that stand in a row on one line of
//     the reference or the planted code, comments included, compared
//     without case or punctuation.
func Findable(symptom string, c Code) []string {
	var found []string
	add := func(s string) {
		if !slices.Contains(found, s) {
			found = append(found, s)
		}
	}
	lower := strings.ToLower(symptom)
	for _, q := range quotes(c.Reference, c.Planted, c.Stub) {
		if strings.Contains(lower, strings.ToLower(q)) {
			add(strconv.Quote(q))
		}
	}
	inner := declared(c.Reference)
	for n := range declared(c.Planted) {
		inner[n] = true
	}
	stub := declared(c.Stub)
	for _, m := range backquoted.FindAllStringSubmatch(symptom, -1) {
		for _, id := range identifier.FindAllString(m[1], -1) {
			if len(id) > 3 && inner[id] && !stub[id] {
				add("`" + id + "`")
			}
		}
	}
	for _, run := range wordRuns(symptom, c.Reference, c.Planted) {
		add(run)
	}
	return found
}

var (
	backquoted = regexp.MustCompile("`([^`]+)`")
	identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	verb       = regexp.MustCompile(`%[-+# 0-9.*\[\]]*[a-zA-Z%]`)
)

// quotes lists the pieces of the files' string literals a report may not
// quote (Findable), sorted, each once.
func quotes(sets ...map[string][]byte) []string {
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, files := range sets {
		for name, data := range files {
			f, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			f.Imports = nil
			ast.Inspect(f, func(n ast.Node) bool {
				if _, ok := n.(*ast.ImportSpec); ok {
					return false
				}
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, p := range verb.Split(s, -1) {
					if p = strings.TrimSpace(p); len([]rune(p)) >= MinQuote && strings.Contains(p, " ") {
						seen[p] = true
					}
				}
				return true
			})
		}
	}
	out := make([]string, 0, len(seen))
	for q := range seen {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

// wordRuns lists the longest runs of MinWords or more of the symptom's
// words that stand in a row on one line of the files, in the symptom's
// order.
func wordRuns(symptom string, sets ...map[string][]byte) []string {
	grams := map[string]bool{}
	for _, files := range sets {
		for _, data := range files {
			for _, l := range strings.Split(string(data), "\n") {
				ws := words(l)
				for i := 0; i+MinWords <= len(ws); i++ {
					grams[strings.Join(ws[i:i+MinWords], " ")] = true
				}
			}
		}
	}
	ws := words(symptom)
	var out []string
	for i := 0; i+MinWords <= len(ws); {
		if !grams[strings.Join(ws[i:i+MinWords], " ")] {
			i++
			continue
		}
		end := i + MinWords
		for end < len(ws) && grams[strings.Join(ws[end+1-MinWords:end+1], " ")] {
			end++
		}
		out = append(out, strings.Join(ws[i:end], " "))
		i = end
	}
	return out
}

// words cuts text into lowercase words: runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
