package compare

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// WriteJSON writes the comparison as one indented JSON document.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("compare: write JSON: %w", err)
	}
	return nil
}

// WriteMarkdown writes the comparison for a README or an issue: the
// tables, their footnotes, then the host and workload differences.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	base := c.Bundles[0].Name
	b.WriteString("# tierbench compare\n\n")
	for _, bi := range c.Bundles {
		fmt.Fprintf(&b, "- `%s`: run %s, %s\n", bi.Name, orDash(bi.RunID), bi.Dir)
	}
	fmt.Fprintf(&b, "\nEach cell is the median GET ops/sec of its passes; each delta is against `%s`, "+
		"written `~` where the %s finds no difference at α = %.2f.\n\n", base, c.Test, c.Alpha)
	for _, f := range c.Forced {
		fmt.Fprintf(&b, "**Compared with --force although the workloads differ: %s.**\n\n", f)
	}
	c.unverifiedLines(&b)
	if c.Gate != nil {
		fmt.Fprintf(&b, "## Gate: --fail-on-regression %s\n\n%s\n\n", strconv.FormatFloat(c.Gate.ThresholdPct, 'g', -1, 64), c.Gate.Summary(base))
	}
	for _, s := range c.Scenarios {
		c.scenarioTable(&b, s)
	}
	if len(c.Notes) > 0 {
		for i, n := range c.Notes {
			fmt.Fprintf(&b, "%s %s\n", superscript(i+1), n)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Host differences\n\n")
	if len(c.Host) == 0 {
		b.WriteString("The host fingerprints agree on every field compared (CPU, microcode, kernel, mitigations, disks, fs.aio-max-nr, THP, governor, Docker, tierbench build).\n\n")
	} else {
		c.differenceTable(&b, "field", c.Host)
	}
	b.WriteString("## Workload differences\n\n")
	if len(c.Workload) == 0 {
		b.WriteString("The runs used the same flags.\n")
	} else {
		c.differenceTable(&b, "flag", c.Workload)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("compare: write Markdown: %w", err)
	}
	return nil
}

// unverifiedLines says, in bold, which bundles only --unverified let
// through: those whose sums failed (one line each, naming what differs)
// and those whose sums vouch for less than all of them (one line per
// reason); every figure from them is marked.
func (c *Comparison) unverifiedLines(b *strings.Builder) {
	var order []string
	byWhy := map[string][]string{}
	for _, u := range c.Unverified {
		if u.Failed {
			fmt.Fprintf(b, "**`%s` failed verification and was compared only because of --unverified: %s.**\n\n", u.Bundle, strings.TrimSuffix(u.Why, "."))
			continue
		}
		if byWhy[u.Why] == nil {
			order = append(order, u.Why)
		}
		byWhy[u.Why] = append(byWhy[u.Why], "`"+u.Bundle+"`")
	}
	for _, why := range order {
		fmt.Fprintf(b, "**Not verified, compared only because of --unverified: %s (%s).**\n\n", strings.Join(byWhy[why], ", "), why)
	}
	if len(c.Unverified) > 0 {
		fmt.Fprintf(b, "%s marks every figure from those bundles: nothing vouches that it is what was measured.\n\n", strings.TrimSpace(unverifiedMark))
	}
}

func (c *Comparison) scenarioTable(b *strings.Builder, s Scenario) {
	fmt.Fprintf(b, "## %s (GET ops/sec)\n\n", s.Name)
	if len(s.Cells) == 0 {
		b.WriteString("No cells.\n\n")
		return
	}
	servers := slices.ContainsFunc(s.Cells, func(c CellCmp) bool { return c.Server != "" })
	if servers {
		b.WriteString("| server ")
	}
	b.WriteString("| backend | NUMA | threads |")
	align := "|:--|:--|--:|"
	if servers {
		align = "|:--" + align
	}
	for i, bi := range c.Bundles {
		fmt.Fprintf(b, " %s |", bi.Name)
		align += "--:|"
		if i > 0 {
			fmt.Fprintf(b, " vs %s |", c.Bundles[0].Name)
			align += "--:|"
		}
	}
	b.WriteString("\n" + align + "\n")
	for _, cell := range s.Cells {
		if servers {
			fmt.Fprintf(b, "| %s ", cmp.Or(cell.Server, results.OwnServer))
		}
		fmt.Fprintf(b, "| %s | %s | %d |", human.Title(cell.Backend), cell.Label, cell.Threads)
		for i, v := range cell.Values {
			b.WriteString(" " + medianText(v) + " |")
			if i > 0 {
				b.WriteString(" " + c.deltaText(v, cell.Values[0]) + " |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// unverifiedMark follows every figure from a bundle compared with
// --unverified.
const unverifiedMark = " †"

func medianText(v Value) string {
	mark := ""
	if v.Unverified {
		mark = unverifiedMark
	}
	switch {
	case !v.Present:
		return "—"
	case v.Excluded != "":
		return human.Ops(v.Median) + " (" + v.Excluded + ")" + mark
	}
	return human.Ops(v.Median) + mark
}

func (c *Comparison) deltaText(v, base Value) string {
	var s string
	switch {
	case v.Compared && v.Stat != "":
		s = v.Delta + " (" + v.Stat + ")"
	case v.Compared:
		s = v.Delta
	default:
		s = "—"
	}
	if v.Compared && (v.Unverified || base.Unverified) {
		s += unverifiedMark
	}
	for _, n := range v.Notes {
		s += superscript(n + 1)
	}
	return s
}

func (c *Comparison) differenceTable(b *strings.Builder, what string, diffs []Difference) {
	b.WriteString("| " + what + " |")
	align := "|:--|"
	for _, bi := range c.Bundles {
		fmt.Fprintf(b, " %s |", bi.Name)
		align += ":--|"
	}
	b.WriteString("\n" + align + "\n")
	for _, d := range diffs {
		fmt.Fprintf(b, "| %s |", d.Field)
		for _, v := range d.Values {
			b.WriteString(" " + escapeCell(orDash(v)) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// escapeCell keeps a value's "|" from ending a Markdown table cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

var superDigits = []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")

// superscript writes n as superscript digits, the footnote mark.
func superscript(n int) string {
	var r []rune
	for _, d := range fmt.Sprint(n) {
		r = append(r, superDigits[d-'0'])
	}
	return string(r)
}

// cellName names a cell's row in a chart: its backend, after its server's
// name when it is not tierbench's own.
func cellName(c CellCmp) string {
	if c.Server == "" {
		return human.Title(c.Backend)
	}
	return c.Server + " " + human.Title(c.Backend)
}
