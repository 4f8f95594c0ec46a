package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/results"
)

// ThroughputChart is the table as a chart: GET ops/sec against client
// connections, one line per series, each ceiling a level across it.
func ThroughputChart(title string, series []plots.Series, ceilings []plots.Level) plots.Chart {
	return plots.Chart{
		Title:  title,
		XLabel: "client connections (threads)", YLabel: "GET ops/sec (median of passes)",
		Series: series, Levels: ceilings, XTicksAtPoints: true,
	}
}

// CeilingLevel is the fio ceiling as a chart level; none when unknown.
func CeilingLevel(of string, fioIOPS512 float64) []plots.Level {
	if fioIOPS512 <= 0 {
		return nil
	}
	return []plots.Level{{Name: fmt.Sprintf("fio 512 B random-read ceiling%s (%s IOPS)", of, human.Ops(fioIOPS512)), Y: fioIOPS512}}
}

// RowSeries is one row's line of the cells the table shows (cells kept
// out of the table are kept out of the chart), in thread order.
func RowSeries(name string, row results.Row, threads []int, cells []results.Cell) plots.Series {
	s := plots.Series{Name: name}
	for _, t := range threads {
		if c, ok := findCell(cells, row, t); ok && c.Passes > 0 && c.Excluded == "" {
			s.Points = append(s.Points, plots.Point{X: float64(t), Y: c.Median})
		}
	}
	return s
}

// writePlots draws the bundle's charts into dir and returns what it
// wrote. A bundle with no shown cell has no throughput chart.
func writePlots(dir string, res results.Results) ([]results.Plot, error) {
	var series []plots.Series
	for _, row := range res.Plan.Rows {
		if s := RowSeries(rowName(row)+" "+row.Label, row, res.Plan.Workload.Threads, res.Cells); len(s.Points) > 0 {
			series = append(series, s)
		}
	}
	var out []results.Plot
	if len(series) > 0 {
		chart := ThroughputChart(fmt.Sprintf("GET throughput against client connections (run %s)", res.Plan.RunID), series, CeilingLevel("", res.FioIOPS512))
		if err := writeSVG(dir, FileThroughputSVG, chart); err != nil {
			return nil, err
		}
		out = append(out, results.Plot{File: FileThroughputSVG, Caption: "GET ops/sec against client connections, one line per row, with the fio ceiling"})
	}
	sweep, err := writeSweepPlots(dir, res)
	if err != nil {
		return nil, err
	}
	out = append(out, sweep...)
	charts := latencyCharts(res)
	for _, row := range res.Plan.Rows {
		name := latencyChartName(row)
		chart, ok := charts[name]
		if !ok {
			continue
		}
		if err := writeSVG(dir, name, chart); err != nil {
			return nil, err
		}
		out = append(out, results.Plot{File: name, Latency: true,
			Caption: fmt.Sprintf("%s %s: GET latency p50, p99 and p99.9 against achieved ops/sec", rowName(row), row.Label)})
	}
	return out, nil
}

func writeSVG(dir, name string, chart plots.Chart) error {
	svg, err := chart.SVG()
	if err != nil {
		return fmt.Errorf("orchestrator: plot %s: %w", name, err)
	}
	return results.WriteFile(dir, name, svg)
}

// plotsMarkdown embeds the throughput charts, or the latency ones, in
// report.md.
func plotsMarkdown(ps []results.Plot, latency bool) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Latency == latency {
			fmt.Fprintf(&b, "![%s](%s)\n\n", p.Caption, p.File)
		}
	}
	return b.String()
}

// latencyCharts draws p50, p99 and p99.9 against achieved throughput,
// one chart per row that has steps or --slo probes (the bound drawn as a
// level), each line in the order of achieved rate.
func latencyCharts(res results.Results) map[string]plots.Chart {
	out := map[string]plots.Chart{}
	slo, sloErr := results.ParseSLO(res.Plan.Workload.SLO)
	for _, row := range res.Plan.Rows {
		var steps []results.LatencyRecord
		probes := false
		for _, l := range res.Latency {
			if l.Row == row && l.Floor == "" && l.AchievedOpsPerSec > 0 { // a step that sent nothing has no latency to draw; the floor is PING
				steps = append(steps, l)
				probes = probes || l.SLO != ""
			}
		}
		if len(steps) == 0 {
			continue
		}
		slices.SortStableFunc(steps, func(a, b results.LatencyRecord) int { return cmp.Compare(a.AchievedOpsPerSec, b.AchievedOpsPerSec) })
		var p50, p99, p999 []plots.Point
		for _, l := range steps {
			p50 = append(p50, plots.Point{X: l.AchievedOpsPerSec, Y: l.P50Micros})
			p99 = append(p99, plots.Point{X: l.AchievedOpsPerSec, Y: l.P99Micros})
			p999 = append(p999, plots.Point{X: l.AchievedOpsPerSec, Y: l.P999Micros})
		}
		x := "achieved GET ops/sec (offered 10–90 % of the best median)"
		var levels []plots.Level
		if probes && sloErr == nil {
			x = "achieved GET ops/sec (fixed-rate steps and --slo probes)"
			levels = []plots.Level{{Name: "--slo bound: " + slo.Title(), Y: slo.BoundMicros}}
		}
		out[latencyChartName(row)] = plots.Chart{
			Title:  fmt.Sprintf("GET latency against throughput, %s %s", rowName(row), row.Label),
			XLabel: x, YLabel: "latency from intended send time",
			LogY: true, YFormat: plots.FormatMicros, Levels: levels,
			Series: []plots.Series{{Name: "p50", Points: p50}, {Name: "p99", Points: p99}, {Name: "p99.9", Points: p999}},
		}
	}
	return out
}

// FileThroughputSVG is the bundle's throughput chart.
const FileThroughputSVG = "throughput.svg"
