package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// parseArgs parses a subcommand's flags the same way for every subcommand.
// Asked-for help goes to stdout, since it is output rather than an error,
// and ends the command with status 0. A bad flag, or a number of positional
// arguments other than positional (any number when positional < 0), prints
// the reason and the usage to stderr and ends it with status 2. ok reports
// whether the command goes on.
func parseArgs(fs *flag.FlagSet, args []string, positional int, stdout, stderr io.Writer) (status int, ok bool) {
	fs.SetOutput(stderr)
	if asksForHelp(args) {
		fs.SetOutput(stdout)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if positional < 0 || fs.NArg() == positional {
		return 0, true
	}
	name := "tierbench " + strings.TrimPrefix(fs.Name(), "tierbench ")
	if fs.NArg() > positional {
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n\n", name, fs.Arg(positional))
	} else {
		fmt.Fprintf(stderr, "%s: missing argument\n\n", name)
	}
	fs.Usage()
	return 2, false
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
