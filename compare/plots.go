package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/report"
)

// Chart is one figure of a comparison and the file it is written to.
type Chart struct {
	File    string
	Caption string
	Chart   plots.Chart
}

// Charts draws, per scenario and row, GET throughput against client
// connections with one line per bundle, and each bundle's fio ceiling
// (one line when they agree).
func (c *Comparison) Charts() []Chart {
	var out []Chart
	for _, s := range c.Scenarios {
		type rowID struct {
			backend, pin, hosts, server string
			batch, shards               int
		}
		var rows []rowID
		byRow := map[rowID][]CellCmp{}
		for _, cell := range s.Cells {
			id := rowID{cell.Backend, cell.Pin, cell.Hosts, cell.Server, cell.Batch, cell.Shards}
			if byRow[id] == nil {
				rows = append(rows, id)
			}
			byRow[id] = append(byRow[id], cell)
		}
		for _, id := range rows {
			cells := byRow[id]
			var series []plots.Series
			for i, b := range c.Bundles {
				sr := plots.Series{Name: b.Name, Dashed: i%2 == 1}
				for _, cell := range cells {
					if v := cell.Values[i]; v.Present && v.Excluded == "" {
						sr.Points = append(sr.Points, plots.Point{X: float64(cell.Threads), Y: v.Median})
					}
				}
				if len(sr.Points) > 0 {
					series = append(series, sr)
				}
			}
			if len(series) == 0 {
				continue
			}
			label := cellName(cells[0]) + " " + cells[0].Label
			out = append(out, Chart{
				File:    chartFile(s.Name, cells[0]),
				Caption: fmt.Sprintf("%s %s: GET ops/sec against client connections, one line per bundle", s.Name, label),
				Chart: report.ThroughputChart(fmt.Sprintf("GET throughput, %s, %s", s.Name, label),
					series, c.ceilings()),
			})
		}
	}
	return out
}

// ceilings is one level per distinct fio ceiling of the bundles.
func (c *Comparison) ceilings() []plots.Level {
	var distinct []BundleInfo
	for _, b := range c.Bundles {
		if b.FioIOPS512 <= 0 {
			continue
		}
		dup := false
		for _, d := range distinct {
			dup = dup || d.FioIOPS512 == b.FioIOPS512
		}
		if !dup {
			distinct = append(distinct, b)
		}
	}
	var out []plots.Level
	for _, b := range distinct {
		of := ""
		if len(distinct) > 1 {
			of = " of " + b.Name
		}
		out = append(out, report.CeilingLevel(of, b.FioIOPS512)...)
	}
	return out
}

// WritePlots writes the charts as SVG files into dir (created) and
// returns the Markdown that embeds them, with paths as dir gives them.
func (c *Comparison) WritePlots(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("compare: plots: %w", err)
	}
	var b strings.Builder
	for _, ch := range c.Charts() {
		svg, err := ch.Chart.SVG()
		if err != nil {
			return "", fmt.Errorf("compare: plot %s: %w", ch.File, err)
		}
		path := filepath.Join(dir, ch.File)
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			return "", fmt.Errorf("compare: plot: %w", err)
		}
		fmt.Fprintf(&b, "![%s](%s)\n\n", ch.Caption, filepath.ToSlash(path))
	}
	return b.String(), nil
}

// chartFile names a row's chart: the scenario, backend and pin, and the
// row's -b, shard count and hosts when it has them, so that two rows never
// share a file.
func chartFile(scenario string, c CellCmp) string {
	name := fmt.Sprintf("compare-%s-%s-%s", scenario, c.Backend, c.Pin)
	if c.Server != "" {
		name = fmt.Sprintf("compare-%s-%s-%s-%s", scenario, c.Server, c.Backend, c.Pin)
	}
	if c.Batch > 0 {
		name += fmt.Sprintf("-b%d", c.Batch)
	}
	if c.Shards > 1 {
		name += fmt.Sprintf("-shards%d", c.Shards)
	}
	if c.Hosts != "" {
		name += "-" + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
				return r
			}
			return '_'
		}, c.Hosts)
	}
	return name + ".svg"
}
