package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tierbench/tierbench/compare"
)

func init() {
	register(command{name: "compare", summary: "set results bundles side by side: medians, significant deltas, host and workload differences; a regression gate for CI", run: runCompare})
}

func runCompare(args []string, stdout, stderr io.Writer) int {
	var opts compare.Options
	var asJSON bool
	var svgDir, htmlPath string
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.BoolVar(&asJSON, "json", false, "write one JSON document instead of Markdown (with the gate's verdict under \"gate\")")
	fs.StringVar(&svgDir, "svg", "", "also write one throughput chart per row (one line per bundle) as SVG into this directory; the Markdown embeds them")
	fs.StringVar(&htmlPath, "html", "", "also write the comparison as one self-contained HTML page (charts inline) to this `FILE`")
	fs.BoolVar(&opts.Force, "force", false, "compare bundles whose record size or dbsize differ (the output says so in bold)")
	fs.BoolVar(&opts.Unverified, "unverified", false, "compare bundles whose sums fail, are missing or leave results.json uncovered; every figure from them is marked †")
	fs.Float64Var(&opts.FailOnRegressionPct, "fail-on-regression", 0, "exit 1 when a cell is significantly slower than the first bundle's by more than `PCT` percent, naming it")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench compare [flags] A B [C …]

Sets results bundles of 'tierbench run' side by side (each argument a bundle
directory or its results.json). Per scenario it prints one table with every
cell's median in each bundle and the delta against the first bundle, such
as "+7.3 % (p=0.008 n=5)". A delta is written "~" when the Mann–Whitney U
test over the cells' passes (benchstat's statistics, α = 0.05) cannot tell
it from noise; a note says when the passes are too few for any difference
to be significant (3 against 3 never is: the smallest p is 0.1) and how
many would be. Then the host fingerprint fields and run flags that differ.

Each bundle is first checked as 'tierbench report --verify' checks it; one
whose sums fail or are missing, or leave results.json uncovered, is refused
unless --unverified. Bundles whose record size or --dbsize differ are refused
unless --force. See docs/compare.md.

Exit 0: compared (and no cell failed --fail-on-regression); 1: a cell failed
--fail-on-regression; 2: refused, unreadable, bad usage, or a gate that could
judge no cell (too few passes on every one).

Examples:
  tierbench compare tierbench-results/before tierbench-results/after
  tierbench compare --fail-on-regression 5 --json published/ mine/ > verdict.json
  tierbench compare --svg plots --html compare.html results/before results/after > compare.md

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, -1, stdout, stderr); !ok {
		return status
	}
	if fs.NArg() < 2 {
		fmt.Fprintf(stderr, "tierbench compare: want at least two bundles, got %d\n\n", fs.NArg())
		fs.Usage()
		return 2
	}
	if opts.FailOnRegressionPct < 0 {
		fmt.Fprintf(stderr, "tierbench compare: --fail-on-regression %g: want a percentage above 0, such as 5\n", opts.FailOnRegressionPct)
		return 2
	}
	bundles, err := compare.Load(fs.Args())
	var c *compare.Comparison
	if err == nil {
		c, err = compare.Compare(bundles, opts)
	}
	if err == nil {
		if opts.FailOnRegressionPct > 0 {
			c.Judge(opts.FailOnRegressionPct)
		}
		err = writeComparison(c, asJSON, svgDir, htmlPath, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tierbench compare: %v\n", err)
		return 2
	}
	if c.Gate != nil {
		fmt.Fprintf(stderr, "tierbench compare: %s\n", c.Gate.Summary(c.Bundles[0].Name))
		switch {
		case c.Gate.Failed:
			return 1
		case c.Gate.Judged == 0:
			return 2 // a gate that could fail nothing is no pass
		}
	}
	return 0
}

// writeComparison prints the comparison and writes its charts and page.
func writeComparison(c *compare.Comparison, asJSON bool, svgDir, htmlPath string, stdout io.Writer) error {
	var embed string
	if svgDir != "" {
		var err error
		if embed, err = c.WritePlots(svgDir); err != nil {
			return err
		}
	}
	if htmlPath != "" {
		if err := c.WriteHTMLFile(htmlPath); err != nil {
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
