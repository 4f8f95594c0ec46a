package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/keyspace"
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
	if sweepRow(c.Row) {
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
		s := fmt.Sprintf("dev %.0f %%", 100*c.DeviceGetShare)
		if c.Row.ReadCache != "" {
			s += fmt.Sprintf(", cache %.0f %%", 100*c.CacheHitShare)
		}
		return s
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
	fmt.Fprintf(&b, "Workload %s.\n\n", orDash(res.Plan.Workload.Mix))
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
		if sweepRow(r) {
			return true
		}
	}
	return false
}

// sweepRow says whether row is a size of a memory-tier sweep: of the
// in-memory log (--memory) or of the read cache (--readcache-memory).
func sweepRow(row results.Row) bool { return row.Memory != "" || row.ReadCache != "" }

// memoryShare is a sweep row's memory tier ÷ the dataset: the in-memory
// log and the read cache together; 0 unknown.
func memoryShare(row results.Row, w results.Workload) float64 {
	mem, err := size.Parse(cmp.Or(row.Memory, w.Memory))
	if err != nil || w.DatasetBytes() <= 0 {
		return 0
	}
	if row.ReadCache != "" {
		rc, err := size.Parse(row.ReadCache)
		if err != nil {
			return 0
		}
		mem += rc
	}
	return float64(mem) / float64(w.DatasetBytes())
}

// idealDeviceShare is the share of GETs that the best cache holding the
// given share of the dataset must still send to the device: 1 − the mass
// of the hottest share × dbsize keys of the run's key distribution
// (keyspace.Sampler.TopMass). ok is false when the distribution or sizes
// are unknown.
func idealDeviceShare(w results.Workload, share float64) (float64, bool) {
	if w.DBSize <= 0 || share <= 0 {
		return 0, false
	}
	d := keyspace.Dist{} // uniform, as before --key-dist
	if w.KeyDist != "" {
		var err error
		if d, err = keyspace.ParseDist(w.KeyDist); err != nil {
			return 0, false
		}
	}
	c := uint64(min(share, 1) * float64(w.DBSize))
	return 1 - d.Sampler(uint64(w.DBSize)).TopMass(c), true
}

// measuredDeviceShare is a sweep cell's share of GETs from the device:
// the store's count, else device bytes per GET over a sector.
func measuredDeviceShare(c results.Cell) float64 {
	if c.StoreCounted {
		return c.DeviceGetShare
	}
	return min(1, c.ReadBytesPerGet/results.SectorBytes)
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
	fmt.Fprintf(&b, "One dataset (%d keys, %s), %s keys, loaded afresh for each size of the memory tier.\n\n",
		w.DBSize, human.Bytes(w.DatasetBytes()), orDash(w.KeyDist))
	b.WriteString("| backend | NUMA | memory ÷ dataset | threads | ops/sec | GETs from device | best cache | measured ÷ best | device B/GET |\n|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range res.Cells {
		if c.Passes == 0 || !sweepRow(c.Row) {
			continue
		}
		shown := human.Ops(c.Median)
		switch c.Excluded {
		case "":
		case results.ExcludedMemoryServed:
			shown += " (memory-served)"
		default:
			shown = excludedMark[c.Excluded]
		}
		x := memoryShare(c.Row, w)
		best, ratio := "—", "—"
		if ideal, ok := idealDeviceShare(w, x); ok {
			best = fmt.Sprintf("%.1f %%", 100*ideal)
			if ideal > 0 {
				ratio = fmt.Sprintf("%.2f", measuredDeviceShare(c)/ideal)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %.0f |\n", rowName(c.Row), c.Row.Label, percentText(x),
			c.Threads, shown, strings.TrimPrefix(deviceShareText(c), "dev "), best, ratio, c.ReadBytesPerGet)
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
	var xs []float64 // the memory shares of the drawn cells
	for _, c := range res.Cells {
		x := memoryShare(c.Row, w)
		if c.Passes == 0 || (c.Excluded != "" && c.Excluded != results.ExcludedMemoryServed) || !sweepRow(c.Row) || x <= 0 {
			continue
		}
		xs = append(xs, x)
		base := c.Row
		base.Memory, base.ReadCache, base.Label = "", "", ""
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
		l.dev = append(l.dev, plots.Point{X: lx, Y: 100 * measuredDeviceShare(c)})
	}
	if len(lines) == 0 {
		return plots.Chart{}, plots.Chart{}, false
	}
	var opsSeries, devSeries []plots.Series
	for _, l := range lines {
		opsSeries = append(opsSeries, plots.Series{Name: l.name, Points: l.ops})
		devSeries = append(devSeries, plots.Series{Name: l.name, Points: l.dev})
	}
	if ideal := idealCurve(w, xs); len(ideal) > 0 {
		devSeries = append(devSeries, plots.Series{Name: "best cache of that memory", Points: ideal, Dashed: true})
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
		XLabel: "memory tier (log + read cache) ÷ dataset (%, log scale)", YLabel: "ops/sec (median of passes)",
		Series: opsSeries, XTicksAtPoints: true, XFormat: pctX,
	}
	device = plots.Chart{
		Title:  fmt.Sprintf("Share of GETs read from the device against the memory tier (run %s)", res.Plan.RunID),
		XLabel: "memory tier (log + read cache) ÷ dataset (%, log scale)", YLabel: "GETs served from the device (%)",
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
		{File: FileSweepThroughputSVG, Caption: "ops/sec against the memory tier (log + read cache) ÷ dataset, one line per row and thread count"},
		{File: FileSweepDeviceSVG, Caption: "share of GETs the store served from the device against the memory tier ÷ dataset, beside the best cache of that memory (dashed)"},
	}, nil
}

// idealCurvePoints is how many points the best cache's curve has between
// the sweep's smallest and largest memory, on the chart's log scale.
const idealCurvePoints = 12

// idealCurve is the best cache's device share, in percent, from the
// smallest to the largest of the memory shares xs, at log-spaced points
// and at each x itself; nil when it is unknown.
func idealCurve(w results.Workload, xs []float64) []plots.Point {
	if len(xs) == 0 {
		return nil
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	at := slices.Clone(xs)
	if hi > lo {
		for i := range idealCurvePoints {
			at = append(at, lo*math.Pow(hi/lo, float64(i)/float64(idealCurvePoints-1)))
		}
	}
	slices.Sort(at)
	at = slices.Compact(at)
	var pts []plots.Point
	for _, x := range at {
		ideal, ok := idealDeviceShare(w, x)
		if !ok {
			return nil
		}
		pts = append(pts, plots.Point{X: math.Log10(100 * x), Y: 100 * ideal})
	}
	return pts
}
