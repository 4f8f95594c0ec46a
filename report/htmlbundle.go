package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/results"
)

// bundleHTML is report.html: the integrity status, report.md (host,
// table, charts, latency, evidence), the ladder when the bundle has one,
// and the plan, in one self-contained page (HTMLPage).
func bundleHTML(dir string, res results.Results, reportMD string) ([]byte, error) {
	signings, err := results.ReadSignings(dir)
	if err != nil {
		return nil, err
	}
	parts := []HTMLPart{{Markdown: reportMD}}
	ladder, err := readBundleFile(dir, FileLadderMarkdown)
	switch {
	case err == nil:
		parts = append(parts, HTMLPart{Heading: "Where the time goes (ladder)", Markdown: string(ladder)})
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	plan, err := json.MarshalIndent(res.Plan, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: encode the plan: %w", err)
	}
	parts = append(parts,
		HTMLPart{Heading: "Integrity", Markdown: integrityMarkdown(signings)},
		HTMLPart{Heading: "The plan (plan.json)", Pre: string(plan), Folded: true})
	return HTMLPage("tierbench run "+res.Plan.RunID, parts, func(name string) ([]byte, bool) {
		b, err := readBundleFile(dir, name)
		return b, err == nil
	})
}

// integrityMarkdown says how the page and its bundle are sealed and every
// signing that sealed what the old sums did not vouch for.
func integrityMarkdown(signings []results.Signing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This page was written as its bundle was sealed: %s beside it lists the sha256 of every file of the bundle, this page and %s included. `tierbench report --verify DIR` (or `sha256sum -c %s` inside the bundle) checks that none changed since; a page that fails that check is not what was measured.\n\n",
		results.FileSums, results.FileResults, results.FileSums)
	if len(signings) == 0 {
		b.WriteString("No signing is recorded: the bundle was sealed by the run that measured it, or rendered again over sums that held.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Sealed over what its old sums did not vouch for, as %s records:\n\n", results.FileSignings)
	for _, s := range signings {
		fmt.Fprintf(&b, "- **%s** by %s on %s (%s): %s", s.Kind, s.By, s.Time.Format(time.RFC3339), s.Version, s.Why)
		if len(s.Findings) > 0 {
			fmt.Fprintf(&b, ". Found before: %s", strings.Join(s.Findings, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readBundleFile reads a regular file inside dir; a name that leaves the
// bundle, or a link, is not read.
func readBundleFile(dir, name string) ([]byte, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("report: %q is not a file inside the bundle: %w", name, fs.ErrNotExist)
	}
	p := filepath.Join(dir, name)
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("report: %s is not a regular file: %w", p, fs.ErrNotExist)
	}
	return os.ReadFile(p)
}

// indexHTML is the report.html at the top of a --scenario all bundle:
// its report.md, with each scenario's page linked.
func indexHTML(text string) ([]byte, error) {
	return HTMLPage("tierbench run, every scenario", []HTMLPart{{Markdown: text}}, func(string) ([]byte, bool) { return nil, false })
}
