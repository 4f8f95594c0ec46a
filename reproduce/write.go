package reproduce

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// Files a reproduction writes into the reproducing bundle.
const (
	FileMarkdown = "reproduction.md"
	FileHTML     = "reproduction.html"
	FileJSON     = "reproduction.json"
)

// Markdown is the reproduction as reproduction.md: the verdicts' count,
// the two hosts side by side, the verdict table, the notes.
func (r *Reproduction) Markdown() string {
	var b strings.Builder
	rep, diff, nc := r.Counts()
	fmt.Fprintf(&b, "# Reproduction\n\nOriginal: `%s`  \nHere: `%s`\n\n", r.Original, r.Here)
	fmt.Fprintf(&b, "**%d reproduced, %d differ, %d not comparable** of %d cells. A cell is reproduced when its share of its own host's fio ceiling is within ±%g points of the original's and the Mann–Whitney U test over the passes' shares finds no significant difference (α = %.2f).\n\n",
		rep, diff, nc, len(r.Cells), r.Tolerance, r.Alpha)
	b.WriteString("## Hosts\n\n| | original | here |\n|---|---|---|\n")
	for _, h := range r.Hosts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", esc(h.Field), esc(h.Original), esc(h.Here))
	}
	b.WriteString("\n## Cells\n\n")
	b.WriteString(r.Table())
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", esc(n))
		}
	}
	return b.String()
}

// Table is the verdict table, one line per cell: GET/s and share of its
// own host's ceiling on each host, CPU per GET ÷ fio's per read on each,
// the verdict and its evidence.
func (r *Reproduction) Table() string {
	var b strings.Builder
	b.WriteString("| scenario | row | t | GET/s there | share there | GET/s here | share here | CPU/GET ÷ fio/read there | here | verdict | evidence |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, c := range r.Cells {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | **%s** | %s |\n",
			c.Scenario, esc(c.Row), c.Threads, ops(c.Original), share(c.Original), ops(c.Here), share(c.Here),
			ratio(c.Original), ratio(c.Here), c.Verdict, esc(c.Why))
	}
	return b.String()
}

func ops(s Side) string {
	switch {
	case !s.Present:
		return "—"
	case s.Median == 0:
		return "0"
	}
	return fmt.Sprintf("%.0f", s.Median)
}

func share(s Side) string {
	if !s.Present || s.Ceiling == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100*s.Share)
}

func ratio(s Side) string {
	if s.Ratio == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f× (%.2f/%.2f µs)", s.Ratio, s.CPUPerGet, s.FioPerRead)
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// HTML is reproduction.md as one self-contained page (report.HTMLPage).
func (r *Reproduction) HTML() ([]byte, error) {
	return report.HTMLPage("tierbench reproduction", []report.HTMLPart{{Markdown: r.Markdown()}}, func(string) ([]byte, bool) { return nil, false })
}

// Write writes reproduction.md, .html and .json into the bundle at dir
// and seals it again, so its sums cover them: the bundle must hold
// before (a reproduction never vouches for files it did not check).
func (r *Reproduction) Write(dir string) error {
	in, err := results.Check(dir)
	if err != nil {
		return err
	}
	if !in.Holds() {
		return fmt.Errorf("reproduce: %s does not match its sums before the reproduction is added: %s", dir, strings.Join(in.Findings, "; "))
	}
	page, err := r.HTML()
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{FileMarkdown: []byte(r.Markdown()), FileHTML: page, FileJSON: append(js, '\n')} {
		if err := results.WriteFile(dir, name, data); err != nil {
			return err
		}
	}
	return results.Seal(dir, nil)
}
