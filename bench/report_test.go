package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/freeze"
	"github.com/tierbench/tierbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenReport fills every field, so the golden file pins every name.
func goldenReport() *Report {
	steal, busy := 0.012, 0.43
	return &Report{
		Load: &LoadResult{Keys: 100000, Acknowledged: 100000, Seconds: 0.5, OpsPerSec: 200000, Threads: 4, Batch: 1024},
		Cells: []CellResult{{
			Op: "GET", Threads: 4, Batch: 1024, Pipeline: "batch", Ops: 4096000, Seconds: 2, OpsPerSec: 2048000,
			Hits: 4095000, Misses: 1000, Errors: 0, Mismatches: 0, Verified: true, FirstError: "",
			BytesSent: 110592000, BytesReceived: 57344000, ClientCPUSeconds: 0.75, ClientSaturated: false, HostStealShare: &steal,
			Incomplete: false, Zipf: true, KeyDist: "zipf:0.99", KeysRedrawn: true, PrebuiltOpsPerThread: 65536, ClientLoops: 2, IdleWait: "auto",
			IdleWaits: 90000, IdleNaps: 180000, IdleParks: 12, FirstNapMicros: 41.5,
		}, {
			Op: "GET:95,SET:5", Threads: 4, Batch: 1024, Pipeline: "batch", Ops: 4096000, Seconds: 2, OpsPerSec: 2048000,
			Hits: 4096000, Verified: true, KeyDist: "uniform", PrebuiltOpsPerThread: 65536, ClientLoops: 2, IdleWait: "park",
			Mix: []OpResult{{Op: "GET", Percent: 95, Ops: 3891200, OpsPerSec: 1945600, Hits: 3891200,
				LatencyMicros: LatencySummary{Min: 100, P5: 200, P50: 500, Avg: 520, P95: 900, P99: 1200, P999: 1500, Max: 2000}},
				{Op: "SET", Percent: 5, Ops: 204800, OpsPerSec: 102400, Hits: 204800,
					LatencyMicros: LatencySummary{Min: 100, P5: 200, P50: 500, Avg: 520, P95: 900, P99: 1200, P999: 1500, Max: 2000}}},
		}},
		Online: &OnlineResult{
			Workload: []WorkloadShare{{Op: "GET", Percent: 50}, {Op: "SET", Percent: 50}},
			Threads:  2, InFlight: 4, RateOpsPerSec: 10000, Ops: 20000, Seconds: 2, OpsPerSec: 10000,
			Hits: 20000, ClientCPUSeconds: 0.5, HostStealShare: &steal, HostBusyShare: &busy, Verified: true,
			HostFreezes:   &freeze.Stats{CPUs: 2, PeriodMicros: 1000, Count: 3, FrozenMillis: 14.5, LongestMillis: 6.2, Samples: 3980},
			LatencyMicros: LatencySummary{Min: 10, P5: 12, P50: 20, Avg: 22.5, P95: 40, P99: 60, P999: 90, Max: 120},
			Warmup:        WarmupResult{Seconds: 1, Ops: 10000, Hits: 10000},
		},
	}
}

func TestReportJSONGolden(t *testing.T) {
	checkReportGolden(t, goldenReport(), "report.golden.json")
}

// checkReportGolden compares rep's JSON with testdata/name (rewritten
// with -update): the orchestrator reads these names.
func checkReportGolden(t *testing.T, rep *Report, name string) {
	t.Helper()
	var buf bytes.Buffer
	if err := writeJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./bench -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("the JSON schema of %s changed (the orchestrator reads these names); got:\n%s\nwant:\n%s\nrun go test ./bench -update if the change is meant", name, buf.Bytes(), want)
	}
}

// keyPaths lists every object key path in a decoded JSON value, such as
// "cells[].ops_per_sec".
func keyPaths(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[prefix+k] = true
			keyPaths(prefix+k+".", e, out)
		}
	case []any:
		for _, e := range x {
			keyPaths(prefix[:len(prefix)-1]+"[].", e, out)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	slices.Sort(s)
	return s
}

// TestRealRunMatchesGoldenSchema checks that a measured document (offline
// and online) carries exactly the golden names: nothing missing, nothing
// extra.
func TestRealRunMatchesGoldenSchema(t *testing.T) {
	want := map[string]bool{}
	golden, err := os.ReadFile(filepath.Join("testdata", "report.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g any
	if err := json.Unmarshal(golden, &g); err != nil {
		t.Fatal(err)
	}
	keyPaths("", g, want)
	if probe, err := freeze.Start(time.Millisecond); err != nil {
		// No perf events here: the run cannot measure the host's freezes.
		for k := range want {
			if strings.HasPrefix(k, "online.host_freezes") {
				delete(want, k)
			}
		}
	} else {
		probe.Stop()
	}

	r := testenv.MustRedisServer(t)
	offline := configFor(t, r.Addr)
	online := configFor(t, r.Addr)
	online.SkipLoad = true
	online.Online = true
	online.OpWorkload = []string{"GET", "SET"}
	online.OpPercent = []int{50, 50}
	online.Runtime = 300e6
	mixed := configFor(t, r.Addr)
	mixed.SkipLoad = true
	mixed.OpMix, _ = ParseOpMix("GET:95,SET:5")
	got := map[string]bool{}
	for _, cfg := range []Config{offline, online, mixed} {
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), cfg, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		var doc any
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatalf("stdout is not JSON alone: %v\n%s", err, stdout.String())
		}
		keyPaths("", doc, got)
	}
	if g, w := sortedKeys(got), sortedKeys(want); !slices.Equal(g, w) {
		t.Errorf("measured JSON names differ from the golden file:\ngot  %v\nwant %v", g, w)
	}
}
