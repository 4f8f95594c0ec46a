package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// useDashDashUsage wraps fs.Usage so that the flag listing inside it is
// written as the docs write flags, --name (a one-letter name -x), with a
// flag's aliases beside it, in place of the flag package's -name lines.
// Each subcommand's Usage keeps its own text around the listing: the
// wrapper renders it, finds fs.PrintDefaults' output in it and replaces
// that. Wrapping twice is harmless.
func useDashDashUsage(fs *flag.FlagSet) {
	inner := fs.Usage
	if inner == nil {
		return
	}
	if _, done := wrappedUsage[fs]; done {
		return
	}
	wrap := func() {
		out := fs.Output()
		defer fs.SetOutput(out)
		var defaults, whole bytes.Buffer
		fs.SetOutput(&defaults)
		fs.PrintDefaults()
		fs.SetOutput(&whole)
		inner()
		text := whole.String()
		if d := defaults.String(); d != "" {
			text = strings.Replace(text, d, flagListing(fs), 1)
		}
		io.WriteString(out, text)
	}
	fs.Usage = wrap
	wrappedUsage[fs] = struct{}{}
}

// wrappedUsage remembers the FlagSets whose Usage useDashDashUsage
// wrapped.
var wrappedUsage = map[*flag.FlagSet]struct{}{}

// flagListing lists fs's flags as PrintDefaults does, one entry per
// variable: the longest name first as --name, its aliases (flags bound to
// the same variable) beside it.
func flagListing(fs *flag.FlagSet) string {
	var b strings.Builder
	for _, g := range flagGroups(fs) {
		f := g[0]
		names := make([]string, len(g))
		for i, a := range g {
			names[i] = dashed(a.Name)
		}
		fmt.Fprintf(&b, "  %s", strings.Join(names, ", "))
		typeName, usage := flag.UnquoteUsage(f)
		if typeName != "" {
			b.WriteString(" " + typeName)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !isZeroDefault(f) {
			if reflect.TypeOf(f.Value).String() == "*flag.stringValue" {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// flagGroups groups fs's flags by the variable they set, a group where its
// first name falls in alphabetical order; within a group the longest name
// comes first.
func flagGroups(fs *flag.FlagSet) [][]*flag.Flag {
	var groups [][]*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		for i, g := range groups {
			if sameVariable(g[0].Value, f.Value) {
				groups[i] = append(g, f)
				if len(f.Name) > len(g[0].Name) {
					groups[i][0], groups[i][len(groups[i])-1] = f, g[0]
				}
				return
			}
		}
		groups = append(groups, []*flag.Flag{f})
	})
	return groups
}

// sameVariable reports whether two flag Values set the same variable: the
// flag package's own Values are pointers to it, and this package's are
// structs holding one, so two flags bound to one variable hold equal
// Values.
func sameVariable(a, b flag.Value) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() || (ta.Kind() != reflect.Pointer && ta.Kind() != reflect.Struct) {
		return false
	}
	return a == b
}

// isZeroDefault reports whether f's default is its type's zero value,
// which the listing leaves unsaid as PrintDefaults does.
func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// dashed is a flag's name as the docs write it: -x for one letter,
// --name otherwise. The flag package takes either spelling of each.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
