// Command tierbench reproduces storage-tiered key-value server benchmarks.
//
// The entry point only wires flags to packages: each subcommand lives in a
// file of its own in this folder and hands a Config to its package's Run.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
)

// command is one subcommand: its name, a one-line summary for the usage
// text, and the function that parses its flags and runs it, returning the
// process exit status (0 ok, 1 failure, 2 usage error).
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
	// hidden commands are run by the orchestrator in its containers and
	// are left out of the usage text.
	hidden bool
}

// commands is filled by each subcommand's file in init.
var commands []command

// usageOrder is the order the usage text lists the commands in: from the
// host check up the stack to the reproduction.
var usageOrder = []string{"preflight", "device", "kv", "server", "bench", "plan", "run", "report", "compare", "completion"}

func register(c command) { commands = append(commands, c) }

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "help":
		// tierbench help CMD is CMD --help, word for word.
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		if args[1] == "help" {
			usage(stdout)
			return 0
		}
		if _, ok := lookup(args[1]); !ok {
			fmt.Fprintf(stderr, "tierbench help: unknown command %q\n\n", args[1])
			usage(stderr)
			return 2
		}
		return dispatch([]string{args[1], "--help"}, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if c, ok := lookup(name); ok {
		return c.run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "tierbench: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

// lookup finds the subcommand called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprint(w, `tierbench reproduces storage-tiered key-value server benchmarks
(the Garnet "NVMe storage-bound" matrix) on any Linux host, and publishes
them with a fingerprint of the host.

Usage:
  tierbench <command> [flags]

Commands:
`)
	sorted := slices.Clone(commands)
	slices.SortStableFunc(sorted, func(a, b command) int {
		return rank(a.name) - rank(b.name)
	})
	for _, c := range sorted {
		if c.hidden {
			continue
		}
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `  version    print the version and VCS revision of this binary

Run 'tierbench help <command>' (or 'tierbench <command> --help') for its flags.
Flags may follow positional arguments; -- ends the flags.
The stack measured is RESP <= KV <= Device <= fio: each layer is reported as
a share of the layer below it.
`)
}

// rank is a command's place in usageOrder; unlisted commands go last.
func rank(name string) int {
	if i := slices.Index(usageOrder, name); i >= 0 {
		return i
	}
	return len(usageOrder)
}

// notBuilt is the run function of a subcommand whose package is not there
// yet: it says so and fails, rather than pretending to work.
func notBuilt(name string, issue int) func([]string, io.Writer, io.Writer) int {
	return func(_ []string, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "tierbench %s: not built yet (issue #%d)\n", name, issue)
		return 1
	}
}
