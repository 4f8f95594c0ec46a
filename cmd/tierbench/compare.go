package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tierbench/tierbench/compare"
)

func init() {
	register(command{name: "compare", summary: "set results bundles side by side: medians, significant deltas, host and workload differences", run: runCompare})
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	var opts compare.Options
	var asJSON bool
	var svgDir string
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.BoolVar(&asJSON, "json", false, "write one JSON document instead of Markdown")
	fs.StringVar(&svgDir, "svg", "", "also write one throughput chart per row (one line per bundle) as SVG into this directory; the Markdown embeds them")
	fs.BoolVar(&opts.Force, "force", false, "compare bundles whose record size or dbsize differ, or that fail the check of their checksums (the output says so in bold)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench compare [flags] A B [C …]

Sets results bundles of 'tierbench run' side by side (each argument a bundle
directory or its results.json). Per scenario it prints one table with every
cell's median in each bundle and the delta against the first bundle, such
as "+7.3 % (p=0.008 n=5)". A delta is written "~" when the Mann–Whitney U
test over the cells' passes (benchstat's statistics, α = 0.05) cannot tell
it from noise; its notes say when there are too few passes to ever be
significant (2 against 2 never is: use --passes 4 or more on both sides).
Then it lists the host fingerprint fields (CPU, microcode, kernel,
mitigations, disks, fs.aio-max-nr, THP, governor, Docker, tierbench build)
and the run flags that differ, and nothing that agrees.

A --scenario all bundle is compared scenario by scenario; rows are told
apart by backend, pin, -b, shard count and hosts. Each bundle is first
checked as 'tierbench report --verify' checks it: one whose files or medians
are not those its results.json recorded is refused, naming what differs.
Bundles of a newer schema are refused; so are bundles whose record size
(--keylength, --valuelength) or --dbsize differ, since their cells measure
different things. --force compares both kinds anyway and says so in bold.
Exit 0: compared; 1: refused or unreadable; 2: usage.

Examples:
  tierbench compare results/before results/after
  tierbench compare --json results/host-a/results.json results/host-b
  tierbench compare --svg plots results/before results/after > compare.md

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, -1, stdout, stderr); !ok {
		return status
	}
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") {
			fmt.Fprintf(stderr, "tierbench compare: flag %q after the bundles: flags go first\n\n", a)
			fs.Usage()
			return 2
		}
	}
	if fs.NArg() < 2 {
		fmt.Fprintf(stderr, "tierbench compare: want at least two bundles, got %d\n\n", fs.NArg())
		fs.Usage()
		return 2
	}
	bundles, err := compare.Load(fs.Args())
	if err == nil {
		var c *compare.Comparison
		if c, err = compare.Compare(bundles, opts); err == nil {
			err = writeComparison(c, asJSON, svgDir, stdout)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tierbench compare: %v\n", err)
		if errors.Is(err, compare.ErrUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// writeComparison prints the comparison and writes its charts.
func writeComparison(c *compare.Comparison, asJSON bool, svgDir string, stdout io.Writer) error {
	var embed string
	if svgDir != "" {
		var err error
		if embed, err = c.WritePlots(svgDir); err != nil {
			return err
		}
	}
	if asJSON {
		return c.WriteJSON(stdout)
	}
	if err := c.WriteMarkdown(stdout); err != nil {
		return err
	}
	if embed != "" {
		_, err := fmt.Fprintf(stdout, "\n## Plots\n\n%s", embed)
		return err
	}
	return nil
}
