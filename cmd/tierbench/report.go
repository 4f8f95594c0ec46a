package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tierbench/tierbench/report"
)

func init() {
	register(command{name: "report", summary: "render table.md and report.md again from a results bundle", run: runReport})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	var verify bool
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.BoolVar(&verify, "verify", false, "check the bundle instead of rendering it: every file against the sha256 results.json records, no file added, and results.json's medians against cells.jsonl")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench report [--verify] DIR

Renders results.json, table.md, report.md and the SVG charts of the results
bundle in DIR again from its plan.json, cells.jsonl and preflight.json (for
example after an interrupted run, or with a newer tierbench), and prints
the table. results.json records the sha256 of every other file. A
--scenario all bundle is rendered scenario by scenario, and gets a report.md
at its top with each scenario's table and links to its report and ladder.

With --verify it changes nothing: it checks that every file is the one
results.json recorded, that none was added, and that results.json's own
medians are what cells.jsonl gives, so a reader can tell an edited number
from a measured one. Exit 0: the bundle is as written; 1: a file or number
differs (each named on stdout), or the bundle cannot be read. A --scenario
all bundle is checked scenario by scenario.

Examples:
  tierbench report results/20261130T120000Z-1a2b3c
  tierbench report --verify results/20261130T120000Z-1a2b3c

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 1, stdout, stderr); !ok {
		return status
	}
	dir := fs.Arg(0)
	if verify {
		if err := report.Verify(dir, stdout); err != nil {
			fmt.Fprintf(stderr, "tierbench report: %v\n", err)
			return 1
		}
		return 0
	}
	table, err := report.Render(dir)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench report: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, table)
	return 0
}
