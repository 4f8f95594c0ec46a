package orchestrator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/internal/testenv"
)

// TestReportPlots renders the reference fixtures' bundle and checks the
// throughput chart: in results.json and embedded in report.md, well-formed
// XML whose texts and element counts match the golden file, one legend
// line per row and the ceiling, and a rendering that is not blank.
func TestReportPlots(t *testing.T) {
	dir := writeBundle(t, true)
	if _, err := render(dir); err != nil {
		t.Fatal(err)
	}
	var res Results
	if err := readJSON(dir, fileResults, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Plots) != 1 || res.Plots[0].File != fileThroughputSVG {
		t.Fatalf("results.json plots: got %+v, want one, %s", res.Plots, fileThroughputSVG)
	}
	report, err := os.ReadFile(filepath.Join(dir, fileReport))
	if err != nil {
		t.Fatal(err)
	}
	if want := "](" + fileThroughputSVG + ")"; !strings.Contains(string(report), want) {
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
	svg, _ := os.ReadFile(filepath.Join(dir, fileThroughputSVG))
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
	res.Cells = []Cell{{Row: res.Plan.Rows[0], Threads: 8, Passes: 3, Median: 1, Excluded: excludedMisses}}
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
