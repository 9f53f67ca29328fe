package room

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxName is the longest name the grid shows, in characters: the board
// refuses a longer one, and the report cuts it.
const MaxName = 40

// Name is a participant's name as the grid shows it and matches it: one
// line, spaces collapsed, and nothing that does not show.
//
// The name is first put in Unicode normalization form NFKC
// (golang.org/x/text/unicode/norm), so the compatibility forms a keyboard
// or a paste produces become the plain ones: fullwidth letters and
// digits, ligatures, the ideographic and no-break spaces. Then everything
// that does not show is dropped: control characters, format characters
// (zero-width spaces and joiners, the bidirectional overrides and
// isolates, soft hyphens, tags), variation selectors, and the blank
// "letters" some fonts draw as nothing (Hangul fillers, the braille
// blank). What is left is letters, marks, digits, punctuation, symbols and
// single spaces. Look-alikes from other scripts are not folded here: see
// LooksLike and MixedScript.
func Name(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFKC.String(s) {
		switch {
		case unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			space = b.Len() > 0
			continue
		case invisible(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// invisible reports whether r draws nothing, or steers how text is drawn.
func invisible(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return true
	case unicode.IsControl(r) || unicode.Is(unicode.Cf, r): // C0, C1; zero-width, bidi, tags, soft hyphen
		return true
	case unicode.Is(unicode.Variation_Selector, r) || r == 0x034f: // and the grapheme joiner
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800: // blank letters
		return true
	case unicode.In(r, unicode.Co, unicode.Cs, unicode.Cn) || !unicode.IsPrint(r) && r != ' ':
		return true
	}
	return false
}

// clip cuts s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}

// MixedScript names the two scripts when name mixes Latin letters with
// Cyrillic or Greek ones ("Latin and Cyrillic"), the way a look-alike is
// made: "Аda" with a Cyrillic А reads as "Ada". "" for a name in one of
// them, or in any other script or mix of scripts.
func MixedScript(name string) string {
	var seen []string
	for _, sc := range []struct {
		name  string
		table *unicode.RangeTable
	}{{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}} {
		if strings.IndexFunc(name, func(r rune) bool { return unicode.Is(sc.table, r) }) >= 0 {
			seen = append(seen, sc.name)
		}
	}
	if len(seen) < 2 {
		return ""
	}
	return seen[0] + " and " + seen[1]
}

// LooksLike reports whether a and b read the same on a screen though they
// are different names: equal once case is ignored and the Cyrillic and
// Greek letters that look like Latin ones are read as those.
func LooksLike(a, b string) bool {
	return !strings.EqualFold(a, b) && skeleton(a) == skeleton(b)
}

// skeleton is s lower-cased with its look-alike letters read as Latin.
func skeleton(s string) string {
	return strings.Map(func(r rune) rune {
		if l, ok := lookalikeUpper[r]; ok {
			return l
		}
		r = unicode.ToLower(r)
		if l, ok := lookalike[r]; ok {
			return l
		}
		return r
	}, s)
}

// lookalike maps the lower-case Cyrillic and Greek letters that most
// fonts draw like a Latin one to that letter.
var lookalike = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h',
	'α': 'a', 'β': 'b', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k', 'μ': 'u', 'ν': 'v', 'ο': 'o',
	'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
}

// lookalikeUpper is for the capitals that look like another Latin letter
// than their lower case does.
var lookalikeUpper = map[rune]rune{'Η': 'h', 'Μ': 'm', 'Ν': 'n', 'Υ': 'y'}
