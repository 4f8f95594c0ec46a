package orchestrator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// referencePlan is the reference's four rows with three passes.
func referencePlan() Plan {
	cfg, _ := Config{Profile: ProfileReference}.resolve(func(string) string { return "" })
	return Plan{Schema: SchemaVersion, RunID: "test-run", MaxMisses: 0, Runtime: RuntimeProcess, Nodes: 2,
		Workload: cfg.workload(),
		Rows: []Row{
			{Backend: "libaio", Pin: PinPinned, Label: "srv node-0 / cli node-1"}, {Backend: "libaio", Pin: PinNone, Label: "no pin"},
			{Backend: "uring", Pin: PinPinned, Label: "srv node-0 / cli node-1"}, {Backend: "uring", Pin: PinNone, Label: "no pin"},
		}}
}

// referencePasses builds three passes per cell around the reference's
// published medians, with one memory-served cell, one cell with misses
// and one cell not measured.
func referencePasses(plan Plan) []PassRecord {
	published := [][]float64{
		{1.82e6, 5.70e6, 6.97e6, 7.06e6},
		{1.38e6, 5.09e6, 5.72e6, 5.57e6},
		{1.82e6, 6.13e6, 7.32e6, 6.89e6},
		{1.48e6, 4.60e6, 5.55e6, 0},
	}
	var recs []PassRecord
	for i, row := range plan.Rows {
		for j, t := range plan.Workload.Threads {
			if published[i][j] == 0 {
				continue
			}
			for p, f := range []float64{0.98, 1, 1.03} {
				ops := int64(published[i][j] * f * 12)
				rec := PassRecord{Kind: "pass", Schema: SchemaVersion, Row: row, Threads: t, Pass: p + 1, Batch: 1024,
					Ops: ops, Seconds: 12, OpsPerSec: published[i][j] * f, Hits: ops, ReadBytes: ops * 512}
				if i == 1 && t == 8 {
					rec.ReadBytes = ops * 3 // memory-served
				}
				if i == 2 && t == 64 && p == 1 {
					rec.Hits, rec.Misses = ops-ops/100, ops/100 // 1 % misses in one pass
				}
				recs = append(recs, rec)
			}
		}
	}
	return recs
}

// writeBundle writes a finished bundle from the reference fixtures.
func writeBundle(t *testing.T, fio bool) string {
	t.Helper()
	dir := t.TempDir()
	plan := referencePlan()
	if err := writeJSON(dir, filePlan, plan); err != nil {
		t.Fatal(err)
	}
	pre, err := os.ReadFile(filepath.Join("testdata", "preflight-nofio.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fio {
		pre = bytes.Replace(pre, []byte(`"fio": null`), []byte(`"fio": {"version": "fio-3.33", "engine": "io_uring", "jobs": 32, "iodepth": 64, "files": 8, "file_bytes": 1677721600, "runtime_seconds": 5,
			"results": [{"block_bytes": 512, "iops": 8200000}, {"block_bytes": 4096, "iops": 8240000}], "max_depth": 4096, "footprint": "fio-files",
			"sweep": [{"depth": 64, "jobs": 1, "iodepth": 64, "iops": 900000, "bw_kib_per_sec": 450000, "clat_us": {"p50": 70, "p99": 90}},
				{"depth": 2048, "jobs": 32, "iodepth": 64, "iops": 8200000, "bw_kib_per_sec": 4100000, "clat_us": {"p50": 240, "p99": 600}},
				{"depth": 4096, "jobs": 32, "iodepth": 128, "iops": 8100000, "bw_kib_per_sec": 4050000, "clat_us": {"p50": 500, "p99": 1300}}]}`), 1)
	}
	if err := writeFile(dir, filePreflight, pre); err != nil {
		t.Fatal(err)
	}
	l, err := openCellsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, row := range plan.Rows {
		l.Append(LoadRecord{Kind: "load", Schema: SchemaVersion, Row: row, DBSize: 100_000_000, Acknowledged: 100_000_000,
			ServerKeys: 100_000_000, Tiered: true, BeginAddress: 64, HeadAddress: 12_783_000_064, TailAddress: 12_800_000_064,
			DeviceShare: 12_783_000_000.0 / 12_800_000_000})
	}
	for _, r := range referencePasses(plan) {
		l.Append(r)
	}
	return dir
}
