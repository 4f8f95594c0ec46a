package ceiling

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// logTo is an Env.Printf that writes to w, for a test to read what the
// run would say.
func logTo(w io.Writer) func(string, ...any) {
	return func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
}

// segmentFixture makes a bundle dir out and a data dir holding segments
// segment files of 4 MiB of random bytes (seg), for fio to read.
func segmentFixture(t *testing.T, segments int) (out, data string, seg []byte) {
	t.Helper()
	testenv.MustLookPath(t, "fio")
	base := testenv.MustDiskDir(t)
	out, data = filepath.Join(base, "out"), filepath.Join(base, "data")
	os.MkdirAll(out, 0o755)
	os.MkdirAll(data, 0o755)
	seg = make([]byte, 4<<20)
	rand.Read(seg)
	for i := range segments {
		if err := os.WriteFile(filepath.Join(data, fmt.Sprintf("segment.%d", i)), seg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out, data, seg
}

// TestRecheckCeilingReal runs the re-measurement with the real fio over
// real segment files: a cell above a (deliberately tiny) ceiling gets one
// fio run at its observed depth, read-only, recorded in ceilings.jsonl; a
// cell below it gets none, and a second call measures nothing again. A
// libaio row's cells also get fio through libaio for the CPU comparison.
func TestRecheckCeilingReal(t *testing.T) {
	out, data, seg := segmentFixture(t, 2)
	pre := hostcheck.Report{FIO: &hostcheck.FIOBaseline{Engine: "io_uring", RuntimeSeconds: 1, Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 1000}}},
		FIOPinned: &hostcheck.FIOBaseline{Engine: "io_uring", RuntimeSeconds: 1, CPUs: "0", CPUCount: 1, Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 800}}}}
	raw, _ := json.Marshal(pre)
	if err := results.WriteFile(out, results.FilePreflight, raw); err != nil {
		t.Fatal(err)
	}
	row := results.Row{Backend: "libaio", Pin: plan.PinNone, Label: "no pin"}
	l, err := results.OpenCellsLog(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []results.PassRecord{
		{Kind: "pass", Schema: results.SchemaVersion, Row: row, Threads: 4, Pass: 1, Seconds: 1, OpsPerSec: 5000,
			PassEvidence: results.PassEvidence{DiskDevices: []string{"vda"}, DiskReads: 5000, DiskWeightedMs: 7_300}},
		{Kind: "pass", Schema: results.SchemaVersion, Row: row, Threads: 2, Pass: 1, Seconds: 1, OpsPerSec: 900},
	} {
		if err := l.Append(p); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	var log strings.Builder
	env := Env{Config: plan.Config{Workload: results.Workload{DataDir: data, Threads: []int{2, 4}}}, FioPlanned: true, Bundle: out, Printf: logTo(&log)}
	if err := Recheck(t.Context(), env, row); err != nil {
		t.Fatal(err)
	}
	recs, err := results.ReadCeilings(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d re-measurements, want 1 (t=4 only):\n%s", len(recs), log.String())
	}
	c := recs[0]
	if c.Threads != 4 || c.Depth != 8 || c.DepthSource != "disk" || c.Jobs*c.IODepth < 8 || c.IOPS <= 0 || c.Error != "" ||
		c.Footprint != FootprintSegmentFiles || c.Files != 2 || c.FootprintBytes != 2*int64(len(seg)) || c.BaseIOPS != 1000 {
		t.Errorf("got %+v, want t=4 at depth 8 (7.3 rounded up) from the disk, positive IOPS over 2 segment files of 4 MiB", c)
	}
	// A pinned row is held against the pinned ceiling, and fio measures
	// again on the server's CPUs, one job per CPU.
	pinned := results.Row{Backend: "libaio", Pin: plan.PinPinned, Label: "srv cpus 0 / cli cpus 1 (1 node)"}
	l, _ = results.OpenCellsLog(out)
	l.Append(results.PassRecord{Kind: "pass", Schema: results.SchemaVersion, Row: pinned, Threads: 4, Pass: 1, Seconds: 1, OpsPerSec: 900,
		PassEvidence: results.PassEvidence{DiskDevices: []string{"vda"}, DiskReads: 900, DiskWeightedMs: 16_000}})
	l.Close()
	if err := Recheck(t.Context(), env, pinned); err != nil {
		t.Fatal(err)
	}
	recs, _ = results.ReadCeilings(out)
	if len(recs) != 2 || recs[1].Row != pinned || recs[1].BaseIOPS != 800 || recs[1].CPUs != "0" || recs[1].Jobs != 1 || recs[1].IOPS <= 0 || recs[1].CPUMicrosPerRead <= 0 ||
		recs[1].CPUSystemMicrosPerRead <= 0 || recs[1].CPUSystemMicrosPerRead > recs[1].CPUMicrosPerRead {
		t.Errorf("got %+v, want the pinned row measured again against 800 IOPS on CPU 0 with one job and fio's CPU per read, its kernel part within it", recs)
	}
	if !strings.Contains(log.String(), "fio again at its depth") {
		t.Errorf("progress does not say fio ran again:\n%s", log.String())
	}
	if got, _ := os.ReadFile(filepath.Join(data, "segment.0")); string(got) != string(seg) {
		t.Errorf("the read-only fio changed segment.0")
	}
	if err := Recheck(t.Context(), env, row); err != nil {
		t.Fatal(err)
	}
	if again, _ := results.ReadCeilings(out); len(again) != 2 {
		t.Errorf("a second recheck measured again: got %d records, want 2", len(again))
	}

	// A libaio row is not the io_uring curve's interface: fio runs once
	// more for each cell with a disk depth, through libaio, for the CPU
	// comparison; a row with no disk depth gets none, and nothing is
	// measured twice.
	if err := MeasureFioCPU(t.Context(), env, row); err != nil {
		t.Fatal(err)
	}
	uringRow := results.Row{Backend: "uring", Pin: plan.PinNone, Label: "no pin"}
	if err := MeasureFioCPU(t.Context(), env, uringRow); err != nil {
		t.Fatal(err)
	}
	if err := MeasureFioCPU(t.Context(), env, row); err != nil {
		t.Fatal(err)
	}
	eng, err := results.ReadFioCPU(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(eng) != 1 || eng[0].Row != row || eng[0].Threads != 4 || eng[0].Engine != "libaio" || eng[0].Depth != 8 || eng[0].IOPS <= 0 ||
		eng[0].CPUMicrosPerRead <= 0 || eng[0].CPUSystemMicrosPerRead <= 0 || eng[0].CPUSystemMicrosPerRead > eng[0].CPUMicrosPerRead ||
		eng[0].Error != "" || eng[0].Files != 2 {
		t.Errorf("got %+v, want one libaio run for t=4 at depth 8 over 2 files, with fio's CPU per read and its kernel part", eng)
	}
	if !strings.Contains(log.String(), "fio libaio at the cell's disk depth") {
		t.Errorf("progress does not say fio ran through libaio:\n%s", log.String())
	}
}

func TestCurveHasDepth(t *testing.T) {
	base := &hostcheck.FIOBaseline{Engine: "io_uring", Sweep: []hostcheck.FIOPoint{
		{Jobs: 1, IODepth: 64, Depth: 64, FIOResult: hostcheck.FIOResult{IOPS: 80_000, UsrCPU: 10, SysCPU: 30}},
		{Jobs: 1, IODepth: 128, Depth: 128, FIOResult: hostcheck.FIOResult{IOPS: 83_000, UsrCPU: 10, SysCPU: 39}},
		{Jobs: 1, IODepth: 512, Depth: 512, FIOResult: hostcheck.FIOResult{IOPS: 78_000}}, // no CPU figure
	}}
	for _, tc := range []struct {
		depth float64
		want  bool
	}{{128, true}, {139, true}, {117, true}, {142, false}, {230, false}, {512, false}, {60, true}, {1, false}} {
		if got := curveHasDepth(base, tc.depth); got != tc.want {
			t.Errorf("depth %.0f: got %v, want %v", tc.depth, got, tc.want)
		}
	}
}

func TestServerFiles(t *testing.T) {
	own, other := t.TempDir(), t.TempDir()
	big := make([]byte, minServerFileBytes)
	for path, data := range map[string][]byte{
		filepath.Join(own, "segment.0"): big, filepath.Join(own, "segment.1"): big[:4096], filepath.Join(own, "other.bin"): big,
		filepath.Join(other, "Store", "hlog.0"): big, filepath.Join(other, "Store", "hlog.1"): big,
		filepath.Join(other, "garnet.conf"): []byte("x"), filepath.Join(other, "odd:name"): big,
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Links a server could plant in its own directory: to a file of
	// another's, under a segment's name and under any name.
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, big, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{filepath.Join(own, "segment.2"), filepath.Join(other, "Store", "hlog.2")} {
		if err := os.Symlink(victim, l); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		dir           string
		wantFiles     []string
		wantFootprint string
		wantBytes     int64
	}{
		{own, []string{"segment.0", "segment.1"}, FootprintSegmentFiles, minServerFileBytes + 4096},
		{other, []string{"Store/hlog.0", "Store/hlog.1"}, FootprintServerFiles, 2 * minServerFileBytes},
		{t.TempDir(), nil, FootprintServerFiles, 0},
	}
	for _, tt := range tests {
		files, fp, n := serverFiles(tt.dir)
		var rel []string
		for _, f := range files {
			r, _ := filepath.Rel(tt.dir, f)
			rel = append(rel, r)
		}
		if strings.Join(rel, " ") != strings.Join(tt.wantFiles, " ") || fp != tt.wantFootprint || n != tt.wantBytes {
			t.Errorf("serverFiles(%s): got %v %s %d, want %v %s %d", tt.dir, rel, fp, n, tt.wantFiles, tt.wantFootprint, tt.wantBytes)
		}
	}
}

// TestRowEngine: fio's engine is the row's kernel interface for
// tierbench's native backends, and none for another server or localmemory.
func TestRowEngine(t *testing.T) {
	for _, tt := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Backend: "uring"}, "io_uring"},
		{results.Row{Backend: "libaio"}, "libaio"},
		{results.Row{Backend: "localmemory"}, ""},
		{results.Row{Backend: "uring", Server: "redis"}, ""},
	} {
		if got := RowEngine(tt.row); got != tt.want {
			t.Errorf("RowEngine(%+v): got %q, want %q", tt.row, got, tt.want)
		}
	}
}

// TestFioBesideReal: after a pass, fio runs for results.BesideSeconds at
// the ceiling's best point over the server's own files, read-only, and
// says what it read; a cluster's row, --no-fio and a bundle without a
// curve get none, and no fio runs for them.
func TestFioBesideReal(t *testing.T) {
	out, data, seg := segmentFixture(t, 1)
	row := results.Row{Backend: "uring", Pin: plan.PinNone, Label: "no pin"}
	var log strings.Builder
	env := Env{Config: plan.Config{Workload: results.Workload{DataDir: data}}, FioPlanned: true, Bundle: out, Printf: logTo(&log)}
	if got := Beside(t.Context(), env, row, target.Server{}); got != 0 {
		t.Errorf("no preflight curve: got %v IOPS, want none", got)
	}
	pre := hostcheck.Report{FIO: &hostcheck.FIOBaseline{Engine: "io_uring", RuntimeSeconds: 1,
		Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 1000}},
		Sweep:   []hostcheck.FIOPoint{{Depth: 4, Jobs: 1, IODepth: 4, FIOResult: hostcheck.FIOResult{BlockBytes: 512, IOPS: 900}}, {Depth: 8, Jobs: 1, IODepth: 8, FIOResult: hostcheck.FIOResult{BlockBytes: 512, IOPS: 1000}}}}}
	raw, _ := json.Marshal(pre)
	if err := results.WriteFile(out, results.FilePreflight, raw); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := Beside(t.Context(), env, row, target.Server{})
	if took := time.Since(start); got <= 0 || took < time.Duration(results.BesideSeconds)*time.Second {
		t.Errorf("beside a pass: got %v IOPS after %v, want fio's positive IOPS after at least %d s:\n%s", got, took, results.BesideSeconds, log.String())
	}
	if back, _ := os.ReadFile(filepath.Join(data, "segment.0")); string(back) != string(seg) {
		t.Errorf("the read-only fio changed segment.0")
	}
	for _, tt := range []struct {
		name string
		env  Env
		tgt  target.Server
	}{
		{"a cluster", env, target.Server{Cluster: true}},
		{"--no-fio", Env{Config: plan.Config{Workload: results.Workload{DataDir: data, NoFio: true}}, FioPlanned: false, Bundle: out, Printf: logTo(&log)}, target.Server{}},
	} {
		start := time.Now()
		if got := Beside(t.Context(), tt.env, row, tt.tgt); got != 0 || time.Since(start) > 500*time.Millisecond {
			t.Errorf("%s: got %v IOPS after %v, want none and no fio run", tt.name, got, time.Since(start))
		}
	}
}
