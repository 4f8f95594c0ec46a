package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/results"
)

// TestCellText: a GET cell shows its ops/sec alone, as before; a mixed
// cell each operation's beside it; a sweep's cell its device share.
func TestCellText(t *testing.T) {
	for _, tt := range []struct {
		cell results.Cell
		want string
	}{
		{results.Cell{Median: 172000}, "172 K"},
		{results.Cell{Median: 52000, CellMix: results.CellMix{Mix: []results.OpRate{{Op: "GET", OpsPerSec: 26000}, {Op: "SET", OpsPerSec: 26000}}}}, "52 K (GET 26 K + SET 26 K)"},
		{results.Cell{Row: results.Row{Memory: "32m"}, Median: 160000, CellMix: results.CellMix{StoreCounted: true, DeviceGetShare: 0.93}}, "160 K (dev 93 %)"},
		{results.Cell{Row: results.Row{Memory: "32m"}, Median: 160000, ReadBytesPerGet: 256}, "160 K (dev ≈50 % by bytes)"},
	} {
		if got := cellText(tt.cell); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

// TestSweepCharts: a sweep's cells become two charts against memory ÷
// dataset, one line per thread count with a point per size, the device
// share in percent; a run without a sweep has none.
func TestSweepCharts(t *testing.T) {
	w := results.Workload{DBSize: 1 << 20, KeyLength: 16, ValueLength: 96, Threads: []int{4, 16}, Passes: 1}
	plan := results.Plan{RunID: "r", Workload: w}
	var cells []results.Cell
	for i, m := range []string{"4m", "32m", "128m"} {
		row := results.Row{Backend: "libaio", Pin: "none", Memory: m, Label: "--memory " + m + ", no pin"}
		plan.Rows = append(plan.Rows, row)
		for _, th := range w.Threads {
			cells = append(cells, results.Cell{Row: row, Threads: th, Passes: 1, Median: float64(100000 * (i + 1)),
				CellMix: results.CellMix{StoreCounted: true, DeviceGetShare: 1 - 0.4*float64(i)}})
		}
	}
	ops, dev, ok := sweepCharts(results.Results{Plan: plan, Cells: cells})
	if !ok || len(ops.Series) != 2 || len(dev.Series) != 3 {
		t.Fatalf("got ok %v, %d and %d series, want two charts of 2 lines, the device share's with the best cache's beside", ok, len(ops.Series), len(dev.Series))
	}
	// Uniform keys: the best cache of a share x of the data misses 1 − x.
	ideal := dev.Series[2]
	if !ideal.Dashed || len(ideal.Points) < 3 {
		t.Fatalf("best cache's curve: got %+v, want a dashed line of the sweep's points and more", ideal)
	}
	for _, p := range ideal.Points {
		if x := math.Pow(10, p.X) / 100; math.Abs(p.Y-100*(1-x)) > 1e-3 {
			t.Errorf("best cache at %.4f of the data: got %.4f %%, want %.4f %%", x, p.Y, 100*(1-x))
		}
	}
	// 4 MiB of a 128 MiB dataset (1 Mi keys × 128 B) is 3.125 %, drawn
	// at its log10 and labelled as the percentage.
	if got := dev.Series[0].Points; len(got) != 3 || got[0] != (plots.Point{X: math.Log10(3.125), Y: 100}) || got[2].Y > 20.0001 || got[2].Y < 19.9999 {
		t.Errorf("device share line: got %v, want 3 points from (log10 3.125, 100 %%) down to 20 %%", got)
	}
	if got := dev.XFormat(math.Log10(3.125)); got != "3.1 %" {
		t.Errorf("X tick of 3.125 %%: got %q, want 3.1 %%", got)
	}
	for _, c := range []plots.Chart{ops, dev} {
		if _, err := c.SVG(); err != nil {
			t.Errorf("%s: %v", c.Title, err)
		}
	}
	md := sweepMarkdown(results.Results{Plan: plan, Cells: cells})
	if !strings.Contains(md, "| Libaio | --memory 4m, no pin | 3.12 % | 4 | 100 K | 100 % | 96.9 % | 1.03 |") {
		t.Errorf("sweep section: got\n%s\nwant the 4m row at 3.12 %% of the data, the best cache's 96.9 %% and the ratio", md)
	}
	if _, _, ok := sweepCharts(results.Results{Plan: results.Plan{Workload: w}}); ok {
		t.Errorf("no cells: got a chart, want none")
	}
}

// TestReadCacheSweep: a read cache's sizes add to the run's --memory on
// the X axis, the best cache follows the key distribution (zipf θ 0.99
// over 2.7 M keys: 16 % at 10 % of the data), and a cell its cache
// serves shows its ops/sec marked memory-served; each names its cache's
// hit share.
func TestReadCacheSweep(t *testing.T) {
	w := results.Workload{DBSize: 2_700_000, KeyLength: 16, ValueLength: 96, Threads: []int{4}, Passes: 1, KeyDist: "zipf:0.99", Memory: "0"}
	plan := results.Plan{RunID: "r", Workload: w}
	dataset := w.DatasetBytes()
	var cells []results.Cell
	for i, share := range []float64{0.1, 0.4, 1.2} {
		rc := fmt.Sprintf("%dk", int64(share*float64(dataset))>>10)
		row := results.Row{Backend: "libaio", Pin: "none", ReadCache: rc, Label: "--readcache-memory " + rc + ", no pin"}
		plan.Rows = append(plan.Rows, row)
		c := results.Cell{Row: row, Threads: 4, Passes: 1, Median: float64(100000 * (i + 1)),
			CellMix: results.CellMix{StoreCounted: true, DeviceGetShare: []float64{0.18, 0.07, 0}[i], CacheHitShare: []float64{0.82, 0.93, 1}[i]}}
		if i == 2 {
			c.Excluded = results.ExcludedMemoryServed
		}
		cells = append(cells, c)
	}
	res := results.Results{Plan: plan, Cells: cells}
	md := sweepMarkdown(res)
	for _, want := range []string{"| 10 % | 4 | 100 K | 18 %, cache 82 % | 16.0 % | 1.13 |", "| 40 % | 4 | 200 K | 7 %, cache 93 % | 6.4 % | 1.09 |", "| 300 K (memory-served) | 0 %, cache 100 % | 0.0 % | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("sweep section: got\n%s\nwant a row with %q", md, want)
		}
	}
	_, dev, ok := sweepCharts(res)
	if !ok || len(dev.Series) != 2 || len(dev.Series[0].Points) != 3 {
		t.Fatalf("got ok %v, %+v; want the measured line with all three cells and the best cache's", ok, dev.Series)
	}
}
