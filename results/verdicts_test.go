package results_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		in          []float64
		med, lo, hi float64
	}{
		{nil, 0, 0, 0},
		{[]float64{5}, 5, 5, 5},
		{[]float64{3, 1, 2}, 2, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
		{[]float64{7.06e6, 6.9e6, 7.2e6}, 7.06e6, 6.9e6, 7.2e6},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in)
		med, lo, hi := results.Median(tt.in)
		if med != tt.med || lo != tt.lo || hi != tt.hi {
			t.Errorf("median(%v) = %v, %v, %v; want %v, %v, %v", tt.in, med, lo, hi, tt.med, tt.lo, tt.hi)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("median modified its input: got %v, want %v", tt.in, in)
		}
	}
}

func TestAggregate(t *testing.T) {
	plan := referencePlan()
	cells := results.Aggregate(plan, referencePasses(plan), nil, 8.2e6)
	if got, want := len(cells), 16; got != want {
		t.Fatalf("aggregate: got %d cells, want %d", got, want)
	}
	c := cells[3] // libaio pinned t=64
	if c.Median != 7.06e6 || c.Min != 7.06e6*0.98 || c.Max != 7.06e6*1.03 || c.Passes != 3 || c.Excluded != "" {
		t.Errorf("libaio pinned t=64: got %+v, want median 7.06e6, min/max ±, 3 passes, shown", c)
	}
	if want := 7.06e6 / 8.2e6; c.FioShare != want {
		t.Errorf("fio share: got %v, want %v", c.FioShare, want)
	}
	if c.ReadBytesPerGet != 512 {
		t.Errorf("device bytes per GET: got %v, want 512", c.ReadBytesPerGet)
	}
	if got := cells[4].Excluded; got != results.ExcludedMemoryServed {
		t.Errorf("libaio no pin t=8: excluded %q, want %q", got, results.ExcludedMemoryServed)
	}
	if got := cells[11].Excluded; got != results.ExcludedMisses {
		t.Errorf("uring pinned t=64: excluded %q, want %q", got, results.ExcludedMisses)
	}
	if got := cells[15].Passes; got != 0 {
		t.Errorf("uring no pin t=64: got %d passes, want 0 (not measured)", got)
	}
}

func TestAggregateCountsEachPassOnce(t *testing.T) {
	plan := referencePlan()
	plan.Workload.Passes = 2
	row := plan.Rows[0]
	recs := []results.PassRecord{
		{Row: row, Threads: 8, Pass: 1, Ops: 10, OpsPerSec: 100, Hits: 10, ReadBytes: 5120},
		{Row: row, Threads: 8, Pass: 1, Ops: 10, OpsPerSec: 900, Hits: 10, ReadBytes: 5120}, // duplicate of pass 1
		{Row: row, Threads: 8, Pass: 2, Ops: 10, OpsPerSec: 200, Hits: 10, ReadBytes: 5120},
		{Row: row, Threads: 8, Pass: 3, Ops: 10, OpsPerSec: 300, Hits: 10, ReadBytes: 5120}, // beyond --passes
	}
	c := results.Aggregate(plan, recs, nil, 0)[0]
	if c.Passes != 2 || c.Median != 150 {
		t.Errorf("got %d passes, median %v; want 2 passes, median 150", c.Passes, c.Median)
	}
}

func TestParseCellsErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"bad middle line", "{\"kind\":\"pass\",\"schema_version\":1}\nnot json\n{\"kind\":\"pass\",\"schema_version\":1}\n", "line 2"},
		{"unknown kind", "{\"kind\":\"party\",\"schema_version\":1}\n", `unknown kind "party"`},
		{"newer schema", "{\"kind\":\"pass\",\"schema_version\":99}\n", "schema_version 99"},
	}
	for _, tt := range tests {
		_, _, err := results.ParseCells([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestJudgeEvidenceCPUBound(t *testing.T) {
	tests := []struct {
		name       string
		cpus       string
		cpuSeconds float64
		wantShare  float64
		wantBound  bool
	}{
		{"one CPU, 92.5 %", "0", 1.85, 0.925, true},
		{"one CPU, 85 %", "1", 1.7, 0.85, false},
		{"exactly 90 %", "0", 1.8, 0.9, true},
		{"two CPUs, 92.5 %", "0-1", 3.7, 0.925, true},
		{"two CPUs, one busy", "0-1", 2, 0.5, false},
		{"placement unknown", "", 2, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := results.PassRecord{Seconds: 2, ClientCPUSeconds: 1, Server: results.Placement{CPUs: tt.cpus}, Client: results.Placement{CPUs: "1"},
				PassEvidence: results.PassEvidence{ServerCPUSeconds: tt.cpuSeconds, DiskDevices: []string{"vda"}, DiskReads: 200_000, DiskWeightedMs: 256_000}}
			results.JudgeEvidence(&rec)
			if d := rec.ServerCPUShare - tt.wantShare; d > 1e-9 || d < -1e-9 || rec.ServerCPUBound != tt.wantBound {
				t.Errorf("got share %v bound %v, want %v %v", rec.ServerCPUShare, rec.ServerCPUBound, tt.wantShare, tt.wantBound)
			}
			if rec.DiskReadsPerSec != 100_000 || rec.DiskQueueDepth != 128 || rec.ClientCPUShare != 0.5 {
				t.Errorf("got %v r/s, depth %v, client %v; want 100000, 128, 0.5", rec.DiskReadsPerSec, rec.DiskQueueDepth, rec.ClientCPUShare)
			}
		})
	}
	// One bound pass marks the cell; the medians are over the passes.
	row := results.Row{Backend: "uring", Pin: "pinned", Label: "srv cpus 0 / cli cpus 1 (1 node)"}
	var recs []results.PassRecord
	for _, s := range []float64{1.5, 1.9, 1.6} {
		recs = append(recs, results.PassRecord{Row: row, Seconds: 2, Server: results.Placement{CPUs: "0"}, PassEvidence: results.PassEvidence{ServerCPUSeconds: s}})
	}
	ce := results.SummarizeEvidence(recs)
	if !ce.ServerCPUBound || ce.ServerCPUShare != 0.8 || ce.DiskReadsPerSec != 0 {
		t.Errorf("got %+v, want the cell marked, median share 0.8 and no disk evidence", ce)
	}

}

func TestApplyCeilings(t *testing.T) {
	row := results.Row{Backend: "libaio", Pin: "none", Label: "no pin"}
	const base = 100_000
	tests := []struct {
		name        string
		median      float64
		diskRPS     float64
		rec         *results.CeilingRecord
		wantCeiling float64
		wantAbove   bool
		wantWhy     string
	}{
		{"below", 90_000, 90_000, nil, base, false, ""},
		{"within the tolerance", 101_500, 101_000, nil, base, false, ""},
		{"above, not re-measured", 110_000, 110_000, nil, base, true, "not measured again"},
		{"above, fio at its depth is higher", 110_000, 110_000, &results.CeilingRecord{IOPS: 115_000, Depth: 3000, DepthSource: "disk", Files: 1}, 115_000, false, ""},
		{"above, fio at its depth is lower, disk agrees", 110_000, 111_000, &results.CeilingRecord{IOPS: 95_000, Depth: 3000, DepthSource: "disk", Files: 1}, base, true, "the reads were real"},
		{"above, the disk saw fewer reads", 110_000, 40_000, &results.CeilingRecord{IOPS: 104_000, Depth: 900, DepthSource: "disk", Files: 1}, 104_000, true, "some GETs did not reach it"},
		{"above, fio failed", 110_000, 110_000, &results.CeilingRecord{FioCost: results.FioCost{Error: "fio: boom"}}, base, true, "fio at its depth failed: fio: boom"},
		{"above, fio at its depth was cpu-bound", 110_000, 111_000, &results.CeilingRecord{IOPS: 95_000, Depth: 3000, DepthSource: "disk", Files: 1, FioCost: results.FioCost{CPUBound: true, CPUShare: 0.95, CPUMicrosPerRead: 9}}, base, true, "fio CPU-bound there too (95 % of its CPUs, 9.0 µs per read); the disk completed 111 K reads/s (1.01 per GET) at depth 3000: the reads were real."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := []results.Cell{{Row: row, Threads: 32, Passes: 2, Median: tt.median, CellEvidence: results.CellEvidence{DiskReadsPerSec: tt.diskRPS, DiskQueueDepth: 3000}}}
			var recs []results.CeilingRecord
			if tt.rec != nil {
				rec := *tt.rec
				rec.Row, rec.Threads = row, 32
				recs = append(recs, rec)
			}
			results.ApplyCeilings(cells, recs, results.Ceilings{Host: results.FioCeiling{IOPS: base}})
			c := cells[0]
			if c.Ceiling != tt.wantCeiling || c.AboveCeiling != tt.wantAbove || c.FioShare != tt.median/tt.wantCeiling {
				t.Errorf("got ceiling %v share %v above %v, want %v %v %v", c.Ceiling, c.FioShare, c.AboveCeiling, tt.wantCeiling, tt.median/tt.wantCeiling, tt.wantAbove)
			}
			if !strings.Contains(c.AboveCeilingWhy, tt.wantWhy) || (tt.wantWhy == "") != (c.AboveCeilingWhy == "") {
				t.Errorf("got why %q, want it to contain %q", c.AboveCeilingWhy, tt.wantWhy)
			}
		})
	}
	// Another cell's re-measurement does not apply.
	cells := []results.Cell{{Row: row, Threads: 8, Passes: 1, Median: 110_000}}
	results.ApplyCeilings(cells, []results.CeilingRecord{{Row: row, Threads: 32, IOPS: 200_000}}, results.Ceilings{Host: results.FioCeiling{IOPS: base}})
	if cells[0].Ceiling != base || !cells[0].AboveCeiling {
		t.Errorf("got %+v, want the base ceiling and the mark", cells[0])
	}
}

// TestApplyCeilingsPerCPUBudget: a pinned row is held against fio on its
// server's CPUs when that was measured, the host's otherwise; an
// above-ceiling cell whose ceiling was fio's CPU names that cause first.
func TestApplyCeilingsPerCPUBudget(t *testing.T) {
	pinned := results.Row{Backend: "uring", Pin: results.PinPinned, Label: "srv cpus 0 / cli cpus 1 (1 node)"}
	free := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	host := results.FioCeiling{IOPS: 150_000, Jobs: 2, CPUCount: 2, CPU: fio.CPU{MicrosPerRead: 9.7, Share: 0.97, Bound: true}}
	onCPU0 := results.FioCeiling{IOPS: 100_000, CPUs: "0", Jobs: 1, CPUCount: 1, CPU: fio.CPU{MicrosPerRead: 7.2, Share: 0.8}}
	tests := []struct {
		name        string
		row         results.Row
		median      float64
		ceilings    results.Ceilings
		wantCeiling float64
		wantPinned  bool
		wantWhy     []string // in this order
	}{
		{"pinned row, pinned ceiling", pinned, 90_000, results.Ceilings{Host: host, Pinned: onCPU0}, 100_000, true, nil},
		{"pinned row, bundle without a pinned ceiling", pinned, 90_000, results.Ceilings{Host: host}, 150_000, false, nil},
		{"unpinned row keeps the host's", free, 140_000, results.Ceilings{Host: host, Pinned: onCPU0}, 150_000, false, nil},
		{"above a CPU-bound ceiling", free, 165_000, results.Ceilings{Host: host, Pinned: onCPU0}, 150_000, false,
			[]string{"110.0 % of the sweep's ceiling", "fio's CPU, not the disk's", "97 % of their 2 CPU(s) at 9.7 CPU µs per read", "6.0 µs per GET", "the reads were real."}},
		{"above a pinned ceiling fio did not saturate", pinned, 110_000, results.Ceilings{Host: host, Pinned: onCPU0}, 100_000, true,
			[]string{"on the server's own CPUs 0 (100 K IOPS)", "the disk was shared with other work"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := []results.Cell{{Row: tt.row, Threads: 8, Passes: 2, Median: tt.median,
				CellEvidence: results.CellEvidence{DiskReadsPerSec: tt.median, DiskQueueDepth: 900, ServerCPUMicrosPerGet: 6}}}
			results.ApplyCeilings(cells, nil, tt.ceilings)
			c := cells[0]
			if c.Ceiling != tt.wantCeiling || c.CeilingPinned != tt.wantPinned || c.AboveCeiling != (tt.wantWhy != nil) {
				t.Errorf("got ceiling %v pinned %v above %v, want %v %v %v", c.Ceiling, c.CeilingPinned, c.AboveCeiling, tt.wantCeiling, tt.wantPinned, tt.wantWhy != nil)
			}
			at := 0
			for _, w := range tt.wantWhy {
				i := strings.Index(c.AboveCeilingWhy[at:], w)
				if i < 0 {
					t.Fatalf("got why %q, want %q after byte %d", c.AboveCeilingWhy, w, at)
				}
				at += i + len(w)
			}
			used, _ := tt.ceilings.For(tt.row)
			if tt.wantWhy != nil && used.Bound && strings.Contains(c.AboveCeilingWhy, "shared with other work") {
				t.Errorf("got why %q: a CPU-bound ceiling is explained by fio's CPU, not by a shared disk", c.AboveCeilingWhy)
			}
		})
	}
}

func TestParseCeilingsBad(t *testing.T) {
	good := `{"kind":"ceiling","schema_version":1,"threads":4,"iops":5}` + "\n"
	if recs, err := results.ParseCeilings([]byte(good + `{"kind":"ceil`)); err != nil || len(recs) != 1 {
		t.Errorf("torn last line: got %v, %v; want the first record", recs, err)
	}
	for _, in := range []string{`{"kind":"pass","schema_version":1}` + "\n", "nonsense\n" + good, `{"kind":"ceiling","schema_version":99}` + "\n"} {
		if _, err := results.ParseCeilings([]byte(in)); err == nil || !strings.Contains(err.Error(), results.FileCeilings) {
			t.Errorf("parseCeilings(%q): got %v, want an error naming %s", in, err, results.FileCeilings)
		}
	}
}

func TestJudgeScenario(t *testing.T) {
	memory, local := results.Row{Backend: results.ScenarioMemory, Pin: "none"}, results.Row{Backend: results.ScenarioLocalMemory, Pin: "none", Batch: 1024}
	sharded := local
	sharded.Shards = 2
	for _, tc := range []struct {
		name         string
		rec          results.PassRecord
		wantExcluded string
		unverified   bool
	}{
		{"untiered server reads nothing", results.PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 0}, "", false},
		{"untiered, page-cache noise below 1 %", results.PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 5_000_000}, "", false},
		// A tiered server in scenario 1: a sector per GET.
		{"tiered server in scenario 1", results.PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 512_000_000}, results.ExcludedDeviceRead, false},
		{"just at 1 % of a sector", results.PassRecord{Row: memory, Ops: 1000, ReadBytes: 5120}, results.ExcludedDeviceRead, false},
		{"memory, pid unknown", results.PassRecord{Row: memory, Ops: 1000, ReadBytes: -1}, "", true},
		{"localmemory device counts every GET", results.PassRecord{Row: local, Ops: 1000, DeviceReads: 960}, "", false},
		{"localmemory below 0.9 reads per GET", results.PassRecord{Row: local, Ops: 1000, DeviceReads: 899}, results.ExcludedNoDeviceReads, false},
		{"localmemory counter never moved", results.PassRecord{Row: local, Ops: 1000, DeviceReads: 0}, results.ExcludedNoDeviceReads, false},
		// A native device in scenario 3: the counter moves, but so does /proc io.
		{"native device in scenario 3", results.PassRecord{Row: local, Ops: 1000, DeviceReads: 1000, ReadBytes: 512_000}, results.ExcludedDeviceRead, false},
		{"localmemory, counter unknown", results.PassRecord{Row: local, Ops: 1000, DeviceReads: -1}, "", true},
		// Two shards: each shard's own counter is judged, not only the sum.
		{"both shards read their device", results.PassRecord{Row: sharded, Ops: 2000, DeviceReads: 2000,
			Nodes: []results.NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: 1000}}}, "", false},
		{"one shard missed its device, the sum passes", results.PassRecord{Row: sharded, Ops: 2000, DeviceReads: 1900,
			Nodes: []results.NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: 880}}}, results.ExcludedNoDeviceReads, false},
		{"a shard's counter unknown", results.PassRecord{Row: sharded, Ops: 2000, DeviceReads: 1999,
			Nodes: []results.NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: -1}}}, results.ExcludedNoDeviceReads, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			results.JudgePass(&rec, 0)
			if got := results.ScenarioExclusion(rec); got != tc.wantExcluded {
				t.Errorf("exclusion: got %q, want %q (record %+v)", got, tc.wantExcluded, rec)
			}
			if rec.Unverified != tc.unverified {
				t.Errorf("unverified: got %v, want %v", rec.Unverified, tc.unverified)
			}
			if rec.MemoryServed {
				t.Errorf("memory_served set on a %s pass: scenario 2's check must not apply", rec.Row.Backend)
			}
			// aggregate keeps the cell out for the same reason.
			plan := results.Plan{Rows: []results.Row{rec.Row}, Workload: results.Workload{Threads: []int{0}, Passes: 1}}
			cells := results.Aggregate(plan, []results.PassRecord{tc.rec}, nil, 0)
			want := tc.wantExcluded
			if tc.unverified {
				want = results.ExcludedUnverified
			}
			if len(cells) != 1 || cells[0].Excluded != want {
				t.Errorf("aggregate: got %+v, want one cell excluded %q", cells, want)
			}
		})
	}
}

func TestParseLatencyErrors(t *testing.T) {
	for _, tt := range []struct{ data, want string }{
		{"{\"kind\":\"latency\",\"schema_version\":1}\nnot json\n{\"kind\":\"latency\",\"schema_version\":1}\n", "line 2"},
		{"{\"kind\":\"pass\",\"schema_version\":1}\n", `unknown kind "pass"`},
		{"{\"kind\":\"latency\",\"schema_version\":99}\n", "schema_version 99"},
	} {
		if _, err := results.ParseLatency([]byte(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseLatency(%q): got %v, want an error containing %q", tt.data, err, tt.want)
		}
	}
	recs, err := results.ParseLatency([]byte("{\"kind\":\"latency\",\"schema_version\":1}\n{\"kind\":\"lat"))
	if err != nil || len(recs) != 1 {
		t.Errorf("torn last line: got %d records, %v; want 1, nil", len(recs), err)
	}
}

func FuzzParseLatency(f *testing.F) {
	for _, rec := range bundletest.LatencySteps(referencePlan())[:2] {
		enc, err := json.Marshal(rec)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(enc, '\n'))
	}
	f.Add([]byte("{\"kind\":\"latency\",\"schema_version\":1}\n{\"kind"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := results.ParseLatency(data)
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.Kind != "latency" || r.Schema > results.SchemaVersion {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

func FuzzParsePreflight(f *testing.F) {
	f.Add(bundletest.PreflightNoFio)
	f.Add([]byte(`{"checks":[{"name":"io_uring","status":"fail"}],"fio":{"results":[{"block_bytes":512,"iops":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := results.ParsePreflight(data)
		if err != nil {
			return
		}
		if len(p.Checks) == 0 {
			t.Fatalf("accepted a preflight without checks")
		}
		_ = p.Failed()
		_ = p.FioIOPS(512)
	})
}

func TestParsePreflight(t *testing.T) {
	p, err := results.ParsePreflight(append([]byte("warning: before the document\n"), bundletest.PreflightNoFio...))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Failed()) != 0 || p.FioIOPS(512) != 0 || len(p.Fingerprint) == 0 || len(p.Checks) == 0 {
		t.Errorf("got %d checks, %d failed, fio %v, fingerprint %d bytes; want some, 0, 0, some", len(p.Checks), len(p.Failed()), p.FioIOPS(512), len(p.Fingerprint))
	}
	for _, bad := range []string{`{"checks":[]}`, "no document", `{"checks":`} {
		if _, err := results.ParsePreflight([]byte(bad)); err == nil {
			t.Errorf("ParsePreflight(%q): got no error", bad)
		}
	}
}

func TestJudgePass(t *testing.T) {
	tests := []struct {
		name                     string
		rec                      results.PassRecord
		maxMiss                  float64
		miss, memory, unverified bool
	}{
		{"storage-bound", results.PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 512 * 1000}, 0, false, false, false},
		{"quick profile, 4 % in memory", results.PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 492 * 1000}, 0, false, false, false},
		{"memory-served", results.PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 4096}, 0, false, true, false},
		{"misses", results.PassRecord{Ops: 1000, Hits: 990, Misses: 10, ReadBytes: 512 * 1000}, 0, true, false, false},
		{"one miss, default tolerance", results.PassRecord{Ops: 1000, Hits: 999, Misses: 1, ReadBytes: 512 * 1000}, 0, true, false, false},
		{"0.1 % misses within --max-miss-ratio 0.001", results.PassRecord{Ops: 1000, Hits: 999, Misses: 1, ReadBytes: 512 * 1000}, 0.001, false, false, false},
		{"0.2 % misses beyond --max-miss-ratio 0.001", results.PassRecord{Ops: 1000, Hits: 998, Misses: 2, ReadBytes: 512 * 1000}, 0.001, true, false, false},
		{"errors count as misses", results.PassRecord{Ops: 1000, Hits: 900, Errors: 100, ReadBytes: 512 * 1000}, 0.001, true, false, false},
		{"no ops", results.PassRecord{ReadBytes: 0}, 0, true, true, false},
		{"no pid", results.PassRecord{Ops: 1000, Hits: 1000, ReadBytes: -1}, 0, false, false, true},
		// A 50/50 GET/SET mix reads a sector per GET and none per SET:
		// storage-bound per GET, though half a sector per op.
		{"mix, per GET", results.PassRecord{Ops: 1000, Gets: 500, Hits: 1000, ReadBytes: 512 * 500}, 0, false, false, false},
		{"mix, memory-served", results.PassRecord{Ops: 1000, Gets: 500, Hits: 1000, ReadBytes: 4096}, 0, false, true, false},
	}
	for _, tt := range tests {
		results.JudgePass(&tt.rec, tt.maxMiss)
		if tt.rec.TooManyMiss != tt.miss || tt.rec.MemoryServed != tt.memory || tt.rec.Unverified != tt.unverified {
			t.Errorf("%s: got misses %v memory %v unverified %v; want %v %v %v", tt.name,
				tt.rec.TooManyMiss, tt.rec.MemoryServed, tt.rec.Unverified, tt.miss, tt.memory, tt.unverified)
		}
	}
}

// TestAboveCeilingNamesSteal: an above-ceiling cell whose fio ran while
// the hypervisor took noticeably more CPU time than during the cell names
// that first; the re-measurement's steal stands for the sweep's when it ran.
func TestAboveCeilingNamesSteal(t *testing.T) {
	row := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	share := func(v float64) *float64 { return &v }
	busy, quiet := share(0.053), share(0.001)
	tests := []struct {
		name      string
		sweep     *float64
		rec       *results.CeilingRecord
		cell      *float64
		wantSteal string // "": the shared-disk wording alone
	}{
		{"sweep not quiet, cell quiet", busy, nil, quiet, "the host was not quiet while fio ran: the hypervisor took 5.3 % of its CPU time (steal), against 0.1 % during the cell"},
		{"sweep not quiet, cell not read", busy, nil, nil, "the hypervisor took 5.3 % of its CPU time (steal); or the disk"},
		{"quiet sweep", quiet, nil, quiet, ""},
		{"the cell had more", busy, nil, share(0.08), ""},
		{"re-measured on a quiet host", busy, &results.CeilingRecord{Row: row, Threads: 8, IOPS: 95_000, FioCost: results.FioCost{StealShare: quiet}}, quiet, ""},
		{"re-measured on a busy host", quiet, &results.CeilingRecord{Row: row, Threads: 8, IOPS: 95_000, FioCost: results.FioCost{StealShare: share(0.02)}}, quiet, "took 2.0 % of its CPU time"},
	}
	for _, tt := range tests {
		cells := []results.Cell{{Row: row, Threads: 8, Passes: 2, Median: 110_000,
			CellEvidence: results.CellEvidence{DiskReadsPerSec: 108_000, DiskQueueDepth: 240, HostStealShare: tt.cell}}}
		var recs []results.CeilingRecord
		if tt.rec != nil {
			recs = append(recs, *tt.rec)
		}
		results.ApplyCeilings(cells, recs, results.Ceilings{Host: results.FioCeiling{IOPS: 100_000, StealShare: tt.sweep}})
		why := cells[0].AboveCeilingWhy
		if !cells[0].AboveCeiling || !strings.Contains(why, "the disk was shared with other work") {
			t.Errorf("%s: got above %v why %q, want the mark and the shared-disk cause", tt.name, cells[0].AboveCeiling, why)
		}
		if got := strings.Contains(why, "not quiet"); got != (tt.wantSteal != "") || !strings.Contains(why, tt.wantSteal) {
			t.Errorf("%s: got why %q, want steal named %v (%q)", tt.name, why, tt.wantSteal != "", tt.wantSteal)
		}
	}
}
