package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/tierbench/tierbench/orchestrator"
)

func init() {
	register(command{name: "report", summary: "render table.md and report.md again from a results bundle", run: runReport})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench report DIR

Renders results.json, table.md and report.md of the results bundle in DIR
again from its plan.json, cells.jsonl and preflight.json (for example after
an interrupted run, or with a newer tierbench), and prints the table.

Example:
  tierbench report results/20261130T120000Z-1a2b3c

Flags: none.
`)
	}
	if status, ok := parseArgs(fs, args, 1, stdout, stderr); !ok {
		return status
	}
	if err := orchestrator.Report(context.Background(), orchestrator.ReportConfig{Dir: fs.Arg(0)}, stdout); err != nil {
		fmt.Fprintf(stderr, "tierbench report: %v\n", err)
		return 1
	}
	return 0
}
