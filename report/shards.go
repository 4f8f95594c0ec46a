package report

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// shardsReport is report.md's section on CPU per op for every cell and,
// for cluster rows, each node's load evidence and share of each cell.
func shardsReport(res results.Results) string {
	var b strings.Builder
	var cpu, nodes bool
	for _, c := range res.Cells {
		cpu = cpu || c.CPUMicrosPerOp > 0
		nodes = nodes || len(c.Nodes) > 0
	}
	if cpu {
		b.WriteString("## CPU per GET\n\nServer plus client CPU per GET:\n\n")
		fmt.Fprintf(&b, "| backend | NUMA |")
		for _, t := range res.Plan.Workload.Threads {
			fmt.Fprintf(&b, " t=%d |", t)
		}
		b.WriteString("\n|:--|:--|" + strings.Repeat("--:|", len(res.Plan.Workload.Threads)) + "\n")
		for _, row := range res.Plan.Rows {
			fmt.Fprintf(&b, "| %s | %s |", rowName(row), row.Label)
			for _, t := range res.Plan.Workload.Threads {
				if cell, ok := findCell(res.Cells, row, t); ok && cell.CPUMicrosPerOp > 0 {
					fmt.Fprintf(&b, " %.2f µs |", cell.CPUMicrosPerOp)
				} else {
					b.WriteString(" — |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	var loads bool
	for _, l := range res.Loads {
		loads = loads || len(l.Nodes) > 0
	}
	if !loads && !nodes {
		return b.String()
	}
	b.WriteString("## Cluster nodes\n\n")
	if loads {
		b.WriteString("| backend | NUMA | node | slots | acknowledged | DBSIZE | log on device | sampled GETs (missed) | cpus |\n|:--|:--|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, l := range res.Loads {
			for _, n := range l.Nodes {
				ack := "skipped"
				if n.Acknowledged >= 0 {
					ack = fmt.Sprint(n.Acknowledged)
				}
				dev := "not tiered"
				if n.Tiered {
					dev = fmt.Sprintf("%.2f %%", 100*n.DeviceShare)
				}
				sample := "—"
				if n.Sample != nil {
					sample = fmt.Sprintf("%d (%d)", n.Sample.Keys, n.Sample.Missed)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %d | %s | %s | %s |\n", rowName(l.Row), l.Row.Label, n.Addr, n.Slots, ack, n.ServerKeys, dev, sample, orDash(n.Server.CPUs))
			}
		}
		b.WriteString("\n")
	}
	if nodes {
		b.WriteString("Each node's share of each cell (medians over the passes):\n\n")
		b.WriteString("| backend | NUMA | threads | node | ops/sec | device B/GET | device reads/GET | keys |\n|:--|:--|--:|:--|--:|--:|--:|--:|\n")
		for _, c := range res.Cells {
			for _, n := range c.Nodes {
				reads := "—" // counted by a scenario 3 server's INFO store only
				if c.Row.Backend == results.ScenarioLocalMemory {
					reads = fmt.Sprintf("%.2f", n.DeviceReadsPerGet)
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.0f | %s | %d |\n", rowName(c.Row), c.Row.Label, c.Threads, n.Addr, human.Ops(n.OpsPerSec), n.ReadBytesPerGet, reads, n.Keys)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
