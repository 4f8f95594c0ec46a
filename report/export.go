package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

// ExportFormats are what `tierbench report --export` writes.
var ExportFormats = []string{"csv", "benchfmt", "hgrm"}

// Export writes the bundle at dir in format, from its records alone:
// "csv" (one line per cell) and "benchfmt" (one Go benchmark line per
// counted pass, for benchstat) to w, "hgrm" (HdrHistogram's percentile
// distribution of each latency step, one file each) into outDir. It
// refuses a bundle whose sums do not hold, or leave results.json
// uncovered, unless unverified; then every exported figure says so.
func Export(dir, format string, w io.Writer, outDir string, unverified bool) error {
	in, err := results.Check(dir)
	if err != nil {
		return err
	}
	why := ""
	if !in.Holds() || !in.Sealed {
		why = strings.Join(append(in.Findings, in.Uncovered()), "; ")
		why = strings.TrimSuffix(why, "; ")
		if !unverified {
			return fmt.Errorf("%w: %s: %s; refusing to export figures nothing vouches for (--unverified exports them marked)", ErrUnsealed, dir, why)
		}
	}
	res, err := results.Derive(dir, nil)
	if err != nil {
		return err
	}
	switch format {
	case "csv":
		return exportCSV(w, res, why)
	case "benchfmt":
		return exportBenchfmt(w, dir, res, why)
	case "hgrm":
		if outDir == "" {
			return fmt.Errorf("report: --export hgrm writes one file per latency step: give a directory with -o")
		}
		return exportHgrm(outDir, dir, res, why)
	}
	return fmt.Errorf("report: --export %q: want one of %s", format, strings.Join(ExportFormats, ", "))
}

// exportCSV writes one line per cell with its row, median, spread and
// evidence; unverified names why nothing vouches for it, if so.
func exportCSV(w io.Writer, res results.Results, unverified string) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"run_id", "scenario", "server", "backend", "pin", "numa", "batch", "shards", "memory", "tls", "threads",
		"passes", "median_ops_per_sec", "min_ops_per_sec", "max_ops_per_sec", "fio_share", "cpu_us_per_op", "read_bytes_per_get", "max_miss_ratio", "excluded", "unverified"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, c := range res.Cells {
		if c.Passes == 0 {
			continue
		}
		r := c.Row
		_ = cw.Write([]string{res.Plan.RunID, res.Scenario, r.ServerName(), r.Backend, r.Pin, r.Label, strconv.Itoa(r.Batch), strconv.Itoa(r.Shards), r.Memory,
			strconv.FormatBool(r.TLS), strconv.Itoa(c.Threads), strconv.Itoa(c.Passes), f(c.Median), f(c.Min), f(c.Max), f(c.FioShare),
			f(c.CPUMicrosPerOp), f(c.ReadBytesPerGet), f(c.MissRatio), c.Excluded, unverified})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write CSV: %w", err)
	}
	return nil
}

// exportBenchfmt writes the Go benchmark format benchstat reads: the
// host as configuration lines, then per counted pass of every cell shown
// in the table one line "BenchmarkGET/scenario=…/…/threads=N ops ns/op
// GET/s …", so that `benchstat -col /backend` and the like set rows side
// by side. Cells kept out of the table are left out.
func exportBenchfmt(w io.Writer, dir string, res results.Results, unverified string) error {
	var b bytes.Buffer
	b.WriteString("goos: linux\n")
	if fp := readFingerprint(dir); fp != nil {
		if fp.CPUModel != "" {
			fmt.Fprintf(&b, "cpu: %s\n", fp.CPUModel)
		}
		if fp.Kernel != "" {
			fmt.Fprintf(&b, "kernel: %s\n", fp.Kernel)
		}
	}
	fmt.Fprintf(&b, "tierbench-run: %s\n", res.Plan.RunID)
	if res.Plan.Version != "" {
		fmt.Fprintf(&b, "tierbench-version: %s\n", configValue(res.Plan.Version))
	}
	fmt.Fprintf(&b, "runtime: %s\n", res.Plan.Runtime)
	if unverified != "" {
		fmt.Fprintf(&b, "tierbench-unverified: %s\n", configValue(unverified))
	}
	b.WriteString("Unit GET/s assume=nothing better=higher\n")
	b.WriteString("Unit ns/op assume=nothing better=lower\n")
	passes := results.CountedPasses(res.Plan, res.Passes)
	for _, c := range res.Cells {
		if c.Passes == 0 || c.Excluded != "" {
			continue
		}
		name := benchName(res.Scenario, c.Row, c.Threads)
		for _, p := range passes[results.CellKey(c.Row, c.Threads)] {
			if p.Ops <= 0 || p.OpsPerSec <= 0 {
				continue
			}
			fmt.Fprintf(&b, "%s %d %s ns/op %s GET/s", name, p.Ops, fmtFloat(1e9/p.OpsPerSec), fmtFloat(p.OpsPerSec))
			if p.CPUMicrosPerOp > 0 {
				fmt.Fprintf(&b, " %s cpu-us/op", fmtFloat(p.CPUMicrosPerOp))
			}
			if p.ReadBytesPerGet >= 0 {
				fmt.Fprintf(&b, " %s device-B/GET", fmtFloat(p.ReadBytesPerGet))
			}
			b.WriteString("\n")
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("report: write benchfmt: %w", err)
	}
	return nil
}

// benchName is a cell's benchmark name: each part of its row a key=value
// sub-benchmark, so benchstat can project on any of them.
func benchName(scenario string, r results.Row, threads int) string {
	parts := []string{"BenchmarkGET", "scenario=" + nameValue(scenario), "server=" + nameValue(r.ServerName()),
		"backend=" + nameValue(r.Backend), "pin=" + nameValue(r.Pin)}
	if r.Batch > 0 {
		parts = append(parts, fmt.Sprintf("b=%d", r.Batch))
	}
	if r.Shards > 1 {
		parts = append(parts, fmt.Sprintf("shards=%d", r.Shards))
	}
	if r.Memory != "" {
		parts = append(parts, "memory="+nameValue(r.Memory))
	}
	if r.TLS {
		parts = append(parts, "tls=on")
	}
	parts = append(parts, fmt.Sprintf("threads=%d", threads))
	return strings.Join(parts, "/")
}

// nameValue keeps a value inside one part of a benchmark name: no space,
// slash or "=".
func nameValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '/' || r == '=' || r == '\t' {
			return '_'
		}
		return r
	}, s)
}

// configValue keeps a configuration value on its line.
func configValue(s string) string { return strings.Join(strings.Fields(s), " ") }

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func readFingerprint(dir string) *hostcheck.Fingerprint {
	b, err := readBundleFile(dir, results.FileFingerprint)
	if err != nil {
		return nil
	}
	var fp hostcheck.Fingerprint
	if json.Unmarshal(b, &fp) != nil {
		return nil
	}
	return &fp
}

// exportHgrm writes, for each latency step with an HdrHistogram log, the
// percentile distribution HdrHistogram's tools and plotter read, in
// microseconds, to outDir/<the log's name>.hgrm.
func exportHgrm(outDir, dir string, res results.Results, unverified string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("report: --export hgrm: %w", err)
	}
	n := 0
	for _, l := range res.Latency {
		if l.Hlog == "" {
			continue
		}
		raw, err := readBundleFile(dir, filepath.FromSlash(l.Hlog))
		if err != nil {
			return fmt.Errorf("report: latency step %s at %.0f ops/sec: its log %s: %w", l.Row.ID(), l.OfferedOpsPerSec, l.Hlog, err)
		}
		h, err := mergedHistogram(raw)
		if err != nil {
			return fmt.Errorf("report: %s: %w", l.Hlog, err)
		}
		var b bytes.Buffer
		what := "GET"
		if l.Floor != "" {
			what = l.Floor
		}
		fmt.Fprintf(&b, "#[tierbench run %s, %s %s: %s at %.0f ops/sec offered, %.0f achieved, %d connections; microseconds from each op's intended send time]\n",
			res.Plan.RunID, l.Row.Backend, l.Row.Label, what, l.OfferedOpsPerSec, l.AchievedOpsPerSec, l.Threads)
		if unverified != "" {
			fmt.Fprintf(&b, "#[unverified: %s]\n", configValue(unverified))
		}
		if _, err := h.PercentilesPrint(&b, 5, 1000); err != nil {
			return fmt.Errorf("report: %s: %w", l.Hlog, err)
		}
		name := strings.TrimSuffix(filepath.Base(l.Hlog), filepath.Ext(l.Hlog)) + ".hgrm"
		if err := os.WriteFile(filepath.Join(outDir, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("report: --export hgrm: %w", err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("report: --export hgrm: %s has no latency step with an HdrHistogram log (run --latency or --slo records them)", dir)
	}
	return nil
}

// mergedHistogram is every interval of an HdrHistogram log added up. The
// library's decoder is not ours to vouch for on any bytes: a panic in it
// is an error naming the log as broken.
func mergedHistogram(log []byte) (_ *hdrhistogram.Histogram, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("read HdrHistogram log: not a log it can decode (%v)", p)
		}
	}()
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(log))
	var sum *hdrhistogram.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("read HdrHistogram log: %w", err)
		}
		if h == nil {
			break
		}
		if sum == nil {
			sum = h
		} else {
			sum.Merge(h)
		}
	}
	if sum == nil {
		return nil, errors.New("the HdrHistogram log holds no interval")
	}
	return sum, nil
}
