package device

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestPattern(t *testing.T) {
	p := make([]byte, 2048)
	stampPattern(p, 4096)
	if !patternOK(p, 4096) {
		t.Fatalf("patternOK of a freshly stamped block: got false, want true")
	}
	if patternOK(p, 4608) {
		t.Errorf("patternOK at the wrong offset: got true, want false")
	}
	if patternOK(p[512:], 4096) {
		t.Errorf("patternOK of a shifted block: got true, want false")
	}
	p[1500] ^= 1
	if patternOK(p, 4096) {
		t.Errorf("patternOK with one flipped bit: got true, want false")
	}
	if patternOK(make([]byte, 512), 0) {
		t.Errorf("patternOK of zeros: got true, want false")
	}
}

func TestBenchConfigErrors(t *testing.T) {
	good := BenchConfig{Backend: BackendLocalMemory, FileBytes: 1 << 20, Files: 1, BlockBytes: 512, Threads: 1, QueueDepth: 4, RuntimeSeconds: 1}
	tests := []struct {
		name string
		edit func(*BenchConfig)
		want string
	}{
		{"backend", func(c *BenchConfig) { c.Backend = "spdk" }, `backend "spdk"`},
		{"no dir", func(c *BenchConfig) { c.Backend = BackendUring }, "--dir is required"},
		{"block", func(c *BenchConfig) { c.BlockBytes = 1000 }, "block 1000"},
		{"file size", func(c *BenchConfig) { c.FileBytes = 1000 }, "file size 1000"},
		{"files", func(c *BenchConfig) { c.Files = 0 }, "0 files"},
		{"threads", func(c *BenchConfig) { c.Threads = -1 }, "-1 threads"},
		{"qd", func(c *BenchConfig) { c.QueueDepth = 0 }, "queue depth 0"},
		{"runtime", func(c *BenchConfig) { c.RuntimeSeconds = 0 }, "runtime 0"},
		{"passes", func(c *BenchConfig) { c.Passes = -2 }, "-2 passes"},
		{"fio on memory", func(c *BenchConfig) { c.CompareFio = true }, "--compare-fio needs a file backend"},
		{"alongside alone", func(c *BenchConfig) { c.FioAlongside = true }, "--fio-alongside needs --compare-fio"},
		{"over throttle", func(c *BenchConfig) { c.Threads, c.QueueDepth, c.ThrottleLimit = 4, 64, 128 }, "exceeds the device's throttle limit 128"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.edit(&cfg)
			_, err := Bench(context.Background(), cfg, &bytes.Buffer{})
			if !errors.Is(err, ErrBenchConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Bench: got error %v, want ErrBenchConfig containing %q", err, tt.want)
			}
		})
	}
}

// TestBench runs the benchmark for one second on every backend over a small
// real file set, with verification: reads must happen, none may fail, and a
// second run must reuse the files.
func TestBench(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			dir := ""
			if backend != BackendLocalMemory {
				dir = testenv.MustDiskDir(t)
			}
			cfg := BenchConfig{Backend: backend, Dir: dir, FileBytes: 4 << 20, Files: 2, BlockBytes: 1024, Threads: 2,
				QueueDepth: 8, RuntimeSeconds: 1, Verify: true}
			var progress bytes.Buffer
			res, err := Bench(context.Background(), cfg, &progress)
			if err != nil {
				if errors.Is(err, ErrKernelRefused) {
					t.Skipf("the kernel refuses %s: %v", backend, err)
				}
				t.Fatalf("Bench: %v", err)
			}
			if res.Ops == 0 || res.Errors != 0 || res.VerifyFailures != 0 {
				t.Fatalf("got %d ops, %d errors (%d verification), first error %q; want ops and no errors",
					res.Ops, res.Errors, res.VerifyFailures, res.FirstError)
			}
			// Every slot is resubmitted as it completes (from AfterGroup
			// on the completion goroutines): a run that stopped after its
			// first reads would count only Threads × QueueDepth.
			if first := int64(cfg.Threads * cfg.QueueDepth); res.Ops < 10*first {
				t.Errorf("got %d ops in %.1f s, want far more than the first %d reads: slots were not resubmitted", res.Ops, res.Seconds, first)
			}
			if res.MaxInFlight > int64(cfg.Threads*cfg.QueueDepth) || res.MaxInFlight < int64(cfg.QueueDepth) {
				t.Errorf("max in flight: got %d, want between %d and %d", res.MaxInFlight, cfg.QueueDepth, cfg.Threads*cfg.QueueDepth)
			}
			if res.LatencyUs.Min <= 0 || res.LatencyUs.P50 < res.LatencyUs.Min || res.LatencyUs.P999 < res.LatencyUs.P99 {
				t.Errorf("latency: got %+v, want 0 < min ≤ p50 and p99 ≤ p99.9", res.LatencyUs)
			}
			if want := float64(res.Ops) / res.Seconds; res.IOPS != want || res.MBPerSec != want*1024/1e6 {
				t.Errorf("iops %v, MB/s %v: want %v and %v", res.IOPS, res.MBPerSec, want, want*1024/1e6)
			}
			if backend == BackendLocalMemory {
				return
			}
			if !strings.Contains(progress.String(), "preparing 2 of 2 files") {
				t.Errorf("first run progress: got %q, want it to prepare 2 files", progress.String())
			}
			progress.Reset()
			cfg.RuntimeSeconds = 1
			if _, err := Bench(context.Background(), cfg, &progress); err != nil {
				t.Fatalf("second Bench: %v", err)
			}
			if !strings.Contains(progress.String(), "reusing the file set") {
				t.Errorf("second run progress: got %q, want it to reuse the file set", progress.String())
			}
		})
	}
}

// TestBenchVerifyCatchesCorruption overwrites the middle of a prepared file
// (its first and last blocks stay valid, so it is reused): --verify must
// count the bad reads as errors, not as ops.
func TestBenchVerifyCatchesCorruption(t *testing.T) {
	dir := testenv.MustDiskDir(t)
	cfg := BenchConfig{Backend: BackendLibaio, Dir: dir, FileBytes: 1 << 20, Files: 1, BlockBytes: 512, Threads: 1,
		QueueDepth: 4, RuntimeSeconds: 1, Verify: true}
	if _, err := Bench(context.Background(), cfg, &bytes.Buffer{}); err != nil {
		if errors.Is(err, ErrKernelRefused) {
			t.Skipf("the kernel refuses libaio: %v", err)
		}
		t.Fatalf("first Bench, which writes the file set: %v", err)
	}
	f, err := os.OpenFile(segmentPath(dir, 0), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 1<<20-2048), 1024); err != nil {
		t.Fatal(err)
	}
	f.Sync()
	f.Close()
	var progress bytes.Buffer
	res, err := Bench(context.Background(), cfg, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "reusing") {
		t.Fatalf("progress: got %q, want the corrupted file reused", progress.String())
	}
	if res.VerifyFailures == 0 || res.Errors < res.VerifyFailures || !strings.Contains(res.FirstError, "does not hold the pattern") {
		t.Errorf("got %d verification failures, %d errors, first %q; want failures counted as errors", res.VerifyFailures, res.Errors, res.FirstError)
	}
}

// TestBenchCompareFio runs the real fio beside the benchmark.
func TestBenchCompareFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatalf("fio not installed: run scripts/install-deps.sh")
	}
	dir := testenv.MustDiskDir(t)
	cfg := BenchConfig{Backend: BackendUring, Dir: dir, FileBytes: 4 << 20, Files: 2, BlockBytes: 512, Threads: 1,
		QueueDepth: 16, RuntimeSeconds: 1, CompareFio: true, JSON: true}
	var out, progress bytes.Buffer
	if err := RunBench(context.Background(), cfg, &out, &progress); err != nil {
		if errors.Is(err, ErrKernelRefused) {
			t.Skipf("the kernel refuses io_uring: %v", err)
		}
		t.Fatalf("RunBench: %v\n%s", err, progress.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out.String())
	}
	for _, k := range []string{"backend", "block", "threads", "qd", "seconds", "ops", "errors", "iops", "mb_per_sec", "latency_us", "fio", "ratio_to_fio"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out.String())
		}
	}
	lat, _ := doc["latency_us"].(map[string]any)
	for _, k := range []string{"min", "p50", "p99", "p999"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us lacks %q", k)
		}
	}
	fio, _ := doc["fio"].(map[string]any)
	if iops, _ := fio["iops"].(float64); iops <= 0 || fio["engine"] != "io_uring" {
		t.Errorf("fio: got %v, want io_uring with IOPS > 0", fio)
	}
	if r, _ := doc["ratio_to_fio"].(float64); r <= 0 {
		t.Errorf("ratio_to_fio: got %v, want > 0", doc["ratio_to_fio"])
	}
	// Each pass keeps the host's steal while each side ran.
	if s, err := cpustat.Read("/"); err == nil && s.HasSteal {
		var res BenchResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		for i, p := range res.Passes {
			if p.StealShare == nil || p.FioStealShare == nil || *p.StealShare < 0 || *p.StealShare > 1 || *p.FioStealShare < 0 || *p.FioStealShare > 1 {
				t.Errorf("pass %d: got steal %v, fio's %v, want two shares", i+1, p.StealShare, p.FioStealShare)
			}
		}
		if res.StealShare == nil || res.Fio == nil || res.Fio.StealShare == nil {
			t.Errorf("median pass: got steal %v, fio %+v, want both read", res.StealShare, res.Fio)
		}
	}
}

func TestStealNote(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		s          *float64
		note, text string
	}{
		{nil, "", "—"},
		{share(0.001), "", "0.1 %"},
		{share(0.03), " (host steal 3.0 %)", "3.0 %"},
	} {
		if got := stealNote(tt.s); got != tt.note {
			t.Errorf("stealNote(%v): got %q, want %q", tt.s, got, tt.note)
		}
		if got := human.SharePercent(tt.s); got != tt.text {
			t.Errorf("human.SharePercent(%v): got %q, want %q", tt.s, got, tt.text)
		}
	}
}

func TestMemAvailableBytes(t *testing.T) {
	got, err := memAvailableBytes("testdata/meminfo")
	if err != nil || got != 20971520<<10 {
		t.Errorf("memAvailableBytes(testdata/meminfo): got (%d, %v), want %d", got, err, uint64(20971520)<<10)
	}
	if _, err := memAvailableBytes("testdata/missing"); err == nil {
		t.Errorf("memAvailableBytes of a missing file: got nil error")
	}
}

// FuzzMemAvailableBytes: /proc/meminfo is outside bytes.
func FuzzMemAvailableBytes(f *testing.F) {
	seed, err := os.ReadFile("testdata/meminfo")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("MemAvailable: 12 MB\n")
	f.Add("MemAvailable:\n")
	f.Add("MemAvailable: 99999999999999999999 kB\n")
	path := f.TempDir() + "/meminfo"
	f.Fuzz(func(t *testing.T, contents string) {
		if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := memAvailableBytes(path)
		if err == nil && n > 1<<60 {
			t.Fatalf("memAvailableBytes(%q) = %d, beyond any real machine", contents, n)
		}
	})
}

// TestBenchFioAlongside runs fio at the same time as the pass: both must
// have done reads, and the result says how it was measured.
func TestBenchFioAlongside(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatalf("fio not installed: run scripts/install-deps.sh")
	}
	cfg := BenchConfig{Backend: BackendLibaio, Dir: testenv.MustDiskDir(t), FileBytes: 4 << 20, Files: 1, BlockBytes: 512, Threads: 1,
		QueueDepth: 16, RuntimeSeconds: 1, CompareFio: true, FioAlongside: true}
	var progress bytes.Buffer
	res, err := Bench(context.Background(), cfg, &progress)
	if err != nil {
		t.Fatalf("Bench: %v\n%s", err, progress.String())
	}
	if !res.FioAlongside || res.Fio == nil || res.Fio.Engine != "libaio" || res.Fio.IOPS <= 0 || res.Ops == 0 || res.RatioToFio <= 0 {
		t.Errorf("got alongside %v, fio %+v, ops %d, ratio %v; want both sides measured at the same time",
			res.FioAlongside, res.Fio, res.Ops, res.RatioToFio)
	}
	if !strings.Contains(progress.String(), "at the same time") {
		t.Errorf("progress: got %q, want the pass to say fio ran at the same time", progress.String())
	}
}
