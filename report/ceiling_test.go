package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/results"
)

// TestRenderCeilingsPerCPUBudget renders the two ceilings of a run with a
// pinned row: the host curve, whose best point fio spent its CPUs on, and
// the curve on the pinned server's CPU; each row names the ceiling it is
// held against, and a pinned row's share of the host's stands beside it.
func TestRenderCeilingsPerCPUBudget(t *testing.T) {
	pt := func(depth, jobs int, iops, usr, sys float64, cpus int) hostcheck.FIOPoint {
		p := hostcheck.FIOPoint{Depth: depth, Jobs: jobs, IODepth: depth / jobs}
		p.IOPS, p.UsrCPU, p.SysCPU = iops, usr, sys
		p.CPU = fio.CPUOf(usr, sys, jobs, iops, cpus)
		return p
	}
	host := &hostcheck.FIOBaseline{Version: "fio-3.33", Engine: "io_uring", Files: 8, FileBytes: 64 << 20, RuntimeSeconds: 2, MaxDepth: 4096, CPUCount: 2, Registered: true,
		Sweep:   []hostcheck.FIOPoint{pt(64, 1, 90_000, 10, 60, 2), pt(128, 2, 200_000, 12, 85, 2)},
		Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 200_000}}}
	pinned := &hostcheck.FIOBaseline{Version: "fio-3.33", Engine: "io_uring", Files: 8, FileBytes: 64 << 20, RuntimeSeconds: 2, MaxDepth: 4096, CPUs: "0", CPUCount: 1,
		Sweep:   []hostcheck.FIOPoint{pt(64, 1, 120_000, 14, 70, 1)},
		Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 120_000}}}
	preRaw, err := json.Marshal(hostcheck.Report{Checks: []hostcheck.Check{{Name: hostcheck.CheckFIO, Status: hostcheck.Pass}}, FIO: host, FIOPinned: pinned})
	if err != nil {
		t.Fatal(err)
	}
	pre, err := results.ParsePreflight(preRaw)
	if err != nil {
		t.Fatal(err)
	}
	pinRow := results.Row{Backend: "uring", Pin: results.PinPinned, Label: "srv cpus 0 / cli cpus 1 (1 node)"}
	freeRow := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	ce := pre.Ceilings()
	res := results.Results{Plan: results.Plan{Rows: []results.Row{pinRow, freeRow}, Workload: results.Workload{DBSize: 1000, KeyLength: 16, ValueLength: 96, Threads: []int{8}}},
		FioIOPS512: ce.Host.IOPS, FioCeilings: &ce,
		Cells: []results.Cell{{Row: pinRow, Threads: 8, Passes: 2, Median: 108_000}, {Row: freeRow, Threads: 8, Passes: 2, Median: 150_000}}}
	results.ApplyCeilings(res.Cells, nil, ce)

	var b strings.Builder
	renderCeilings(&b, res, preRaw)
	text := b.String()
	for _, want := range []string{
		"| 128 | 2 × 64 | 200 K | 0.0 | 0 | 0 | 9.7 | 97 % | ceiling, cpu-bound |",
		"| 64 | 1 × 64 | 90 K | 0.0 | 0 | 0 | 7.8 | 70 % |  |",
		"files and buffers registered with the ring",
		"**This ceiling is fio's CPU, not the disk's**: at its best point fio's 2 job(s) used 97 % of the CPUs they could run on, 9.7 µs of CPU per read.",
		"A pinned row's server runs on CPUs 0 alone, so fio ran the sweep again on those CPUs: 120 K IOPS. Pinned rows are held against that ceiling",
		"every job pinned to the pinned server's CPUs 0",
		"| 64 | 1 × 64 | 120 K | 0.0 | 0 | 0 | 7.0 | 84 % | ceiling |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ceilings lack %q:\n%s", want, text)
		}
	}
	if got, want := heldAgainst(res, pinRow), "fio on CPUs 0, 120 K"; got != want {
		t.Errorf("pinned row held against %q, want %q", got, want)
	}
	if got, want := heldAgainst(res, freeRow), "host, 200 K (fio cpu-bound)"; got != want {
		t.Errorf("unpinned row held against %q, want %q", got, want)
	}
	if got, want := shareText(res.Cells[0], res.FioIOPS512, 0, results.FioCPURecord{}), "90.0 % (host: 54.0 %)"; got != want {
		t.Errorf("pinned cell share %q, want %q", got, want)
	}
	if got, want := shareText(res.Cells[1], res.FioIOPS512, 0, results.FioCPURecord{}), "75.0 %"; got != want {
		t.Errorf("unpinned cell share %q, want %q", got, want)
	}
	// A row whose disk had not come back before its passes is also held
	// against the fastest probe then; a settled row is not.
	res.Loads = []results.LoadRecord{
		{Row: pinRow, Settle: &results.DiskSettle{ProbeIOPS: []float64{100e3, 108e3, 104e3, 106e3}, Settled: false, Why: "3 probes in a row no faster than 108 K"}},
		{Row: freeRow, Settle: &results.DiskSettle{ProbeIOPS: []float64{190e3}, Settled: true}},
	}
	if got, want := heldAgainst(res, pinRow), "fio on CPUs 0, 120 K; the disk read at most 108 K right before the passes"; got != want {
		t.Errorf("unsettled pinned row held against %q, want %q", got, want)
	}
	if got, want := heldAgainst(res, freeRow), "host, 200 K (fio cpu-bound)"; got != want {
		t.Errorf("settled row held against %q, want %q", got, want)
	}
	if got, want := shareText(res.Cells[0], res.FioIOPS512, diskThen(res, pinRow), results.FioCPURecord{}), "90.0 % (host: 54.0 %) (disk then: 100.0 %)"; got != want {
		t.Errorf("unsettled pinned cell share %q, want %q", got, want)
	}

	// fio at the cell's own depth right after its row: the share of it
	// stands beside the share of the ceiling; a failed fio, another row's
	// or another cell's stays out.
	res.FioCPU = []results.FioCPURecord{
		{Row: freeRow, Threads: 8, Engine: "libaio", Depth: 200, IOPS: 100_000, FioCost: results.FioCost{CPUMicrosPerRead: 2}},
		{Row: pinRow, Threads: 32, Engine: "io_uring", Depth: 400, IOPS: 100_000, FioCost: results.FioCost{CPUMicrosPerRead: 2}},
		{Row: pinRow, Threads: 8, Engine: "io_uring", Depth: 230, IOPS: 0, FioCost: results.FioCost{Error: "fio: exit status 1"}},
	}
	if got := fioAfter(res, res.Cells[0]); got.IOPS != 0 {
		t.Errorf("fioAfter without the cell's own record: got %+v, want none", got)
	}
	res.FioCPU = append(res.FioCPU, results.FioCPURecord{Row: pinRow, Threads: 8, Engine: "io_uring", Depth: 230, IOPS: 120_000, FioCost: results.FioCost{CPUMicrosPerRead: 2.8}})
	if got, want := shareText(res.Cells[0], res.FioIOPS512, 0, fioAfter(res, res.Cells[0])), "90.0 % (host: 54.0 %) (fio io_uring at 230 after: 90.0 %)"; got != want {
		t.Errorf("pinned cell share beside fio after its row: got %q, want %q", got, want)
	}
	// The share of fio side by side with the passes comes before the
	// figure of fio at the cell's depth.
	beside := res.Cells[0]
	beside.BesideShare = 0.934
	if got, want := shareText(beside, res.FioIOPS512, 0, fioAfter(res, beside)), "90.0 % (host: 54.0 %) (beside: 93.4 %) (fio io_uring at 230 after: 90.0 %)"; got != want {
		t.Errorf("pinned cell share beside fio after each pass: got %q, want %q", got, want)
	}
	if got, want := shareText(res.Cells[1], res.FioIOPS512, 0, fioAfter(res, res.Cells[1])), "75.0 % (fio libaio at 200 after: 150.0 %)"; got != want {
		t.Errorf("unpinned cell share beside fio after its row: got %q, want %q", got, want)
	}
	res.FioCPU = nil

	// A re-measurement on the server's CPUs says where fio ran and what
	// its CPU said.
	res.Ceilings = []results.CeilingRecord{{Row: pinRow, Threads: 8, CellOpsPerSec: 130_000, BaseIOPS: 120_000, Engine: "io_uring", Depth: 90, DepthSource: "disk",
		Jobs: 1, IODepth: 90, BlockBytes: 512, RuntimeSeconds: 2, Files: 1, Footprint: "segment-files", IOPS: 125_000, CPUs: "0", FioCost: results.FioCost{CPUMicrosPerRead: 7.6, CPUShare: 0.95, CPUBound: true}}}
	b.Reset()
	renderRemeasures(&b, res)
	if want := "fio io_uring on the server's CPUs 0 at 90 reads in flight"; !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "fio 7.6 CPU µs per read (95 % of its CPUs, cpu-bound)") {
		t.Errorf("re-measurements lack %q and fio's CPU:\n%s", want, b.String())
	}

	// CPU per GET against fio's per read: the pinned cell against its
	// re-measurement, the free one against the host curve's point nearest
	// its disk depth (100 is nearer 128 than 64 by ratio).
	res.Cells[0].ServerCPUMicrosPerGet, res.Cells[0].DiskQueueDepth = 8.0, 90
	res.Cells[1].ServerCPUMicrosPerGet, res.Cells[1].DiskQueueDepth = 8.0, 100
	containsAll(t, "CPU against fio", cpuAgainstFio(res, preRaw),
		"| Uring | srv cpus 0 / cli cpus 1 (1 node) | 8.0 µs (fio 7.6 at 90, measured again): 1.05 × |",
		"| Uring | no pin | 8.0 µs (fio 9.7, kernel 8.5, at 128): 0.82 × |")
	res.Cells[1].ServerCPUMicrosPerGet = 11.0
	if text, want := cpuAgainstFio(res, preRaw), "11.0 µs (fio 9.7, kernel 8.5, at 128): 1.13 × **over** |"; !strings.Contains(text, want) {
		t.Errorf("CPU against fio lacks %q:\n%s", want, text)
	}
	// The kernel's part of each, where it was kept: the server's stime per
	// GET, a re-measurement's sys_cpu per read.
	res.Cells[0].ServerSystemMicrosPerGet, res.Cells[1].ServerSystemMicrosPerGet = 5.5, 8.6
	res.Ceilings[0].CPUSystemMicrosPerRead = 6.8
	containsAll(t, "CPU against fio with the kernel's part", cpuAgainstFio(res, preRaw),
		"| Uring | srv cpus 0 / cli cpus 1 (1 node) | 8.0 µs, kernel 5.5 (fio 7.6, kernel 6.8, at 90, measured again): 1.05 × |",
		"| Uring | no pin | 11.0 µs, kernel 8.6 (fio 9.7, kernel 8.5, at 128): 1.13 × **over** |")
	res.Cells[0].ServerSystemMicrosPerGet, res.Cells[1].ServerSystemMicrosPerGet = 0, 0
	// A cell measured again at its own depth through its row's interface
	// is held against that, the curve's figure beside it when the
	// interfaces differ; the bar applies to its own.
	res.FioCPU = []results.FioCPURecord{{Row: freeRow, Threads: 8, Engine: "libaio", Depth: 100, FioCost: results.FioCost{CPUMicrosPerRead: 10.5}}}
	text = cpuAgainstFio(res, preRaw)
	for _, want := range []string{
		"| Uring | no pin | 11.0 µs (fio libaio 10.5 at 100): 1.05 × · io_uring fio 9.7, kernel 8.5, at 128: 1.13 × |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("CPU against fio on the row's own interface lacks %q:\n%s", want, text)
		}
	}
	res.FioCPU[0].CPUMicrosPerRead = 9.0
	if text, want := cpuAgainstFio(res, preRaw), "11.0 µs (fio libaio 9.0 at 100): 1.22 × **over** · io_uring"; !strings.Contains(text, want) {
		t.Errorf("CPU against fio on the row's own interface lacks %q:\n%s", want, text)
	}
	res.FioCPU[0].Engine = "io_uring"
	if text, want := cpuAgainstFio(res, preRaw), "11.0 µs (fio io_uring 9.0 at 100): 1.22 × **over** |"; !strings.Contains(text, want) {
		t.Errorf("CPU against fio at the cell's own depth lacks %q:\n%s", want, text)
	}
	res.FioCPU = nil
	res.Cells[0].ServerCPUMicrosPerGet, res.Cells[1].ServerCPUMicrosPerGet = 0, 0
	if text := cpuAgainstFio(res, preRaw); text != "" {
		t.Errorf("CPU against fio without server CPU figures: got %q, want nothing", text)
	}
}

// TestSettleSentence says how the disk came back after a load, and marks
// passes that began on a disk still below its ceiling.
func TestSettleSentence(t *testing.T) {
	back := results.DiskSettle{ProbeIOPS: []float64{28_000, 51_000, 67_000}, ProbeSeconds: 2, Jobs: 2, IODepth: 64, CeilingIOPS: 73_000, Seconds: 6.4, Settled: true}
	if got, want := settleSentence(back, "after the load, fio over the server's files (read-only", "the passes"), "after the load, fio over the server's files (read-only, 2 × 64 in flight, 2 s a probe) read 28 K, 51 K, 67 K IOPS against the 73 K ceiling; the passes began once it read 90 % of it, 6 s after the first probe"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	slow := back
	slow.Settled, slow.Why = false, "3 probes in a row no faster than 51 K IOPS"
	if got := settleSentence(slow, "after the load, fio over the server's files (read-only", "the passes"); !strings.Contains(got, "**the disk had not come back to 90 % of it** (3 probes in a row no faster than 51 K IOPS)") {
		t.Errorf("got %q, want the passes marked as measuring a slower disk", got)
	}
}

// TestShareTextMarksSteal: a cell whose passes had noticeable steal says
// so beside its share; a little steal, or none read, adds nothing.
func TestShareTextMarksSteal(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		steal *float64
		want  string
	}{
		{nil, "80.0 %"},
		{share(0.001), "80.0 %"},
		{share(0.008), "80.0 %"},
		{share(0.251), "80.0 % (steal 25.1 %)"},
	} {
		c := results.Cell{Median: 80_000, FioShare: 0.8, CellEvidence: results.CellEvidence{HostStealShare: tt.steal}}
		if got := shareText(c, 0, 0, results.FioCPURecord{}); got != tt.want {
			t.Errorf("steal %v: got %q, want %q", tt.steal, got, tt.want)
		}
	}
}

// containsAll reports each of wants that text, the rendering of what,
// lacks.
func containsAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// TestDepthNote: cells deeper at the disk than its tags get a paragraph
// with fio's own share at their depths; none without tags or depth.
func TestDepthNote(t *testing.T) {
	row := results.Row{Backend: "uring", Pin: results.PinPinned}
	cell := func(threads int, depth float64) results.Cell {
		c := results.Cell{Row: row, Threads: threads, Median: 300e3, FioShare: 300.0 / 350}
		c.DiskQueueDepth = depth
		return c
	}
	res := results.Results{
		Cells: []results.Cell{cell(8, 240), cell(32, 250), cell(48, 100)},
		FioCPU: []results.FioCPURecord{
			{Row: row, Threads: 8, IOPS: 315e3, Depth: 240, Engine: "io_uring", FioCost: results.FioCost{CPUMicrosPerRead: 2.3}},
			{Row: row, Threads: 32, IOPS: 329e3, Depth: 250, Engine: "io_uring", FioCost: results.FioCost{CPUMicrosPerRead: 2.4}},
		},
	}
	disk := hostcheck.Storage{Disks: []hostcheck.BlockDevice{{Name: "vda", HWQueues: 1, QueueTags: 128}}}
	for _, tc := range []struct {
		name   string
		res    results.Results
		st     hostcheck.Storage
		driver int
		want   []string // "" alone: no paragraph
	}{
		{"deeper than the tags", res, disk, 0, []string{"takes 128 requests at once", "2 of the cells", "disk depth 240-250", "read 90-94 % of the ceiling"}},
		{"tags not read", res, hostcheck.Storage{Disks: []hostcheck.BlockDevice{{Name: "vda"}}}, 85, []string{""}},
		{"within the tags", results.Results{Cells: []results.Cell{cell(48, 100)}}, disk, 0, []string{""}},
		{"past the driver, within the tags", results.Results{Cells: []results.Cell{cell(48, 100)}}, disk, 85,
			[]string{"has 128 tags", "driver held no more than 85 requests at once", "1 of the cells", "disk depth 100", "the reads past 85 wait"}},
		{"driver at the tags", res, disk, 128, []string{"takes 128 requests at once", "2 of the cells"}},
		{"no fio at the depth", results.Results{Cells: res.Cells}, disk, 0, []string{"disk depth 240-250", "wait in the kernel's queue."}},
	} {
		got := depthNote(tc.res, tc.st, tc.driver)
		for _, w := range tc.want {
			if w == "" && got != "" || !strings.Contains(got, w) {
				t.Errorf("%s: got %q, want it to say %q", tc.name, got, w)
			}
		}
		if tc.name == "past the driver, within the tags" && strings.Contains(got, "fio run") {
			t.Errorf("%s: got %q, want no fio sentence (none ran at that depth)", tc.name, got)
		}
		if tc.name == "no fio at the depth" && strings.Contains(got, "fio run") {
			t.Errorf("%s: got %q, want no fio sentence", tc.name, got)
		}
	}
}

// TestDriverLimit: the driver's figure is a limit only where a sweep kept
// clearly more in flight than the driver held.
func TestDriverLimit(t *testing.T) {
	pt := func(depth, driver int) hostcheck.FIOPoint {
		return hostcheck.FIOPoint{Depth: depth, DriverDepth: driver}
	}
	sweep := func(pts ...hostcheck.FIOPoint) *hostcheck.FIOBaseline { return &hostcheck.FIOBaseline{Sweep: pts} }
	for _, tt := range []struct {
		name   string
		sweeps []*hostcheck.FIOBaseline
		want   int
	}{
		{"virtio ring full", []*hostcheck.FIOBaseline{sweep(pt(64, 64), pt(128, 86), pt(512, 85), pt(2048, 85))}, 86},
		{"both sweeps", []*hostcheck.FIOBaseline{sweep(pt(64, 64), pt(128, 85)), sweep(pt(128, 84), pt(512, 90))}, 90},
		{"never deeper than it held", []*hostcheck.FIOBaseline{sweep(pt(64, 63), pt(128, 120))}, 0},
		{"not sampled", []*hostcheck.FIOBaseline{sweep(pt(64, 0), pt(512, 0)), nil}, 0},
		{"no sweep", nil, 0},
	} {
		if got := driverLimit(tt.sweeps...); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}
