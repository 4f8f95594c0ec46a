package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// evidenceMarks are the flags a shown cell carries in the report.
func evidenceMarks(c results.Cell) string {
	var m []string
	if c.AboveCeiling {
		m = append(m, "above-ceiling")
	}
	if c.ServerCPUBound {
		m = append(m, "server-cpu-bound")
	}
	return strings.Join(m, ", ")
}

// renderEvidence writes the per-cell disk and CPU evidence beside ops/s.
func renderEvidence(b *strings.Builder, res results.Results) {
	b.WriteString("## Disk and CPU evidence\n\n")
	disks := evidenceDisks(res)
	if len(disks) == 0 {
		b.WriteString("No disk evidence in this bundle: the data dir's disks were not resolved")
		if n := evidenceNote(res); n != "" {
			b.WriteString(" (" + n + ")")
		}
		b.WriteString(".\n\n")
	} else {
		fmt.Fprintf(b, "Disks sampled in every GET phase: %s, below the data dir.\n\n", strings.Join(disks, "+"))
	}
	cols := []string{"backend", "NUMA", "threads>", "ops/s>", "ceiling>", "% of ceiling>", "disk r/s>", "r/s % of ceiling>", "r/s ÷ ops/s>", "disk depth>", "server CPU>", "client CPU>", "marks"}
	steal := anyCellSteal(res)
	if steal {
		cols = slices.Insert(cols, len(cols)-1, "steal>")
	}
	writeHead(b, cols...)
	for _, c := range res.Cells {
		if c.Passes == 0 {
			continue
		}
		ceiling, share, rpsShare, ratio, rps, depth := "—", "—", "—", "—", "—", "—"
		if c.Ceiling > 0 {
			ceiling, share = human.Ops(c.Ceiling), fmt.Sprintf("%.1f %%", 100*c.Median/c.Ceiling)
		}
		if c.DiskReadsPerSec > 0 || c.DiskQueueDepth > 0 {
			rps, depth = human.Ops(c.DiskReadsPerSec), fmt.Sprintf("%.0f", c.DiskQueueDepth)
			if c.Ceiling > 0 {
				rpsShare = fmt.Sprintf("%.1f %%", 100*c.DiskReadsPerSec/c.Ceiling)
			}
			if c.Median > 0 {
				ratio = fmt.Sprintf("%.2f", c.DiskReadsPerSec/c.Median)
			}
		}
		marks := evidenceMarks(c)
		if c.Excluded != "" {
			marks = strings.TrimPrefix(marks+", excluded: "+c.Excluded, ", ")
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %.0f %% | %.0f %% |", rowName(c.Row), c.Row.Label, c.Threads,
			human.Ops(c.Median), ceiling, share, rps, rpsShare, ratio, depth, 100*c.ServerCPUShare, 100*c.ClientCPUShare)
		if steal {
			fmt.Fprintf(b, " %s |", human.SharePercent(c.Steal()))
		}
		fmt.Fprintf(b, " %s |\n", marks)
	}
	b.WriteString("\n")
	for _, c := range res.Cells {
		if c.AboveCeiling {
			fmt.Fprintf(b, "- **%s %s t=%d is above-ceiling**: %s\n", rowName(c.Row), c.Row.Label, c.Threads, c.AboveCeilingWhy)
		}
	}
	b.WriteString("\n")
}

// anyCellSteal reports whether any cell's passes read the steal.
func anyCellSteal(res results.Results) bool {
	for _, c := range res.Cells {
		if c.Steal() != nil {
			return true
		}
	}
	return false
}

// writeHead writes a table's header and alignment rows: a column whose
// name ends in ">" is right-aligned (the ">" is not shown), the others
// left-aligned.
func writeHead(b *strings.Builder, cols ...string) {
	var align strings.Builder
	for _, c := range cols {
		name, right := strings.CutSuffix(c, ">")
		b.WriteString("| " + name + " ")
		align.WriteString(map[bool]string{true: "|--:", false: "|:--"}[right])
	}
	b.WriteString("|\n" + align.String() + "|\n")
}

// evidenceDisks are the disks the passes sampled.
func evidenceDisks(res results.Results) []string {
	for _, p := range res.Passes {
		if len(p.DiskDevices) > 0 {
			return p.DiskDevices
		}
	}
	return nil
}

// evidenceNote is the first reason a pass gave for having no disk evidence.
func evidenceNote(res results.Results) string {
	for _, p := range res.Passes {
		if p.DiskNote != "" {
			return p.DiskNote
		}
	}
	return ""
}

// cpusOf is the server's Cpus_allowed_list in a row's passes, as the
// evidence writes it.
func cpusOf(res results.Results, row results.Row) string {
	if cpus := serverCPUs(res, row); cpus != "" {
		return "cpus " + cpus
	}
	return "cpus unknown"
}

// serverCPUs is the server's Cpus_allowed_list in a row's passes; "" when
// none recorded it.
func serverCPUs(res results.Results, row results.Row) string {
	for _, p := range res.Passes {
		if p.Row == row && p.Server.CPUs != "" {
			return p.Server.CPUs
		}
	}
	return ""
}
