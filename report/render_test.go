package report

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

func TestFailedRowIsMarked(t *testing.T) {
	plan := referencePlan()
	recs := referencePasses(plan)
	// uring pinned lost its t=48 and t=64 passes when its server hung.
	var kept []results.PassRecord
	for _, r := range recs {
		if !(r.Row == plan.Rows[2] && r.Threads >= 48) {
			kept = append(kept, r)
		}
	}
	fails := []results.FailRecord{{Kind: "fail", Row: plan.Rows[2], Error: "the server stopped answering"}}
	cells := results.Aggregate(plan, kept, fails, 0)
	if cells[8].Excluded != "" || cells[10].Excluded != results.ExcludedFailed || cells[11].Excluded != results.ExcludedFailed {
		t.Errorf("uring pinned: excluded %q %q %q; want the finished t=8 shown, t=48 and t=64 failed", cells[8].Excluded, cells[10].Excluded, cells[11].Excluded)
	}
	table, err := Table(plan, cells)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "| Uring   | srv node-0 / cli node-1 | 1.82 M      | 6.13 M | failed* | failed* |") || !strings.Contains(table, "failed*: the row failed") {
		t.Errorf("table does not mark the failed row's cells:\n%s", table)
	}
}

func TestTableGolden(t *testing.T) {
	plan := referencePlan()
	table, err := Table(plan, results.Aggregate(plan, referencePasses(plan), nil, 0))
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
	l, err := results.OpenCellsLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	load := results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: plan.Rows[0], DBSize: 100, Acknowledged: 100, ServerKeys: 100,
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
	gotPasses, gotLoads, err := results.ReadCells(dir)
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
	f, _ := os.OpenFile(filepath.Join(dir, results.FileCells), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"kind":"pass","schema_version":1,"row":{"backe`)
	f.Close()
	gotPasses, _, err = results.ReadCells(dir)
	if err != nil || len(gotPasses) != len(recs) {
		t.Errorf("torn last line: got %d passes, err %v; want %d, nil", len(gotPasses), err, len(recs))
	}
}

func TestReportRerender(t *testing.T) {
	dir := writeBundle(t, true)
	var out bytes.Buffer
	if err := runReport(dir, false, &out); err != nil {
		t.Fatal(err)
	}
	table, _ := os.ReadFile(filepath.Join(dir, results.FileTable))
	golden, _ := os.ReadFile(filepath.Join("testdata", "table.golden.md"))
	if string(table) != string(golden) || out.String() != string(golden) {
		t.Errorf("re-rendered table.md / stdout differ from the golden table:\n%s\nstdout:\n%s", table, out.String())
	}
	report, _ := os.ReadFile(filepath.Join(dir, results.FileReport))
	for _, want := range []string{
		"## Host", "Host — 1× AMD EPYC", "fio random-read ceiling on this disk: 8.24 M IOPS at 4 K and 8.20 M IOPS at 512 B (the best of a depth sweep over 64–4096 reads in flight: 32 jobs × QD64, io_uring, O_DIRECT, 8 files)",
		"over 8 fio files × 1.6 GiB = 12.5 GiB, as large as the dataset (100000000 × 128 B = 11.9 GiB)",
		"| 64 | 1 × 64 | 900 K | 439.5 | 70 | 90 | — | — |  |", "| 2048 | 32 × 64 | 8.20 M | 4003.9 | 240 | 600 | — | — | ceiling |", "| 4096 | 32 × 128 | 8.10 M |",
		"## Share of the fio ceiling", "| Libaio | srv node-0 / cli node-1 | host, 8.20 M | 22.2 % | 69.5 % | 85.0 % | 86.1 % |",
		"## Load evidence", "100000000 (100.00 %)", "99.87 %",
		"## Device-hit evidence", "memory-served",
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var res results.Results
	if err := results.ReadJSON(dir, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != results.SchemaVersion || len(res.Cells) != 16 || len(res.Loads) != 4 || res.FioIOPS512 != 8.2e6 {
		t.Errorf("results.json: schema %d, %d cells, %d loads, fio %v; want %d, 16, 4, 8.2e6", res.Schema, len(res.Cells), len(res.Loads), res.FioIOPS512, results.SchemaVersion)
	}

	// Without a fio baseline the report says so instead of dividing.
	dir = writeBundle(t, false)
	if err := runReport(dir, false, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	report, _ = os.ReadFile(filepath.Join(dir, results.FileReport))
	if !strings.Contains(string(report), "No fio baseline") {
		t.Errorf("report.md without fio lacks the no-baseline note")
	}
}

func TestReportErrors(t *testing.T) {
	if err := runReport(t.TempDir(), false, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "plan.json") {
		t.Errorf("empty dir: got %v, want an error naming plan.json", err)
	}
	if err := runReport("", false, &bytes.Buffer{}); err == nil {
		t.Errorf("no dir: got nil error")
	}
}

// TestReportRendersOldBundle renders a bundle written by schema 1 (before
// scenarios) and requires the same table.md it wrote and the report.md of
// testdata/bundle-v1, its golden: rewritten by -update when report.md's
// layout changes on purpose.
func TestReportRendersOldBundle(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "bundle-v1")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	if err := runReport(dir, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	if *update {
		got, _ := os.ReadFile(filepath.Join(dir, results.FileReport))
		if err := os.WriteFile(filepath.Join(src, results.FileReport), got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{results.FileTable, results.FileReport} {
		want, _ := os.ReadFile(filepath.Join(src, f))
		got, _ := os.ReadFile(filepath.Join(dir, f))
		if string(got) != string(want) {
			t.Errorf("%s of a schema 1 bundle: got\n%s\nwant (as written)\n%s", f, got, want)
		}
	}
	var res results.Results
	if err := results.ReadJSON(dir, results.FileResults, &res); err != nil {
		t.Fatal(err)
	}
	if res.Scenario != results.ScenarioStorage || res.Schema != results.SchemaVersion {
		t.Errorf("results.json of an old bundle: scenario %q schema %d, want %q and %d", res.Scenario, res.Schema, results.ScenarioStorage, results.SchemaVersion)
	}
}

func TestRenderCurveNotes(t *testing.T) {
	cfg := results.Workload{DBSize: 1000, KeyLength: 16, ValueLength: 96}
	quiet, busy := 0.002, 0.04
	pt := func(depth int, iops float64) hostcheck.FIOPoint {
		p := hostcheck.FIOPoint{Depth: depth, Jobs: 1, IODepth: depth}
		p.IOPS = iops
		return p
	}
	drv := func(p hostcheck.FIOPoint, driver int) hostcheck.FIOPoint {
		p.DriverDepth = driver
		return p
	}
	tests := []struct {
		name string
		f    hostcheck.FIOBaseline
		want []string
	}{
		{"stopped early", hostcheck.FIOBaseline{MaxDepth: 4096, Files: 8, FileBytes: 1 << 20, StoppedEarly: true,
			SweepNote: "stopped after 512 reads in flight: the last 2 steps did not beat", Sweep: []hostcheck.FIOPoint{pt(64, 10), pt(128, 30), pt(512, 29)}},
			[]string{"The sweep stopped after 512 reads in flight", "| 128 | 1 × 128 | 30 | 0.0 | 0 | 0 | — | — | ceiling |", "as large as the dataset"}},
		{"short of the server's depth", hostcheck.FIOBaseline{MaxDepth: 4096, Files: 1, FileBytes: 4096, Sweep: []hostcheck.FIOPoint{pt(64, 10), pt(128, 30)}},
			[]string{"**The sweep ended at 128 reads in flight, below the server's 4096.**", "**smaller than the dataset**"}},
		{"driver sampled", hostcheck.FIOBaseline{MaxDepth: 512, Files: 8, FileBytes: 1 << 20, Sweep: []hostcheck.FIOPoint{drv(pt(64, 10), 64), drv(pt(128, 30), 85), pt(512, 29)}},
			[]string{"| reads in flight | at the disk's driver | jobs × iodepth |", "| 128 | 85 | 1 × 128 | 30 |", "| 512 | — | 1 × 512 | 29 |"}},
		{"quiet host", hostcheck.FIOBaseline{MaxDepth: 128, Files: 1, FileBytes: 4096, StealShare: &quiet, Sweep: []hostcheck.FIOPoint{pt(64, 10), pt(128, 30)}},
			[]string{"While the sweep ran, the hypervisor took 0.2 % of the host's CPU time (steal, /proc/stat).\n"}},
		{"busy host", hostcheck.FIOBaseline{MaxDepth: 128, Files: 1, FileBytes: 4096, StealShare: &busy, Sweep: []hostcheck.FIOPoint{pt(64, 10), pt(128, 30)}},
			[]string{"the hypervisor took 4.0 % of the host's CPU time (steal, /proc/stat). **The host was not quiet**"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		renderCurve(&b, &tt.f, cfg)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: curve lacks %q:\n%s", tt.name, w, b.String())
			}
		}
	}
}

func FuzzParseCells(f *testing.F) {
	f.Add([]byte("{\"kind\":\"pass\",\"schema_version\":1,\"threads\":8,\"pass\":1}\n{\"kind\":\"load\",\"schema_version\":1}\n"))
	f.Add([]byte("{\"kind\":\"fail\",\"schema_version\":1,\"error\":\"x\"}\n{\"kind\":\"pa"))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		passes, _, fails, err := results.ParseCellsAll(data)
		if err != nil {
			return
		}
		plan := referencePlan()
		cells := results.Aggregate(plan, passes, fails, 1e6)
		if _, err := Table(plan, cells); err != nil {
			t.Fatalf("render of parsed cells: %v", err)
		}
	})
}

// TestRenderEvidenceCPUBound: a cell one of whose passes used ≥ 90 % of
// the server's CPUs is marked in the evidence table, and named in the
// verdict under report.md's table with its CPUs.
func TestRenderEvidenceCPUBound(t *testing.T) {
	row := results.Row{Backend: "uring", Pin: "pinned", Label: "srv cpus 0 / cli cpus 1 (1 node)"}
	var recs []results.PassRecord
	for _, s := range []float64{1.5, 1.9, 1.6} {
		recs = append(recs, results.PassRecord{Row: row, Seconds: 2, Server: results.Placement{CPUs: "0"}, PassEvidence: results.PassEvidence{ServerCPUSeconds: s}})
	}
	ce := results.SummarizeEvidence(recs)
	c := results.Cell{Row: row, Threads: 8, Passes: 3, Median: 50_000, CellEvidence: ce}
	res := results.Results{Cells: []results.Cell{c}, Passes: recs}
	var b strings.Builder
	renderEvidence(&b, res)
	if want := "| Uring | srv cpus 0 / cli cpus 1 (1 node) | 8 | 50 K | — | — | — | — | — | — | 80 % | 0 % | server-cpu-bound |"; !strings.Contains(b.String(), want) {
		t.Errorf("evidence section lacks %q:\n%s", want, b.String())
	}
	if got, want := strings.Join(flaggedVerdict(res), "\n"), "Uring srv cpus 0 / cli cpus 1 (1 node) t=8 (80 % of cpus 0)."; !strings.HasPrefix(got, "- server-cpu-bound: ") || !strings.HasSuffix(got, want) {
		t.Errorf("verdict: got %q, want the server-cpu-bound line ending %q", got, want)
	}
}

func TestShareTextMarksAboveCeiling(t *testing.T) {
	c := results.Cell{Median: 110_000, FioShare: 1.1, CellEvidence: results.CellEvidence{AboveCeiling: true}}
	if got, want := shareText(c, 0, 0, results.FioCPURecord{}), "110.0 % (above-ceiling)"; got != want {
		t.Errorf("shareText: got %q, want %q", got, want)
	}
	c.AboveCeiling = false
	if got, want := shareText(c, 0, 0, results.FioCPURecord{}), "110.0 %"; got != want {
		t.Errorf("shareText: got %q, want %q", got, want)
	}
}

// TestRenderEvidenceSteal: a cell shows the most steal its passes saw in
// a steal column (its server's CPUs' where read, else the host's as the
// client read it), a cell none of whose passes read it a dash, and a
// bundle without any steal keeps the table as it was.
func TestRenderEvidenceSteal(t *testing.T) {
	row := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	share := func(v float64) *float64 { return &v }
	cell := func(threads int, steals ...*float64) (results.Cell, []results.PassRecord) {
		var recs []results.PassRecord
		for _, s := range steals {
			recs = append(recs, results.PassRecord{Row: row, Threads: threads, Seconds: 2, PassEvidence: results.PassEvidence{HostStealShare: s}})
		}
		return results.Cell{Row: row, Threads: threads, Passes: len(recs), Median: 50_000, CellEvidence: results.SummarizeEvidence(recs)}, recs
	}
	read, readRecs := cell(8, share(0.001), share(0.031), nil)
	unread, unreadRecs := cell(32, nil, nil)
	// The server's own CPUs' steal is the cell's, whatever the client's
	// host saw.
	onServer, onServerRecs := cell(48, share(0.05))
	onServerRecs[0].ServerStealShare = share(0.002)
	onServer.CellEvidence = results.SummarizeEvidence(onServerRecs)
	tests := []struct {
		name         string
		cells        []results.Cell
		passes       []results.PassRecord
		want, absent []string
	}{
		{"read", []results.Cell{read, unread}, append(readRecs, unreadRecs...),
			[]string{"| client CPU | steal | marks |", "| 8 | 50 K | — | — | — | — | — | — | 0 % | 0 % | 3.1 % |  |", "| 32 | 50 K | — | — | — | — | — | — | 0 % | 0 % | — |  |"}, []string{"Steal is the share"}},
		{"server CPUs read", []results.Cell{onServer}, onServerRecs,
			[]string{"| 48 | 50 K | — | — | — | — | — | — | 0 % | 0 % | 0.2 % |  |"}, nil},
		{"old bundle", []results.Cell{unread}, unreadRecs,
			[]string{"| client CPU | marks |", "| 32 | 50 K | — | — | — | — | — | — | 0 % | 0 % |  |"}, []string{"steal", "Steal"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		renderEvidence(&b, results.Results{Cells: tt.cells, Passes: tt.passes})
		for _, want := range tt.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: evidence section lacks %q:\n%s", tt.name, want, b.String())
			}
		}
		for _, no := range tt.absent {
			if strings.Contains(b.String(), no) {
				t.Errorf("%s: evidence section has %q:\n%s", tt.name, no, b.String())
			}
		}
	}
}
