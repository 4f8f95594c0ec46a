package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/perf/benchfmt"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// TestExportCSV: one line per measured cell, its median as results.json
// has it.
func TestExportCSV(t *testing.T) {
	dir, res := renderedBundle(t)
	var out bytes.Buffer
	if err := Export(dir, "csv", &out, "", false); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var want []results.Cell
	for _, c := range res.Cells {
		if c.Passes > 0 {
			want = append(want, c)
		}
	}
	if len(recs)-1 != len(want) {
		t.Fatalf("got %d lines, want %d cells", len(recs)-1, len(want))
	}
	for i, c := range want {
		line := recs[i+1]
		got, err := strconv.ParseFloat(line[col["median_ops_per_sec"]], 64)
		if err != nil || got != c.Median || line[col["backend"]] != c.Row.Backend || line[col["threads"]] != strconv.Itoa(c.Threads) || line[col["excluded"]] != c.Excluded {
			t.Errorf("line %d: got %q, want %s t=%d median %v excluded %q", i+1, line, c.Row.Backend, c.Threads, c.Median, c.Excluded)
		}
	}
}

// TestExportBenchfmt parses the export with golang.org/x/perf/benchfmt:
// one result per counted pass of every cell in the table, its GET/s the
// pass's; then the real benchstat sets two bundles side by side.
func TestExportBenchfmt(t *testing.T) {
	dir, res := renderedBundle(t)
	var out bytes.Buffer
	if err := Export(dir, "benchfmt", &out, "", false); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(bytes.NewReader(out.Bytes()), "export")
	got := map[string][]float64{}
	runID := ""
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			v, ok := rec.Value("GET/s")
			if !ok {
				t.Fatalf("%s: no GET/s", rec.Name)
			}
			got[string(rec.Name)] = append(got[string(rec.Name)], v)
			if cfg := rec.GetConfig("tierbench-run"); cfg != "" {
				runID = cfg
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if runID != res.Plan.RunID {
		t.Errorf("got tierbench-run %q, want %q", runID, res.Plan.RunID)
	}
	passes := results.CountedPasses(res.Plan, res.Passes)
	shown := 0
	for _, c := range res.Cells {
		name := benchName(res.Scenario, c.Row, c.Threads)
		if c.Passes == 0 || c.Excluded != "" {
			if len(got[name]) > 0 {
				t.Errorf("%s: got %d results for a cell kept out of the table, want none", name, len(got[name]))
			}
			continue
		}
		shown++
		ps := passes[results.CellKey(c.Row, c.Threads)]
		if len(got[name]) != len(ps) {
			t.Errorf("%s: got %d results, want one per counted pass (%d)", name, len(got[name]), len(ps))
			continue
		}
		for i, p := range ps {
			if got[name][i] != p.OpsPerSec {
				t.Errorf("%s pass %d: got %v GET/s, want %v", name, i+1, got[name][i], p.OpsPerSec)
			}
		}
	}
	if shown == 0 {
		t.Fatal("no cell shown")
	}

	if testing.Short() {
		return
	}
	// The real benchstat, built from the module this one depends on.
	bin := filepath.Join(t.TempDir(), "benchstat")
	if b, err := exec.Command("go", "build", "-o", bin, "golang.org/x/perf/cmd/benchstat").CombinedOutput(); err != nil {
		t.Fatalf("build benchstat: %v\n%s", err, b)
	}
	a := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(a, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stat, err := exec.Command(bin, "-col", "/pin", "-row", "/backend /threads", "-filter", ".unit:GET/s", a).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, stat)
	}
	for _, want := range []string{"GET/s", "pinned", "none", "libaio 32", "5.700M", "5.090M", "p=0.100 n=3", "geomean"} {
		if !strings.Contains(string(stat), want) {
			t.Errorf("benchstat's table lacks %q:\n%s", want, stat)
		}
	}
}

// TestExportHgrm writes a step's HdrHistogram log as the run writes it,
// exports it and checks the percentile distribution against the
// histogram itself.
func TestExportHgrm(t *testing.T) {
	dir := writeBundle(t, true)
	h := hdrhistogram.New(1, 60_000_000_000, 3)
	for i := int64(1); i <= 10_000; i++ {
		_ = h.RecordValue(i * 1000) // 1 µs to 10 ms, in ns as the run records
	}
	if err := os.MkdirAll(filepath.Join(dir, results.DirLatency), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	w := hdrhistogram.NewHistogramLogWriter(&log)
	start := time.Unix(100, 0)
	h.SetStartTimeMs(start.UnixMilli())
	h.SetEndTimeMs(start.Add(12 * time.Second).UnixMilli())
	if err := errors.Join(w.OutputLogFormatVersion(), w.OutputStartTime(start.UnixMilli()), w.OutputLegend(), w.OutputIntervalHistogram(h)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latency", "libaio-pinned-x.hlog"), log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := results.AppendJSONL(dir, results.FileLatency, bundletest.LatencySteps(referencePlan())[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := render(dir, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "hgrm")
	if err := Export(dir, "hgrm", nil, out, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "libaio-pinned-x.hgrm"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, " Value\tPercentile\tTotalCount\t1/(1-Percentile)") || !strings.Contains(text, "Total count    =        10000]") {
		t.Errorf("got\n%s\nwant HdrHistogram's percentile distribution of 10000 values", text)
	}
	// The 50th percentile line, in µs.
	want := strconv.FormatFloat(float64(h.ValueAtQuantile(50))/1000, 'f', 3, 64) + "     0.500000"
	if !strings.Contains(text, want) {
		t.Errorf("got\n%s\nwant a line %q", text, want)
	}
}

// TestExportRefusesUnsealed: an edited bundle exports nothing unless
// --unverified, which marks what it writes.
func TestExportRefusesUnsealed(t *testing.T) {
	dir, _ := renderedBundle(t)
	edit(t, dir, results.FileCells, func(b []byte) []byte { return bytes.Replace(b, []byte(`"ops_per_sec":`), []byte(`"ops_per_sec":1`), 1) })
	var out bytes.Buffer
	if err := Export(dir, "csv", &out, "", false); !errors.Is(err, ErrUnsealed) || out.Len() > 0 {
		t.Errorf("got %v and %d bytes, want a refusal and nothing written", err, out.Len())
	}
	if err := Export(dir, "benchfmt", &out, "", true); err != nil || !strings.Contains(out.String(), "tierbench-unverified: cells.jsonl was edited") {
		t.Errorf("got %v and\n%s\nwant the export marked unverified", err, out.String())
	}
}

// FuzzMergedHistogram feeds arbitrary bytes as a step's HdrHistogram log:
// an error or a histogram, never a panic.
func FuzzMergedHistogram(f *testing.F) {
	f.Add([]byte("#[StartTime: 100.000 (seconds since epoch)]\n0.000,12.000,10.000,HISTFAAAACl4nJNpmSzMwMDAzAABzFCaEUzOmQGWYOBnAAByLAR6\n"))
	f.Add([]byte("0,0,0,HISTF\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = mergedHistogram(b)
	})
}
