// Package bundletest writes results bundles for tests: the reference's
// four rows with passes around its published medians, a preflight with
// or without the fio baseline. Only tests import it.
package bundletest

import (
	"bytes"
	_ "embed"
	"testing"
	"time"

	"github.com/tierbench/tierbench/results"
)

// PreflightNoFio is a real `tierbench preflight --json` document of a run
// without the fio baseline.
//
//go:embed preflight-nofio.json
var PreflightNoFio []byte

// ReferenceWorkload is the reference profile as a run resolves it.
func ReferenceWorkload() results.Workload {
	return results.Workload{
		Profile: "reference", DBSize: 100_000_000, KeyLength: 16, ValueLength: 96,
		Threads: []int{8, 32, 48, 64}, Batch: 1024, CellSeconds: 12, Passes: 3, WarmupSeconds: 12,
		LoadThreads: 32, LoadBatch: 4096, Memory: "16m", Page: "4m", Segment: "1g", Index: "8g",
		Backends: []string{"libaio", "uring"}, Pins: []string{"pinned", "none"},
		DataDir: "/var/tmp/tierbench-data", Runtime: "auto", Latency: true, Ladder: true,
	}
}

// ReferencePlan is the reference's four rows with three passes, over w.
func ReferencePlan(w results.Workload) results.Plan {
	return results.Plan{Schema: results.SchemaVersion, RunID: "test-run", MaxMisses: 0, Runtime: "process", Nodes: 2,
		Workload: w,
		Rows: []results.Row{
			{Backend: "libaio", Pin: "pinned", Label: "srv node-0 / cli node-1"}, {Backend: "libaio", Pin: "none", Label: "no pin"},
			{Backend: "uring", Pin: "pinned", Label: "srv node-0 / cli node-1"}, {Backend: "uring", Pin: "none", Label: "no pin"},
		}}
}

// ReferencePasses builds three passes per cell around the reference's
// published medians, with one memory-served cell, one cell with misses
// and one cell not measured.
func ReferencePasses(plan results.Plan) []results.PassRecord {
	published := [][]float64{
		{1.82e6, 5.70e6, 6.97e6, 7.06e6},
		{1.38e6, 5.09e6, 5.72e6, 5.57e6},
		{1.82e6, 6.13e6, 7.32e6, 6.89e6},
		{1.48e6, 4.60e6, 5.55e6, 0},
	}
	var recs []results.PassRecord
	for i, row := range plan.Rows {
		for j, t := range plan.Workload.Threads {
			if published[i][j] == 0 {
				continue
			}
			for p, f := range []float64{0.98, 1, 1.03} {
				ops := int64(published[i][j] * f * 12)
				rec := results.PassRecord{Kind: "pass", Schema: results.SchemaVersion, Row: row, Threads: t, Pass: p + 1, Batch: 1024,
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

// WriteBundle writes the raw records of a finished bundle of plan into a
// new temporary directory (no results.json: render it), with the fio
// baseline in its preflight when fio.
func WriteBundle(t testing.TB, plan results.Plan, fio bool) string {
	t.Helper()
	dir := t.TempDir()
	if err := results.WriteJSON(dir, results.FilePlan, plan); err != nil {
		t.Fatal(err)
	}
	pre := PreflightNoFio
	if fio {
		pre = bytes.Replace(pre, []byte(`"fio": null`), []byte(`"fio": {"version": "fio-3.33", "engine": "io_uring", "jobs": 32, "iodepth": 64, "files": 8, "file_bytes": 1677721600, "runtime_seconds": 5,
			"results": [{"block_bytes": 512, "iops": 8200000}, {"block_bytes": 4096, "iops": 8240000}], "max_depth": 4096, "footprint": "fio-files",
			"sweep": [{"depth": 64, "jobs": 1, "iodepth": 64, "iops": 900000, "bw_kib_per_sec": 450000, "clat_us": {"p50": 70, "p99": 90}},
				{"depth": 2048, "jobs": 32, "iodepth": 64, "iops": 8200000, "bw_kib_per_sec": 4100000, "clat_us": {"p50": 240, "p99": 600}},
				{"depth": 4096, "jobs": 32, "iodepth": 128, "iops": 8100000, "bw_kib_per_sec": 4050000, "clat_us": {"p50": 500, "p99": 1300}}]}`), 1)
	}
	if err := results.WriteFile(dir, results.FilePreflight, pre); err != nil {
		t.Fatal(err)
	}
	l, err := results.OpenCellsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, row := range plan.Rows {
		if err := l.Append(results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: row, DBSize: 100_000_000, Acknowledged: 100_000_000,
			ServerKeys: 100_000_000, Tiered: true, BeginAddress: 64, HeadAddress: 12_783_000_064, TailAddress: 12_800_000_064,
			DeviceShare: 12_783_000_000.0 / 12_800_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range ReferencePasses(plan) {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// LatencySteps is a run's worth of steps whose p99 rises with the load.
func LatencySteps(plan results.Plan) []results.LatencyRecord {
	var out []results.LatencyRecord
	for i, share := range []float64{0.10, 0.25, 0.50, 0.75, 0.90} {
		offered := share * 8e6
		rec := results.LatencyRecord{Kind: "latency", Schema: results.SchemaVersion, Row: plan.Rows[0], Share: share, BestOpsPerSec: 8e6, Threads: 64,
			InFlight: 1024, OfferedOpsPerSec: offered, AchievedOpsPerSec: offered, Ops: int64(offered * 12), Seconds: 12,
			P50Micros: 90 * float64(i+1), P99Micros: 300 * float64((i+1)*(i+1)), P999Micros: 900 * float64((i+1)*(i+1)), MaxMicros: 5000 * float64(i+1),
			Hlog: "latency/libaio-pinned-x.hlog", Time: time.Unix(100, 0).UTC()}
		if share == 0.90 {
			rec.AchievedOpsPerSec = 0.9 * offered
			rec.Short = true
		}
		out = append(out, rec)
	}
	return out
}
