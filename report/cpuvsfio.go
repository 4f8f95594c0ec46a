package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

// CPUAgainstFioBar is the seed's bar for the server's CPU per GET against
// fio's CPU per read on the same CPUs at the same depth: a tiered GET is a
// device read plus a little.
const CPUAgainstFioBar = 1.1

// fioSpent is what fio spent per read at a depth: in all and in the
// kernel (0 when fio's system share was not kept).
type fioSpent struct {
	micros, systemMicros float64
	depth                int
}

// fioAtDepth is what fio spent per read nearest a cell's disk depth: the
// re-measurement at the cell's own depth when there is one, else the
// point of the row's depth curve closest to it (by ratio: 240 is nearer
// 256 than 128). ok is false when neither says.
func fioAtDepth(res results.Results, curve *hostcheck.FIOBaseline, c results.Cell) (spent fioSpent, remeasured, ok bool) {
	for _, r := range res.Ceilings {
		if r.Row == c.Row && r.Threads == c.Threads && r.Error == "" && r.CPUMicrosPerRead > 0 {
			return fioSpent{r.CPUMicrosPerRead, r.CPUSystemMicrosPerRead, r.Depth}, true, true
		}
	}
	if curve == nil || c.DiskQueueDepth <= 0 {
		return fioSpent{}, false, false
	}
	bestDist := math.Inf(1)
	for _, p := range curve.Sweep {
		cpu := curve.PointCPU(p)
		if cpu.MicrosPerRead <= 0 || p.Depth <= 0 {
			continue
		}
		if d := math.Abs(math.Log(float64(p.Depth) / c.DiskQueueDepth)); d < bestDist {
			bestDist, spent, ok = d, fioSpent{cpu.MicrosPerRead, cpu.SystemMicrosPerRead, p.Depth}, true
		}
	}
	return spent, false, ok
}

// inKernel is ", kernel N" for a figure whose system part is known,
// else "".
func inKernel(systemMicros float64) string {
	if systemMicros <= 0 {
		return ""
	}
	return fmt.Sprintf(", kernel %.1f", systemMicros)
}

// fioAt is "fio[ ENGINE] µs[, kernel µs][,] at DEPTH", the comma before
// "at" only where a kernel part sits between.
func fioAt(engine string, micros, systemMicros float64, depth int) string {
	name := "fio"
	if engine != "" {
		name += " " + engine
	}
	if k := inKernel(systemMicros); k != "" {
		return fmt.Sprintf("%s %.1f%s, at %d", name, micros, k, depth)
	}
	return fmt.Sprintf("%s %.1f at %d", name, micros, depth)
}

// cpuAgainstFio is report.md's table of each cell's server CPU per GET
// beside fio's CPU per read on the row's own CPUs (the pinned curve for a
// pinned row) at the cell's depth: the share of the ceiling says whether
// the server kept up with the disk, this says what it paid for it. Empty
// without a curve or server CPU figures.
func cpuAgainstFio(res results.Results, preRaw []byte) string {
	host, pinned := FIOBaseline(preRaw), FIOPinned(preRaw)
	threads := res.Plan.Workload.Threads
	var rows strings.Builder
	some := false
	for _, row := range res.Plan.Rows {
		curve := host
		if row.Pin == results.PinPinned && pinned != nil && len(pinned.Sweep) > 0 {
			curve = pinned
		}
		var line strings.Builder
		filled := false
		fmt.Fprintf(&line, "| %s | %s |", rowName(row), row.Label)
		for _, t := range threads {
			c, ok := findCell(res.Cells, row, t)
			if !ok || c.Excluded != "" || c.ServerCPUMicrosPerGet <= 0 {
				line.WriteString(" — |")
				continue
			}
			spent, again, ok := fioAtDepth(res, curve, c)
			own, ownOK := results.FioCPUFor(res.FioCPU, row, t)
			server := fmt.Sprintf("%.1f µs%s", c.ServerCPUMicrosPerGet, inKernel(c.ServerSystemMicrosPerGet))
			if !ok && !ownOK {
				fmt.Fprintf(&line, " %s |", server)
				continue
			}
			filled = true
			at := fioAt("", spent.micros, spent.systemMicros, spent.depth)
			if again {
				at += ", measured again"
			}
			ref, beside := spent.micros, ""
			if ownOK {
				// Held against fio at the cell's own depth through the
				// row's own interface; the curve's figure stands beside
				// it when the interfaces differ.
				if ok && curve != nil && curve.Engine != own.Engine {
					beside = fmt.Sprintf(" · %s %s: %.2f ×", curve.Engine, at, c.ServerCPUMicrosPerGet/spent.micros)
				}
				ref, at = own.CPUMicrosPerRead, fioAt(own.Engine, own.CPUMicrosPerRead, own.CPUSystemMicrosPerRead, own.Depth)
			}
			ratio := c.ServerCPUMicrosPerGet / ref
			mark := ""
			if ratio > CPUAgainstFioBar {
				mark = " **over**"
			}
			fmt.Fprintf(&line, " %s (%s): %.2f ×%s%s |", server, at, ratio, mark, beside)
		}
		if filled {
			some = true
			rows.WriteString(line.String() + "\n")
		}
	}
	if !some {
		return ""
	}
	var b strings.Builder
	b.WriteString("Server CPU per GET against fio's CPU per read on the row's CPUs at the cell's depth, and their ratio:\n\n")
	b.WriteString("| backend | NUMA |")
	for _, t := range threads {
		fmt.Fprintf(&b, " t=%d |", t)
	}
	b.WriteString("\n|:--|:--|" + strings.Repeat(":--|", len(threads)) + "\n")
	b.WriteString(rows.String())
	b.WriteString("\n")
	return b.String()
}
