package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// helpIndent is the column where help's descriptions start.
const helpIndent = 23

// help is the checker's usage text, made from the verb table: the verbs
// by section, each with its own flags, then the flags several verbs share.
// A kit's leaves out the verbs it does not have.
func help() string {
	return helpFor(!hasPacked())
}

// helpFor renders help with or without the verbs a kit leaves out.
func helpFor(all bool) string {
	var shown []verb
	for _, v := range verbs {
		if all || v.kitless == "" {
			shown = append(shown, v)
		}
	}
	shared := sharedFlags(shown)
	var b strings.Builder
	b.WriteString("Usage: checker <verb> [flags] [args]\n")
	for _, sec := range sections {
		var entries []verb
		for _, v := range shown {
			if v.section == sec {
				entries = append(entries, v)
			}
		}
		if len(entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", sec)
		for _, v := range entries {
			writeEntry(&b, "  ", strings.TrimSpace(v.name+" "+v.args), v.summary)
			for _, f := range flagsOf(v) {
				if !slices.ContainsFunc(shared, func(s sharedFlag) bool { return s.same(f) }) {
					writeFlag(&b, "    ", f, "")
				}
			}
		}
	}
	if len(shared) > 0 {
		b.WriteString("\nFlags that several verbs take:\n")
		for _, s := range shared {
			writeFlag(&b, "  ", s.flag, "\nfor "+strings.Join(s.verbs, ", "))
		}
	}
	b.WriteString("\nYour progress lives in .kata/ (git ignores it); only reset and bughunt write your files.\n")
	b.WriteString("Exit codes: 0 passed, 1 fell short, 2 usage error, 3 checker error, 130 interrupted.\n")
	return b.String()
}

// verbHelp is one verb's -h: its usage line, what it does, and every flag
// it takes.
func verbHelp(v verb) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: checker %s", v.name)
	if fs := flagsOf(v); len(fs) > 0 {
		b.WriteString(" [flags]")
	}
	if v.args != "" {
		b.WriteString(" " + v.args)
	}
	fmt.Fprintf(&b, "\n\n%s\n", v.summary)
	if fs := flagsOf(v); len(fs) > 0 {
		b.WriteString("\nFlags:\n")
		for _, f := range fs {
			writeFlag(&b, "  ", f, "")
		}
	}
	return b.String()
}

// flagsOf is the flags verb v defines, by name as flag.PrintDefaults
// lists them.
func flagsOf(v verb) []*flag.Flag {
	fs := newFlags(v.name)
	v.setup(fs)
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

// sharedFlag is a flag that several verbs define with the same help.
type sharedFlag struct {
	flag  *flag.Flag
	verbs []string
}

func (s sharedFlag) same(f *flag.Flag) bool {
	return s.flag.Name == f.Name && s.flag.Usage == f.Usage
}

// sharedFlags lists the flags that more than one verb in vs defines with
// the same help, in order of first appearance.
func sharedFlags(vs []verb) []sharedFlag {
	var all []sharedFlag
	for _, v := range vs {
		for _, f := range flagsOf(v) {
			i := slices.IndexFunc(all, func(s sharedFlag) bool { return s.same(f) })
			if i < 0 {
				all = append(all, sharedFlag{flag: f})
				i = len(all) - 1
			}
			all[i].verbs = append(all[i].verbs, v.name)
		}
	}
	return slices.DeleteFunc(all, func(s sharedFlag) bool { return len(s.verbs) < 2 })
}

// writeFlag writes one flag's line: --name=value, its help, the default
// when it is not the zero value, and a suffix.
func writeFlag(b *strings.Builder, indent string, f *flag.Flag, suffix string) {
	value, usage := flag.UnquoteUsage(f)
	name := "--" + f.Name
	if len(f.Name) == 1 {
		name = "-" + f.Name
	}
	if value != "" {
		name += "=" + value
	}
	if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "false" && !strings.Contains(usage, "(default") {
		usage += " (default " + f.DefValue + ")"
	}
	writeEntry(b, indent, name, usage+suffix)
}

// writeEntry writes a term and its description: on the term's line from
// column helpIndent, or below it when the term is too long; a description's
// further lines are indented as far.
func writeEntry(b *strings.Builder, indent, term, desc string) {
	pad := strings.Repeat(" ", helpIndent)
	head := indent + term
	if n := utf8.RuneCountInString(head); n > helpIndent-2 {
		head += "\n" + pad
	} else {
		head += pad[n:]
	}
	lines := strings.Split(desc, "\n")
	b.WriteString(head + lines[0] + "\n")
	for _, l := range lines[1:] {
		b.WriteString(pad + l + "\n")
	}
}
