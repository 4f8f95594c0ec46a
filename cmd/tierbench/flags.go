package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
