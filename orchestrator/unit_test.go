package orchestrator

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/size"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

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
		med, lo, hi := median(tt.in)
		if med != tt.med || lo != tt.lo || hi != tt.hi {
			t.Errorf("median(%v) = %v, %v, %v; want %v, %v, %v", tt.in, med, lo, hi, tt.med, tt.lo, tt.hi)
		}
		if !slices.Equal(in, tt.in) {
			t.Errorf("median modified its input: got %v, want %v", tt.in, in)
		}
	}
}

func TestFormatOps(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{7_060_000, "7.06 M"},
		{1_820_000, "1.82 M"},
		{999_600, "1.00 M"},
		{999_000, "999 K"},
		{123_456, "123 K"},
		{12_345, "12 K"},
		{9_994, "10 K"},
		{9_940, "9.9 K"},
		{1_000, "1.0 K"},
		{999, "999"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := FormatOps(tt.in); got != tt.want {
			t.Errorf("FormatOps(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// referencePlan is the reference's four rows with three passes.
func referencePlan() Plan {
	cfg, _ := Config{Profile: ProfileReference}.resolve(func(string) string { return "" })
	return Plan{Schema: SchemaVersion, RunID: "test-run", MaxMisses: 0, Runtime: RuntimeProcess, Nodes: 2,
		Config: cfg,
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
		for j, t := range plan.Config.Threads {
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

func TestAggregate(t *testing.T) {
	plan := referencePlan()
	cells := aggregate(plan, referencePasses(plan), nil, 8.2e6)
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
	if got := cells[4].Excluded; got != excludedMemoryServed {
		t.Errorf("libaio no pin t=8: excluded %q, want %q", got, excludedMemoryServed)
	}
	if got := cells[11].Excluded; got != excludedMisses {
		t.Errorf("uring pinned t=64: excluded %q, want %q", got, excludedMisses)
	}
	if got := cells[15].Passes; got != 0 {
		t.Errorf("uring no pin t=64: got %d passes, want 0 (not measured)", got)
	}
}

func TestAggregateCountsEachPassOnce(t *testing.T) {
	plan := referencePlan()
	plan.Config.Passes = 2
	row := plan.Rows[0]
	recs := []PassRecord{
		{Row: row, Threads: 8, Pass: 1, Ops: 10, OpsPerSec: 100, Hits: 10, ReadBytes: 5120},
		{Row: row, Threads: 8, Pass: 1, Ops: 10, OpsPerSec: 900, Hits: 10, ReadBytes: 5120}, // duplicate of pass 1
		{Row: row, Threads: 8, Pass: 2, Ops: 10, OpsPerSec: 200, Hits: 10, ReadBytes: 5120},
		{Row: row, Threads: 8, Pass: 3, Ops: 10, OpsPerSec: 300, Hits: 10, ReadBytes: 5120}, // beyond --passes
	}
	c := aggregate(plan, recs, nil, 0)[0]
	if c.Passes != 2 || c.Median != 150 {
		t.Errorf("got %d passes, median %v; want 2 passes, median 150", c.Passes, c.Median)
	}
}

func TestFailedRowIsMarked(t *testing.T) {
	plan := referencePlan()
	recs := referencePasses(plan)
	// uring pinned lost its t=48 and t=64 passes when its server hung.
	var kept []PassRecord
	for _, r := range recs {
		if !(r.Row == plan.Rows[2] && r.Threads >= 48) {
			kept = append(kept, r)
		}
	}
	fails := []FailRecord{{Kind: "fail", Row: plan.Rows[2], Error: "the server stopped answering"}}
	cells := aggregate(plan, kept, fails, 0)
	if cells[8].Excluded != "" || cells[10].Excluded != excludedFailed || cells[11].Excluded != excludedFailed {
		t.Errorf("uring pinned: excluded %q %q %q; want the finished t=8 shown, t=48 and t=64 failed", cells[8].Excluded, cells[10].Excluded, cells[11].Excluded)
	}
	table, err := renderTable(plan, cells)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "| Uring   | srv node-0 / cli node-1 | 1.82 M      | 6.13 M | failed* | failed* |") || !strings.Contains(table, "failed*: the row failed") {
		t.Errorf("table does not mark the failed row's cells:\n%s", table)
	}
}

func TestTableGolden(t *testing.T) {
	plan := referencePlan()
	table, err := renderTable(plan, aggregate(plan, referencePasses(plan), nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "table.golden.md")
	if *update {
		if err := os.WriteFile(golden, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if table != string(want) {
		t.Errorf("table differs from %s:\ngot:\n%s\nwant:\n%s", golden, table, want)
	}
	for _, s := range []string{"| backend | NUMA", "| t=8 ", "| t=64 ", "| Libaio  | srv node-0 / cli node-1 | 1.82 M", "mem-served*", "misses*"} {
		if !strings.Contains(table, s) {
			t.Errorf("table lacks %q:\n%s", s, table)
		}
	}
}

func TestBundleRoundTrip(t *testing.T) {
	dir := t.TempDir()
	plan := referencePlan()
	recs := referencePasses(plan)[:5]
	l, err := openCellsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	load := LoadRecord{Kind: "load", Schema: SchemaVersion, Row: plan.Rows[0], DBSize: 100, Acknowledged: 100, ServerKeys: 100,
		Tiered: true, HeadAddress: 990, TailAddress: 1000, DeviceShare: 0.99, Time: time.Unix(1, 0).UTC()}
	if err := l.append(load); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Time = time.Unix(2, 0).UTC()
		if err := l.append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	gotPasses, gotLoads, err := readCells(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotPasses) != len(recs) || len(gotLoads) != 1 {
		t.Fatalf("got %d passes and %d loads, want %d and 1", len(gotPasses), len(gotLoads), len(recs))
	}
	for i := range recs {
		recs[i].Time = time.Unix(2, 0).UTC()
		if !reflect.DeepEqual(gotPasses[i], recs[i]) {
			t.Errorf("pass %d: got %+v, want %+v", i, gotPasses[i], recs[i])
		}
	}
	if !reflect.DeepEqual(gotLoads[0], load) {
		t.Errorf("load: got %+v, want %+v", gotLoads[0], load)
	}

	// A torn last line (killed while writing) is dropped; the rest stays.
	f, _ := os.OpenFile(filepath.Join(dir, fileCells), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"pass","schema_version":1,"row":{"backe`)
	f.Close()
	gotPasses, _, err = readCells(dir)
	if err != nil || len(gotPasses) != len(recs) {
		t.Errorf("torn last line: got %d passes, err %v; want %d, nil", len(gotPasses), err, len(recs))
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
		_, _, err := parseCells([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
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
		l.append(LoadRecord{Kind: "load", Schema: SchemaVersion, Row: row, DBSize: 100_000_000, Acknowledged: 100_000_000,
			ServerKeys: 100_000_000, Tiered: true, BeginAddress: 64, HeadAddress: 12_783_000_064, TailAddress: 12_800_000_064,
			DeviceShare: 12_783_000_000.0 / 12_800_000_000})
	}
	for _, r := range referencePasses(plan) {
		l.append(r)
	}
	return dir
}

func TestReportRerender(t *testing.T) {
	dir := writeBundle(t, true)
	var out bytes.Buffer
	if err := Report(t.Context(), ReportConfig{Dir: dir}, &out); err != nil {
		t.Fatal(err)
	}
	table, _ := os.ReadFile(filepath.Join(dir, fileTable))
	golden, _ := os.ReadFile(filepath.Join("testdata", "table.golden.md"))
	if string(table) != string(golden) || out.String() != string(golden) {
		t.Errorf("re-rendered table.md / stdout differ from the golden table:\n%s\nstdout:\n%s", table, out.String())
	}
	report, _ := os.ReadFile(filepath.Join(dir, fileReport))
	for _, want := range []string{
		"## Host", "Host — 1× AMD EPYC", "fio random-read ceiling on this disk: 8.24 M IOPS at 4 K and 8.20 M IOPS at 512 B (the best of a depth sweep over 64–4096 reads in flight: 32 jobs × QD64, io_uring, O_DIRECT, 8 files)",
		"over 8 fio files × 1.6 GiB = 12.5 GiB, as large as the dataset (100000000 × 128 B = 11.9 GiB)",
		"| 64 | 1 × 64 | 900 K | 439.5 | 70 | 90 |  |", "| 2048 | 32 × 64 | 8.20 M | 4003.9 | 240 | 600 | ceiling |", "| 4096 | 32 × 128 | 8.10 M |",
		"## Share of the fio ceiling", "| Libaio | srv node-0 / cli node-1 | 22.2 % | 69.5 % | 85.0 % | 86.1 % |",
		"## Load evidence", "100000000 (100.00 %)", "99.87 %",
		"## Device-hit evidence", "memory-served",
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var res Results
	if err := readJSON(dir, fileResults, &res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != SchemaVersion || len(res.Cells) != 16 || len(res.Loads) != 4 || res.FioIOPS512 != 8.2e6 {
		t.Errorf("results.json: schema %d, %d cells, %d loads, fio %v; want %d, 16, 4, 8.2e6", res.Schema, len(res.Cells), len(res.Loads), res.FioIOPS512, SchemaVersion)
	}

	// Without a fio baseline the report says so instead of dividing.
	dir = writeBundle(t, false)
	if err := Report(t.Context(), ReportConfig{Dir: dir}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	report, _ = os.ReadFile(filepath.Join(dir, fileReport))
	if !strings.Contains(string(report), "No fio baseline") {
		t.Errorf("report.md without fio lacks the no-baseline note")
	}
}

func TestReportErrors(t *testing.T) {
	if err := Report(t.Context(), ReportConfig{Dir: t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "plan.json") {
		t.Errorf("empty dir: got %v, want an error naming plan.json", err)
	}
	if err := Report(t.Context(), ReportConfig{}, &bytes.Buffer{}); err == nil {
		t.Errorf("no dir: got nil error")
	}
}

func TestParseBench(t *testing.T) {
	tests := []struct {
		file     string
		wantErr  string
		wantOps  int64
		wantLoad int64
	}{
		{"bench-load.json", "", 0, 20000},
		{"bench-cell.json", "", 839360, -1},
		{"bench-warning.txt", "", 839360, -1},
		{"bench-error.txt", "no JSON document", 0, -1},
		{"bench-negative.json", "negative counts", 0, -1},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		out, err := parseBench(data)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got error %v, want %q", tt.file, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if tt.wantOps > 0 && (len(out.Cells) != 1 || out.Cells[0].Ops != tt.wantOps || out.Cells[0].Threads != 2) {
			t.Errorf("%s: got cells %+v, want one with %d ops at t=2", tt.file, out.Cells, tt.wantOps)
		}
		if tt.wantLoad >= 0 && (out.Load == nil || out.Load.Acknowledged != tt.wantLoad) {
			t.Errorf("%s: got load %+v, want %d acknowledged", tt.file, out.Load, tt.wantLoad)
		}
	}
}

func TestParsePreflight(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "preflight-nofio.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePreflight(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.failed()) != 0 || p.fioIOPS(512) != 0 || len(p.Fingerprint) == 0 {
		t.Errorf("got %d failed checks, fio %v, fingerprint %d bytes; want 0, 0, some", len(p.failed()), p.fioIOPS(512), len(p.Fingerprint))
	}
	if err := uringUsable(p); err != nil {
		t.Errorf("uringUsable: %v", err)
	}
	side := serverSide(p)
	var names []string
	for _, c := range side.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"odirect", "io_uring", "libaio"}; !slices.Equal(names, want) {
		t.Errorf("serverSide checks: got %v, want %v", names, want)
	}
	failed := bytes.Replace(data, []byte(`"status": "pass",
      "detail": "kernel.io_uring_disabled`), []byte(`"status": "fail",
      "detail": "kernel.io_uring_disabled`), 1)
	p, err = parsePreflight(failed)
	if err != nil {
		t.Fatal(err)
	}
	if err := uringUsable(p); !errors.Is(err, errUringRefused) {
		t.Errorf("uringUsable with a failed io_uring check: got %v, want errUringRefused", err)
	}
	if _, err := parsePreflight([]byte(`{"checks":[]}`)); err == nil {
		t.Errorf("no checks: got nil error")
	}
}

func TestProcFiles(t *testing.T) {
	proc := procRoot("testdata/proc")
	rb, err := proc.readBytes(4242)
	if err != nil || rb != 2621440000 {
		t.Errorf("readBytes: got %d, %v; want 2621440000", rb, err)
	}
	pl, err := proc.placement(4242)
	if err != nil {
		t.Fatal(err)
	}
	if pl.CPUs != "0-3,8" || pl.Mems != "0" || pl.Policy != "bind:0" {
		t.Errorf("placement: got %+v, want cpus 0-3,8 mems 0 policy bind:0", pl)
	}
	if _, err := proc.readBytes(1); err == nil {
		t.Errorf("readBytes of a missing pid: got nil error")
	}
	for _, bad := range []string{"rchar: 1\n", "read_bytes: lots\n"} {
		if _, err := parseProcIO([]byte(bad)); err == nil {
			t.Errorf("parseProcIO(%q): got nil error", bad)
		}
	}
}

func TestCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"0", []int{0}, false},
		{"0-3,8", []int{0, 1, 2, 3, 8}, false},
		{"8,0-1,1", []int{0, 1, 8}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"-1", nil, true},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil && len(got) > 0 {
			back, _ := parseCPUList(formatCPUList(got))
			if !slices.Equal(back, got) {
				t.Errorf("formatCPUList round trip of %v: got %v", got, back)
			}
		}
	}
	if got := formatCPUList([]int{0, 1, 2, 3, 8, 10, 11}); got != "0-3,8,10-11" {
		t.Errorf("formatCPUList: got %q, want 0-3,8,10-11", got)
	}
}

func TestCheckPlacement(t *testing.T) {
	tests := []struct {
		pl   Placement
		fail bool
	}{
		{Placement{CPUs: "0-1", Mems: "0"}, false},
		{Placement{WantCPUs: "0", WantMems: "0", CPUs: "0", Mems: "0"}, false},
		{Placement{WantCPUs: "0", WantMems: "0", CPUs: "0-1", Mems: "0"}, true},
		{Placement{WantCPUs: "0-55", WantMems: "1", CPUs: "0-55", Mems: "0-1"}, true},                    // cpuset-mems not honoured
		{Placement{WantCPUs: "0-55", WantMems: "1", CPUs: "0-55", Mems: "0-1", Policy: "bind:1"}, false}, // bound by mempolicy
	}
	for _, tt := range tests {
		if err := checkPlacement("server", tt.pl); (err != nil) != tt.fail {
			t.Errorf("checkPlacement(%+v) = %v; want failure %v", tt.pl, err, tt.fail)
		}
	}
}

func TestTopology(t *testing.T) {
	two := readTopology("testdata/sys", 224)
	p, err := two.pinned()
	if err != nil || p.ServerCPUs != "0-55,112-167" || p.ClientCPUs != "56-111,168-223" || p.ServerMems != "0" || p.ClientMems != "1" || p.Label != "srv node-0 / cli node-1" {
		t.Errorf("two nodes: got %+v, %v", p, err)
	}
	one := readTopology("testdata/sys1", 2)
	p, err = one.pinned()
	if err != nil || p.ServerCPUs != "0" || p.ClientCPUs != "1" || p.Label != "srv cpus 0 / cli cpus 1 (1 node)" {
		t.Errorf("one node: got %+v, %v", p, err)
	}
	none := readTopology(t.TempDir(), 1)
	if _, err := none.pinned(); err == nil {
		t.Errorf("one CPU: got nil error, want a refusal to pin")
	}
}

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	ref, err := Config{Profile: ProfileReference}.resolve(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if ref.DBSize != 100_000_000 || ref.Batch != 1024 || ref.CellSeconds != 12 || ref.Passes != 3 || ref.Index != "8g" ||
		!slices.Equal(ref.Threads, []int{8, 32, 48, 64}) || !slices.Equal(ref.Backends, []string{"libaio", "uring"}) {
		t.Errorf("reference profile: got %+v", ref)
	}
	quick, err := Config{}.resolve(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := size.Parse(quick.Memory)
	if quick.Profile != ProfileQuick || quick.DBSize*int64(recordBytes(quick.KeyLength, quick.ValueLength)) < 20*mem ||
		!slices.Equal(quick.Threads, []int{8, 32, 48, 64}) {
		t.Errorf("quick profile: got %+v; want the reference's columns with the dataset ≥ 20 × memory", quick)
	}
	got, err := Config{Passes: 5}.resolve(env(map[string]string{"DATA": "/mnt/x", "THREADS": "8 16", "PASSES": "2", "RUNTIME": "7"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.DataDir != "/mnt/x" || !slices.Equal(got.Threads, []int{8, 16}) || got.Passes != 5 || got.CellSeconds != 7 {
		t.Errorf("environment overrides: got data %q threads %v passes %d cell %d; want /mnt/x, [8 16], 5 (flag wins), 7",
			got.DataDir, got.Threads, got.Passes, got.CellSeconds)
	}
	bad := []struct {
		cfg  Config
		env  map[string]string
		want string
	}{
		{Config{Profile: "huge"}, nil, `unknown --profile "huge"`},
		{Config{}, map[string]string{"THREADS": "8,x"}, "THREADS"},
		{Config{}, map[string]string{"PASSES": "0"}, "PASSES"},
		{Config{Backends: []string{"spdk"}}, nil, `unknown backend "spdk"`},
		{Config{Pins: []string{"half"}}, nil, `unknown pin mode "half"`},
		{Config{Runtime: "vm"}, nil, `--runtime "vm"`},
		{Config{DBSize: 1000}, nil, "less than 20 × --memory"},
		{Config{Memory: "lots"}, nil, `size "lots"`},
		{Config{SkipLoad: true}, nil, "--skip-load needs --server-addr"},
	}
	for _, tt := range bad {
		_, err := tt.cfg.resolve(env(tt.env))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("resolve(%+v, env %v): got %v, want an ErrConfig containing %q", tt.cfg, tt.env, err, tt.want)
		}
	}
	if _, err := (Config{DBSize: 1000, Force: true}).resolve(env(nil)); err != nil {
		t.Errorf("--force with a small dataset: got %v, want it accepted (the device-hit check judges)", err)
	}
}

func TestVerifyLoad(t *testing.T) {
	cfg := Config{Memory: "16m", Page: "4m"}
	skip := Config{SkipLoad: true, ServerAddr: "127.0.0.1:6379"}
	mb := uint64(1 << 20)
	const n = 100_000
	tests := []struct {
		name string
		cfg  Config
		rec  LoadRecord
		want string // "" = accepted
	}{
		{"complete", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n}, ""},
		{"99.9 % acknowledged", cfg, LoadRecord{DBSize: n, Acknowledged: n - 100, ServerKeys: n - 100}, "loader saw 99900 of 100000 keys acknowledged (99.90 %, 100 missing"},
		{"99.99 % acknowledged", cfg, LoadRecord{DBSize: n, Acknowledged: n - 10, ServerKeys: n - 10}, "(99.99 %, 10 missing"},
		{"one key short", cfg, LoadRecord{DBSize: n, Acknowledged: n - 1, ServerKeys: n - 1}, "(99.999 %, 1 missing"},
		{"acknowledged but lost", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n - 1}, "server holds 99999 keys after a load of 100000 (99.999 %"},
		{"others there before", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n + 1}, "server holds 100001 keys after a load of 100000"},
		{"skip-load exact", skip, LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n}, ""},
		{"skip-load more keys", skip, LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: 2 * n}, ""},
		{"skip-load 99.9 %", skip, LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 100}, "holds 99900 keys, 100 fewer than --dbsize 100000 (99.90 %)"},
		{"skip-load 99.99 %", skip, LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 10}, "(99.99 %)"},
		{"skip-load one short", skip, LoadRecord{DBSize: n, Acknowledged: -1, ServerKeys: n - 1}, "1 fewer than --dbsize 100000 (99.999 %); refusing to measure a partial load"},
		{"100 M, one short", skip, LoadRecord{DBSize: 100_000_000, Acknowledged: -1, ServerKeys: 99_999_999}, "(99.999999 %)"},
		{"reference log on device", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 12_783 * mb, TailAddress: 12_800 * mb}, ""},
		{"quick: memory-sized remainder", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 316 * mb, TailAddress: 330 * mb, DeviceShare: 316.0 / 330}, ""},
		{"whole log in memory", cfg, LoadRecord{DBSize: n, Acknowledged: n, ServerKeys: n, Tiered: true,
			BeginAddress: 64, HeadAddress: 64, TailAddress: 25 * mb}, "of the log is on the device"},
	}
	for _, tt := range tests {
		if tt.rec.Tiered && tt.rec.DeviceShare == 0 {
			tt.rec.DeviceShare = logAddresses{tt.rec.BeginAddress, tt.rec.HeadAddress, tt.rec.TailAddress}.deviceShare()
		}
		err := verifyLoad(tt.rec, tt.cfg)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: got %v, want an ErrRefused (exit 4)", tt.name, err)
		}
		if err != nil && strings.Contains(tt.want, "keys") && !errors.Is(err, ErrPartialLoad) {
			t.Errorf("%s: got %v, want ErrPartialLoad", tt.name, err)
		}
	}
}

func TestFormatPercentBeside(t *testing.T) {
	tests := []struct {
		v, threshold float64
		want         string
	}{
		{0.98996, 0.99, "98.996 %"},
		{0.99, 0.99, "99.00 %"},
		{0.00102, 0.001, "0.102 %"},
		{0.0010001, 0.001, "0.10001 %"},
		{0.0009999, 0.001, "0.09999 %"},
		{0.5, 0.001, "50.00 %"},
		{0.99999999, 1, "99.999999 %"},
		{0, 0, "0.00 %"},
		{0.00102, 0, "0.102 %"},
		{0.00185, 0, "0.185 %"},
		{1e-9, 0, "0.0000001 %"},
	}
	for _, tt := range tests {
		if got := formatPercentBeside(tt.v, tt.threshold); got != tt.want {
			t.Errorf("formatPercentBeside(%v, %v) = %q, want %q", tt.v, tt.threshold, got, tt.want)
		}
	}
}

func TestJudgePass(t *testing.T) {
	tests := []struct {
		name                     string
		rec                      PassRecord
		maxMiss                  float64
		miss, memory, unverified bool
	}{
		{"storage-bound", PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 512 * 1000}, 0, false, false, false},
		{"quick profile, 4 % in memory", PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 492 * 1000}, 0, false, false, false},
		{"memory-served", PassRecord{Ops: 1000, Hits: 1000, ReadBytes: 4096}, 0, false, true, false},
		{"misses", PassRecord{Ops: 1000, Hits: 990, Misses: 10, ReadBytes: 512 * 1000}, 0, true, false, false},
		{"one miss, default tolerance", PassRecord{Ops: 1000, Hits: 999, Misses: 1, ReadBytes: 512 * 1000}, 0, true, false, false},
		{"0.1 % misses within --max-miss-ratio 0.001", PassRecord{Ops: 1000, Hits: 999, Misses: 1, ReadBytes: 512 * 1000}, 0.001, false, false, false},
		{"0.2 % misses beyond --max-miss-ratio 0.001", PassRecord{Ops: 1000, Hits: 998, Misses: 2, ReadBytes: 512 * 1000}, 0.001, true, false, false},
		{"errors count as misses", PassRecord{Ops: 1000, Hits: 900, Errors: 100, ReadBytes: 512 * 1000}, 0.001, true, false, false},
		{"no ops", PassRecord{ReadBytes: 0}, 0, true, true, false},
		{"no pid", PassRecord{Ops: 1000, Hits: 1000, ReadBytes: -1}, 0, false, false, true},
	}
	for _, tt := range tests {
		judgePass(&tt.rec, tt.maxMiss)
		if tt.rec.TooManyMiss != tt.miss || tt.rec.MemoryServed != tt.memory || tt.rec.Unverified != tt.unverified {
			t.Errorf("%s: got misses %v memory %v unverified %v; want %v %v %v", tt.name,
				tt.rec.TooManyMiss, tt.rec.MemoryServed, tt.rec.Unverified, tt.miss, tt.memory, tt.unverified)
		}
	}
}

func TestParseInfoAndAddresses(t *testing.T) {
	info := parseInfo("# Store\r\nLog.BeginAddress:64\r\nLog.HeadAddress:24576000\r\nLog.TailAddress:25600128\r\nweird line\r\n")
	a, err := parseLogAddresses(info)
	if err != nil || a.Begin != 64 || a.Head != 24576000 || a.Tail != 25600128 {
		t.Errorf("got %+v, %v", a, err)
	}
	if s := a.deviceShare(); s < 0.959 || s > 0.961 {
		t.Errorf("deviceShare: got %v, want ≈ 0.96", s)
	}
	if _, err := parseLogAddresses(parseInfo("# Server\r\nredis_version:7.0.15\r\n")); !errors.Is(err, errNotTiered) {
		t.Errorf("redis INFO: got %v, want errNotTiered", err)
	}
	if _, err := parseLogAddresses(map[string]string{"Log.HeadAddress": "9", "Log.TailAddress": "5"}); err == nil {
		t.Errorf("head above tail: got nil error")
	}
}

func TestStatStartTime(t *testing.T) {
	line := "4242 (tier bench) (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 9 0 987654 123 45"
	if got := parseStatStartTime([]byte(line)); got != 987654 {
		t.Errorf("got %d, want 987654", got)
	}
	if got := startTime(os.Getpid()); got == 0 || !alive(os.Getpid(), got) {
		t.Errorf("own start time %d not alive", got)
	}
}

func TestParseCapBnd(t *testing.T) {
	caps := parseCapBnd([]byte("CapInh:\t0\nCapBnd:\t000001fffeffffff\n"))
	if slices.Contains(caps, "SYS_RESOURCE") || !slices.Contains(caps, "SYS_ADMIN") || slices.Contains(caps, "BPF") {
		t.Errorf("got %v; want SYS_ADMIN without SYS_RESOURCE (bit 24 clear) and without BPF", caps)
	}
}

// TestDockerfilesAgree keeps the root Dockerfile's instructions equal to
// the embedded one the Docker runtime builds from.
func TestDockerfilesAgree(t *testing.T) {
	instructions := func(s string) []string {
		var out []string
		for line := range strings.SplitSeq(s, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
		return out
	}
	root, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := os.ReadFile(filepath.Join("..", "images", "tierbench.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := instructions(string(root)), instructions(string(embedded)); !slices.Equal(got, want) {
		t.Errorf("root Dockerfile instructions %q differ from images/tierbench.Dockerfile %q", got, want)
	}
	if got := instructions(string(embedded)); len(got) == 0 || got[0] != "FROM scratch" {
		t.Errorf("image must be FROM scratch, got %q", got)
	}
}

func TestCheckStatic(t *testing.T) {
	if err := checkStatic("/bin/ls"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("checkStatic(/bin/ls) = %v, want a dynamically-linked refusal", err)
	}
	if err := checkStatic(filepath.Join("testdata", "bench-cell.json")); err == nil || !strings.Contains(err.Error(), "not an ELF binary") {
		t.Errorf("checkStatic(a JSON file) = %v, want not an ELF binary", err)
	}
}
