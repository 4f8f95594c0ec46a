package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/results"
)

// What a mixed run (--workload) and a memory-tier sweep (--memory with
// more sizes than one) add to the table, report.md and the charts.

// Files of a sweep's charts.
const (
	FileSweepThroughputSVG = "sweep-throughput.svg"
	FileSweepDeviceSVG     = "sweep-device-share.svg"
)

// cellText is a shown cell in the table: its median ops/sec, then each
// operation's of a mix ("52.1K (GET 26.0K + SET 26.1K)") and the share of
// GETs that read the device of a sweep's cell ("dev 34 %").
func cellText(c results.Cell) string {
	s := human.Ops(c.Median)
	var extra []string
	if len(c.Mix) > 0 {
		parts := make([]string, len(c.Mix))
		for i, o := range c.Mix {
			parts[i] = o.Op + " " + human.Ops(o.OpsPerSec)
		}
		extra = append(extra, strings.Join(parts, " + "))
	}
	if c.Row.Memory != "" {
		extra = append(extra, deviceShareText(c))
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, "; ") + ")"
	}
	return s
}

// deviceShareText is a cell's measured share of GETs that read the
// device: the store's count when the server gave it, else device bytes
// per GET over a sector.
func deviceShareText(c results.Cell) string {
	if c.StoreCounted {
		return fmt.Sprintf("dev %.0f %%", 100*c.DeviceGetShare)
	}
	return fmt.Sprintf("dev ≈%.0f %% by bytes", 100*min(1, c.ReadBytesPerGet/results.SectorBytes))
}

// mixMarkdown is report.md's section of a mixed run: per cell, each
// operation's ops/sec, device bytes read per GET and written per SET, the
// log's growth and the share of GETs that read the device; "" for a run
// of GETs alone.
func mixMarkdown(res results.Results) string {
	if !results.IsMixed(res.Cells) {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Operations of the mix\n\n")
	fmt.Fprintf(&b, "Workload %s. Each cell's median over its passes: ops/sec of every operation and together; "+
		"device bytes read per GET (/proc/<pid>/io read_bytes ÷ the GETs and RMWs; a SET over a record on the device reads its header's sector too, so a mix that writes reads more per GET), "+
		"written per SET (write_bytes ÷ the SETs and RMWs; the log writes whole pages, so a short cell's figure is within a page of the truth), "+
		"the log's growth per second and per SET (Δ INFO store Log.TailAddress: one record per SET) and the share of GETs "+
		"the store served from its device (Δ INFO stats device_gets ÷ GETs; — for a server without these counters). "+
		"After each row's cells a mix that writes is checked again as the load was (rechecks.jsonl, below the table): DBSIZE exactly --dbsize, sampled keys answering values of the loaded length.\n\n",
		orDash(res.Plan.Workload.Workload))
	b.WriteString("| backend | NUMA | threads | ops/sec | per operation | device B/GET | written B/SET | log growth/s (B/SET) | GETs from device |\n|:--|:--|--:|--:|:--|--:|--:|--:|--:|\n")
	for _, c := range res.Cells {
		if c.Passes == 0 || len(c.Mix) == 0 {
			continue
		}
		per := make([]string, len(c.Mix))
		for i, o := range c.Mix {
			per[i] = o.Op + " " + human.Ops(o.OpsPerSec)
		}
		share, growth := "—", "—"
		if c.StoreCounted {
			share = fmt.Sprintf("%.1f %%", 100*c.DeviceGetShare)
			growth = human.Bytes(int64(c.LogGrowthPerSec)) + "/s"
			if sets := setsPerSec(c); sets > 0 {
				growth += fmt.Sprintf(" (%.0f)", c.LogGrowthPerSec/sets)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.0f | %.0f | %s | %s |\n", rowName(c.Row), c.Row.Label, c.Threads,
			human.Ops(c.Median), strings.Join(per, ", "), c.ReadBytesPerGet, c.WriteBytesPerSet, growth, share)
	}
	b.WriteString("\n")
	for _, rc := range res.Rechecks {
		fmt.Fprintf(&b, "- %s %s, after the mix: DBSIZE %d (loaded %d); %d sampled keys: %d missed, %d of the wrong length, %d errors",
			rowName(rc.Row), rc.Row.Label, rc.ServerKeys, rc.DBSize, rc.Sample.Keys, rc.Sample.Missed, rc.Sample.WrongLength, rc.Sample.Errors)
		if rc.Error != "" {
			b.WriteString(": REFUSED, " + rc.Error)
		}
		b.WriteString(".\n")
	}
	if len(res.Rechecks) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// setsPerSec is a mixed cell's median SETs and RMWs per second.
func setsPerSec(c results.Cell) float64 {
	var n float64
	for _, o := range c.Mix {
		if results.WritesOp(o.Op) {
			n += o.OpsPerSec
		}
	}
	return n
}

// isSweep says whether the plan's rows are a memory-tier sweep.
func isSweep(plan results.Plan) bool {
	for _, r := range plan.Rows {
		if r.Memory != "" {
			return true
		}
	}
	return false
}

// memoryShare is a sweep row's in-memory log ÷ the dataset; 0 unknown.
func memoryShare(row results.Row, w results.Workload) float64 {
	mem, err := size.Parse(row.Memory)
	if err != nil || w.DatasetBytes() <= 0 {
		return 0
	}
	return float64(mem) / float64(w.DatasetBytes())
}

// sweepMarkdown is report.md's section of a memory-tier sweep: per row
// (memory size) and thread count, ops/sec beside the measured share of
// GETs that read the device and the device bytes per GET.
func sweepMarkdown(res results.Results) string {
	if !isSweep(res.Plan) {
		return ""
	}
	w := res.Plan.Workload
	var b strings.Builder
	b.WriteString("## Memory-tier sweep\n\n")
	fmt.Fprintf(&b, "One dataset (%d keys, %s), %s keys, loaded afresh for each --memory size (the store does not recover its index from the log, so a restart would start empty). "+
		"No cell is kept out for being partly served from memory: each shows the share of its GETs the store served from the device (Δ INFO stats device_gets ÷ GETs) and the device bytes per GET (/proc/<pid>/io) beside its ops/sec.\n\n",
		w.DBSize, human.Bytes(w.DatasetBytes()), orDash(w.KeyDist))
	b.WriteString("| backend | NUMA | memory ÷ dataset | threads | ops/sec | GETs from device | device B/GET |\n|:--|:--|--:|--:|--:|--:|--:|\n")
	for _, c := range res.Cells {
		if c.Passes == 0 || c.Row.Memory == "" {
			continue
		}
		shown := human.Ops(c.Median)
		if c.Excluded != "" {
			shown = excludedMark[c.Excluded]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %.0f |\n", rowName(c.Row), c.Row.Label, percentText(memoryShare(c.Row, w)),
			c.Threads, shown, strings.TrimPrefix(deviceShareText(c), "dev "), c.ReadBytesPerGet)
	}
	b.WriteString("\n")
	return b.String()
}

// percentText writes a share with the digits a small one needs.
func percentText(v float64) string {
	switch {
	case v <= 0:
		return "—"
	case v < 0.1:
		return fmt.Sprintf("%.2f %%", 100*v)
	default:
		return fmt.Sprintf("%.0f %%", 100*v)
	}
}

// sweepCharts draws a sweep's throughput and device share against
// memory ÷ dataset, one line per backend × pin × thread count.
func sweepCharts(res results.Results) (throughput, device plots.Chart, ok bool) {
	type line struct {
		name     string
		ops, dev []plots.Point
	}
	var lines []*line
	byName := map[string]*line{}
	w := res.Plan.Workload
	for _, c := range res.Cells {
		x := memoryShare(c.Row, w)
		if c.Passes == 0 || c.Excluded != "" || c.Row.Memory == "" || x <= 0 {
			continue
		}
		base := c.Row
		base.Memory, base.Label = "", ""
		name := fmt.Sprintf("%s %s t=%d", rowName(base), base.Pin, c.Threads)
		l, found := byName[name]
		if !found {
			l = &line{name: name}
			byName[name] = l
			lines = append(lines, l)
		}
		// X is drawn on a log scale (the sizes span decades): log10 of the
		// percentage, each point's tick labelled with the percentage.
		lx := math.Log10(100 * x)
		l.ops = append(l.ops, plots.Point{X: lx, Y: c.Median})
		share := c.DeviceGetShare
		if !c.StoreCounted {
			share = min(1, c.ReadBytesPerGet/results.SectorBytes)
		}
		l.dev = append(l.dev, plots.Point{X: lx, Y: 100 * share})
	}
	if len(lines) == 0 {
		return plots.Chart{}, plots.Chart{}, false
	}
	var opsSeries, devSeries []plots.Series
	for _, l := range lines {
		opsSeries = append(opsSeries, plots.Series{Name: l.name, Points: l.ops})
		devSeries = append(devSeries, plots.Series{Name: l.name, Points: l.dev})
	}
	pctX := func(v float64) string {
		pct := math.Pow(10, v)
		if pct < 10 {
			return fmt.Sprintf("%.1f %%", pct)
		}
		return fmt.Sprintf("%.0f %%", pct)
	}
	throughput = plots.Chart{
		Title:  fmt.Sprintf("Throughput against the memory tier (run %s)", res.Plan.RunID),
		XLabel: "in-memory log ÷ dataset (%, log scale)", YLabel: "ops/sec (median of passes)",
		Series: opsSeries, XTicksAtPoints: true, XFormat: pctX,
	}
	device = plots.Chart{
		Title:  fmt.Sprintf("Share of GETs read from the device against the memory tier (run %s)", res.Plan.RunID),
		XLabel: "in-memory log ÷ dataset (%, log scale)", YLabel: "GETs served from the device (%)",
		Series: devSeries, XTicksAtPoints: true, XFormat: pctX,
	}
	return throughput, device, true
}

// writeSweepPlots draws a sweep's two charts into dir; none without a
// sweep.
func writeSweepPlots(dir string, res results.Results) ([]results.Plot, error) {
	ops, dev, ok := sweepCharts(res)
	if !ok {
		return nil, nil
	}
	if err := writeSVG(dir, FileSweepThroughputSVG, ops); err != nil {
		return nil, err
	}
	if err := writeSVG(dir, FileSweepDeviceSVG, dev); err != nil {
		return nil, err
	}
	return []results.Plot{
		{File: FileSweepThroughputSVG, Caption: "ops/sec against the in-memory log ÷ dataset, one line per row and thread count"},
		{File: FileSweepDeviceSVG, Caption: "share of GETs the store served from the device against the in-memory log ÷ dataset"},
	}, nil
}
