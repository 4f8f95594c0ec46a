package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"

	"github.com/tierbench/tierbench/report"
)

func init() {
	register(command{name: "report", summary: "render a results bundle again (table.md, report.md, report.html), check its sums, or export it", run: runReport})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	var verify, unverified bool
	var resign, export, out string
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.BoolVar(&verify, "verify", false, "check the bundle instead of rendering it: every file against SHA256SUMS, no file added, and results.json's medians against cells.jsonl")
	fs.StringVar(&resign, "resign", "", "render and seal a bundle whose sums fail or are missing, recording `WHY` (with who and when) in signings.jsonl")
	fs.StringVar(&export, "export", "", "write the bundle as `FORMAT` instead of rendering it: csv (a line per cell), benchfmt (Go benchmark lines for benchstat) or hgrm (HdrHistogram percentiles per latency step)")
	fs.StringVar(&out, "o", "", "with --export: the `PATH` to write (csv, benchfmt: a file, default stdout; hgrm: a directory)")
	fs.BoolVar(&unverified, "unverified", false, "with --export: export a bundle whose sums fail or are missing, every figure marked")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench report [--verify | --resign WHY | --export FORMAT [-o PATH]] DIR

Renders results.json, table.md, report.md, report.html and the SVG charts of
the results bundle in DIR again from its plan.json, cells.jsonl and
preflight.json (for example with a newer tierbench), then seals it:
SHA256SUMS lists the sha256 of every other file, results.json included
('sha256sum -c SHA256SUMS' checks it without tierbench). It renders only a
bundle whose sums hold; one whose sums fail or are missing takes --resign,
recorded in signings.jsonl. A bundle sealed before results.json was covered
is sealed whole, and that recorded too. A --scenario all bundle is rendered
scenario by scenario, with a report.md at its top.

With --export it changes nothing and writes what the bundle holds for other
tools: csv, benchfmt (benchstat reads it) or hgrm (one file per latency step).
It exports only a bundle whose sums hold, unless --unverified.

With --verify it changes nothing. Exit 0: the bundle is as sealed; 1: a file
or number differs, the bundle has no sums or leaves results.json uncovered
(each named on stdout), or it cannot be read. See docs/bundle-integrity.md.

Examples:
  tierbench report --verify tierbench-results/20261130T120000Z-1a2b3c
  tierbench report tierbench-results/20261130T120000Z-1a2b3c
  tierbench report --resign "cells.jsonl's pass 3 restored from the client log" results/X
  tierbench report --export benchfmt results/A > a.txt; benchstat a.txt b.txt
  tierbench report --export hgrm -o hgrm/ results/X

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 1, stdout, stderr); !ok {
		return status
	}
	dir := fs.Arg(0)
	if export != "" {
		if verify || resign != "" {
			fmt.Fprintf(stderr, "tierbench report: --export writes, --verify checks and --resign seals: give one\n")
			return 2
		}
		if err := exportBundle(dir, export, out, unverified, stdout); err != nil {
			fmt.Fprintf(stderr, "tierbench report: %v\n", err)
			return 1
		}
		return 0
	}
	if out != "" || unverified {
		fmt.Fprintf(stderr, "tierbench report: -o and --unverified go with --export\n")
		return 2
	}
	if verify {
		if resign != "" {
			fmt.Fprintf(stderr, "tierbench report: --verify changes nothing and --resign seals: give one\n")
			return 2
		}
		if err := report.Verify(dir, stdout); err != nil {
			fmt.Fprintf(stderr, "tierbench report: %v\n", err)
			return 1
		}
		return 0
	}
	table, err := report.Rerender(dir, signer(), resign)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench report: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, table)
	return 0
}

// signer is who runs this tierbench, as a re-signed bundle records it.
func signer() report.Signer {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = cmp.Or(u.Username, name)
	}
	host, _ := os.Hostname()
	return report.Signer{By: cmp.Or(name, "unknown") + "@" + cmp.Or(host, "unknown"), Version: versionString()}
}

// exportBundle writes the export to out (a file, or stdout when "") or,
// for hgrm, into the directory out.
func exportBundle(dir, format, out string, unverified bool, stdout io.Writer) error {
	if format == "hgrm" || out == "" {
		return report.Export(dir, format, stdout, out, unverified)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := report.Export(dir, format, f, "", unverified); err != nil {
		f.Close()
		os.Remove(out)
		return err
	}
	return f.Close()
}
