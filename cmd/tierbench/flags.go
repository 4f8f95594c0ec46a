package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// flagSetSink, when set, receives the FlagSet and positional count of
// the next parseArgs call instead of parsing: flagSetOf uses it to build a
// subcommand's FlagSet without running the subcommand.
var flagSetSink func(fs *flag.FlagSet, positional int)

// flagSetOf builds the FlagSet of the subcommand name, with the number of
// positional arguments it takes (< 0: any), by running it with parseArgs
// handing the FlagSet over at once. Every subcommand builds its FlagSet
// and calls parseArgs before it does anything else, so nothing runs.
func flagSetOf(name string) (*flag.FlagSet, int, bool) {
	c, ok := lookup(name)
	if !ok {
		return nil, 0, false
	}
	var got *flag.FlagSet
	positional := 0
	flagSetSink = func(fs *flag.FlagSet, n int) { got, positional = fs, n }
	defer func() { flagSetSink = nil }()
	c.run(nil, io.Discard, io.Discard)
	return got, positional, got != nil
}

// parseArgs parses a subcommand's flags the same way for every subcommand.
// Flags may come before, between and after positional arguments; "--"
// ends the flags. Asked-for help goes to stdout, since it is output rather
// than an error, and ends the command with status 0; the flags are listed
// as --name (a one-letter name as -x), aliases beside. A bad flag, or a
// number of positional arguments other than positional (any number when
// positional < 0), prints the reason and the usage to stderr and ends it
// with status 2. ok reports whether the command goes on.
func parseArgs(fs *flag.FlagSet, args []string, positional int, stdout, stderr io.Writer) (status int, ok bool) {
	if flagSetSink != nil {
		flagSetSink(fs, positional)
		return 0, false
	}
	name := "tierbench " + strings.TrimPrefix(fs.Name(), "tierbench ")
	useDashDashUsage(fs)
	if asksForHelp(args) {
		fs.SetOutput(stdout)
	} else {
		// The flag package's own report lacks the command's name; ours
		// below has it, and a guess at the flag that was meant.
		fs.SetOutput(io.Discard)
	}
	if err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		fmt.Fprintf(stderr, "%s: %v%s\n\n", name, err, didYouMean(fs, err))
		fs.SetOutput(stderr)
		fs.Usage()
		return 2, false
	}
	fs.SetOutput(stderr)
	if positional < 0 || fs.NArg() == positional {
		return 0, true
	}
	if fs.NArg() > positional {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n\n", name, fs.Arg(positional))
	} else {
		fmt.Fprintf(stderr, "%s: missing argument\n\n", name)
	}
	fs.Usage()
	return 2, false
}

// parseInterspersed parses args with fs, taking flags after positional
// arguments too (`report DIR --verify`), as most command-line tools do;
// after "--" everything is positional. Once it returns, fs.Args() holds
// the positional arguments in their order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positionals []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		left := fs.Args()
		if len(left) == 0 {
			break
		}
		// The flag package stops at "--" (consumed) or at the first
		// positional argument (not consumed).
		if consumed := len(rest) - len(left); consumed > 0 && rest[consumed-1] == "--" {
			positionals = append(positionals, left...)
			break
		}
		positionals = append(positionals, left[0])
		rest = left[1:]
	}
	// A parse of "--" alone leaves every flag as it is and sets Args.
	return fs.Parse(append([]string{"--"}, positionals...))
}

// didYouMean names the flag of fs closest to the one err says is not
// defined (" (did you mean --data-dir?)"), or is "" when none is close: a
// defined name that contains the given one or is contained in it (both
// at least 3 letters), or is within two edits of it.
func didYouMean(fs *flag.FlagSet, err error) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return ""
	}
	given := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	best, bestDistance := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(given, f.Name)
		if len(given) >= 3 && len(f.Name) >= 3 && (strings.Contains(f.Name, given) || strings.Contains(given, f.Name)) {
			d = min(d, 2)
		}
		if d < bestDistance {
			best, bestDistance = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return " (did you mean --" + best + "?)"
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// asksForHelp reports whether args hold -h or --help before a "--".
func asksForHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}

// passwordFlags registers --auth and --auth-file on fs; the returned
// function, called once the flags are parsed, reads --auth-file into
// *auth. A password on a command line is shown to every user of the host
// (ps, /proc/<pid>/cmdline, docker inspect), so the orchestrator only ever
// passes --auth-file.
func passwordFlags(fs *flag.FlagSet, auth *string, usage string) func() error {
	fs.StringVar(auth, "auth", "", usage)
	file := fs.String("auth-file", "", "read the password from the first line of this `file`: unlike --auth it stays off the command line, where ps and /proc show it to every user")
	return func() error {
		if *file == "" {
			return nil
		}
		if *auth != "" {
			return fmt.Errorf("--auth and --auth-file both give a password: give one")
		}
		data, err := os.ReadFile(*file)
		if err != nil {
			return fmt.Errorf("--auth-file: %w", err)
		}
		pw, _, _ := strings.Cut(string(data), "\n")
		if pw == "" {
			return fmt.Errorf("--auth-file %s: the first line is empty, want the password", *file)
		}
		*auth = pw
		return nil
	}
}
