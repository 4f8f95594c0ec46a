package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// TestReportPlots renders the reference fixtures' bundle and checks the
// throughput chart: in results.json and embedded in report.md, well-formed
// XML whose texts and element counts match the golden file, one legend
// line per row and the ceiling, and a rendering that is not blank.
func TestReportPlots(t *testing.T) {
	dir, res := renderedBundle(t)
	if len(res.Plots) != 1 || res.Plots[0].File != FileThroughputSVG {
		t.Fatalf("results.json plots: got %+v, want one, %s", res.Plots, FileThroughputSVG)
	}
	report, err := os.ReadFile(filepath.Join(dir, results.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	if want := "](" + FileThroughputSVG + ")"; !strings.Contains(string(report), want) {
		t.Errorf("report.md lacks the embedded chart %q", want)
	}
	for _, svgPath := range bundleSVGs(t, dir) {
		svg, err := os.ReadFile(svgPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := plots.CheckXML(svg); err != nil {
			t.Fatalf("%s: %v", svgPath, err)
		}
		if share := testenv.InkShare(testenv.MustRenderSVG(t, svgPath)); share < 0.02 || share > 0.5 {
			t.Errorf("%s: got %.3f of the pixels inked, want between 0.02 (not blank) and 0.5", svgPath, share)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, FileThroughputSVG))
	texts, elements, err := plots.Structure(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Libaio srv node-0 / cli node-1", "Libaio no pin", "Uring srv node-0 / cli node-1", "Uring no pin",
		"fio 512 B random-read ceiling (8.20 M IOPS)", "client connections (threads)", "GET ops/sec (median of passes)"} {
		if !slices.Contains(texts, want) {
			t.Errorf("throughput.svg: got texts %q, want %q among them", texts, want)
		}
	}
	got, _ := json.MarshalIndent(map[string]any{"texts": texts, "elements": elements}, "", "  ")
	testenv.MustMatchGolden(t, filepath.Join("testdata", "throughput.golden.json"), append(got, '\n'), *update)

	// A bundle whose every cell is kept out of the table has no chart.
	res.Cells = []results.Cell{{Row: res.Plan.Rows[0], Threads: 8, Passes: 3, Median: 1, Excluded: results.ExcludedMisses}}
	empty := t.TempDir()
	ps, err := writePlots(empty, res)
	if err != nil || len(ps) != 0 {
		t.Errorf("writePlots with every cell excluded: got %v, %v; want no plot, no error", ps, err)
	}
}

// bundleSVGs lists every SVG of a bundle.
func bundleSVGs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".svg") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("bundle %s holds no SVG", dir)
	}
	return out
}

// TestLatencyReportClientBound: a step whose client sent late is marked
// client-bound in the table and keyed once below it; each step shows its
// lateness p99, with the client's own part beside it where the client
// measured it apart, and with the row's floor measured, the floor comes
// first and each step shows its p50 above it. What the columns mean is
// docs/methodology.md's, not repeated here.
func TestLatencyReportClientBound(t *testing.T) {
	steps := bundletest.LatencySteps(referencePlan())
	steps[0].Pacing = &results.Pacing{LatenessP50Micros: 40, LatenessP99Micros: 900, Due: 1000, ClientBound: true}
	own := 12.0
	steps[1].Pacing = &results.Pacing{LatenessP50Micros: 2, LatenessP99Micros: 1500, OwnLatenessP99Micros: &own, Due: 1000}
	floor := steps[0]
	floor.Floor, floor.Share, floor.P50Micros, floor.P99Micros, floor.Pacing = "PING", 0, 30, 80, &results.Pacing{LatenessP99Micros: 4, Due: 1000}
	got := latencyMarkdown(results.Results{Plan: referencePlan(), Latency: append([]results.LatencyRecord{floor}, steps...)})
	for _, want := range []string{
		"| Libaio | srv node-0 / cli node-1 | floor: PING at 800 K | 800 K | 30 µs | — | 80 µs | 900 µs | 5 ms | 4 µs |",
		"| Libaio | srv node-0 / cli node-1 | 800 K (10 %) | 800 K client-bound† | 90 µs | 60 µs | 300 µs | 900 µs | 5 ms | 900 µs |",
		"| Libaio | srv node-0 / cli node-1 | 2.00 M (25 %) | 2.00 M | 180 µs | 150 µs | 1.2 ms | 3.6 ms | 10 ms | 1.5 ms (own 12 µs) |",
		"client-bound†: the client sent late.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("latency section lacks %q:\n%s", want, got)
		}
	}
	for _, definition := range []string{"(own) is the client's part alone", "Before its GET steps", "Steal is the share"} {
		if strings.Contains(got, definition) {
			t.Errorf("latency section repeats the definition %q:\n%s", definition, got)
		}
	}
	if n := strings.Count(got, "client-bound†"); n != 2 {
		t.Errorf("got %d client-bound marks, want the one step and the note:\n%s", n, got)
	}
}

// TestLatencyReport renders a bundle with latency steps: the table with
// the reference's columns, the short step named, the chart embedded,
// parsed, rendered and not blank, and --verify covering the steps.
func TestLatencyReport(t *testing.T) {
	dir := writeBundle(t, true)
	for _, rec := range bundletest.LatencySteps(referencePlan()) {
		if err := results.AppendJSONL(dir, results.FileLatency, rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := render(dir, nil); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(dir, results.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Latency under load",
		"| backend | NUMA | offered | achieved | p50 | p50 above floor | p99 | p99.9 | max | sends late p99 |",
		// A bundle from before the floor and the client's pacing: dashes.
		"| Libaio | srv node-0 / cli node-1 | 800 K (10 %) | 800 K | 90 µs | — | 300 µs | 900 µs | 5 ms | — |",
		"| Libaio | srv node-0 / cli node-1 | 7.20 M (90 %) | 6.48 M short* | 450 µs | — | 7.5 ms | 22.5 ms | 25 ms | — |",
		"short*: under 95 % of the offered rate achieved.",
		"](latency-libaio-pinned.svg)",
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(report), "client-bound") {
		t.Errorf("report.md marks a step client-bound though no step recorded its pacing")
	}
	svgPath := filepath.Join(dir, "latency-libaio-pinned.svg")
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := plots.CheckXML(svg); err != nil {
		t.Fatal(err)
	}
	texts, _, err := plots.Structure(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p50", "p99", "p99.9", "latency from intended send time", "1 ms", "10 ms"} {
		if !slices.Contains(texts, want) {
			t.Errorf("latency chart: got texts %q, want %q among them", texts, want)
		}
	}
	if share := testenv.InkShare(testenv.MustRenderSVG(t, svgPath)); share < 0.02 || share > 0.5 {
		t.Errorf("latency chart: got %.3f of the pixels inked, want between 0.02 and 0.5", share)
	}
	var out bytes.Buffer
	if err := runReport(dir, true, &out); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	edit(t, dir, results.FileLatency, func(b []byte) []byte { return bytes.Replace(b, []byte(`"p99_us":300`), []byte(`"p99_us":200`), 1) })
	if err := runReport(dir, true, &out); err == nil || !strings.Contains(err.Error(), "latency.jsonl was edited") {
		t.Errorf("verify after editing a step: got %v, want latency.jsonl named", err)
	}
}

// TestLatencyReportHostColumns: each step shows what its window lost to
// the host, steal and, where the client measured them, freezes; a step
// with a noticeable share is marked and the mark explained once, naming
// its tail partly the host's; a bundle without the measurement has no
// column.
func TestLatencyReportHostColumns(t *testing.T) {
	tests := []struct {
		column, mark string
		low, high    float64
		set          func(r *results.LatencyRecord, share *float64)
		lowCell      string
		highCell     string
		notes        []string
	}{
		{"steal", "‡", 0.001, 0.012, func(r *results.LatencyRecord, s *float64) { r.HostStealShare = s }, "0.1 %", "1.2 % ‡",
			[]string{"‡: steal of 0.5 % or more."}},
		{"frozen", "§", 0.0004, 0.045, func(r *results.LatencyRecord, s *float64) { r.HostFrozenShare = s }, "0.0 %", "4.5 % §",
			[]string{"§: frozen 0.5 % or more."}},
	}
	for _, tc := range tests {
		t.Run(tc.column, func(t *testing.T) {
			steps := bundletest.LatencySteps(referencePlan())
			tc.set(&steps[0], &tc.low)
			tc.set(&steps[1], &tc.high)
			got := latencyMarkdown(results.Results{Plan: referencePlan(), Latency: steps})
			for _, want := range append([]string{
				"| max | sends late p99 | " + tc.column + " |",
				"| 800 K (10 %) | 800 K | 90 µs | — | 300 µs | 900 µs | 5 ms | — | " + tc.lowCell + " |",
				"| 2.00 M (25 %) | 2.00 M | 180 µs | — | 1.2 ms | 3.6 ms | 10 ms | — | " + tc.highCell + " |",
			}, tc.notes...) {
				if !strings.Contains(got, want) {
					t.Errorf("latency section lacks %q:\n%s", want, got)
				}
			}
			if n := strings.Count(got, tc.mark); n != 2 {
				t.Errorf("got %d %s marks, want the one step and the note:\n%s", n, tc.mark, got)
			}
			tc.set(&steps[0], nil)
			tc.set(&steps[1], nil)
			if got := latencyMarkdown(results.Results{Plan: referencePlan(), Latency: steps}); strings.Contains(got, "| "+tc.column+" |") {
				t.Errorf("a bundle without %s has its column:\n%s", tc.column, got)
			}
		})
	}
}
