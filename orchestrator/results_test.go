package orchestrator

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
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
	plan.Workload.Passes = 2
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
	if err := l.Append(load); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Time = time.Unix(2, 0).UTC()
		if err := l.Append(r); err != nil {
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
