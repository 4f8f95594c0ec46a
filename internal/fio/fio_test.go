package fio

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// wantFromRaw reads the figures Parse must find straight out of a fio JSON
// file with a generic decoder, so the expectation is independent of the
// code under test.
func wantFromRaw(t *testing.T, raw []byte) (iops, bw, p50us, p99us, p999us float64, engine string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw[strings.IndexByte(string(raw), '{'):], &doc); err != nil {
		t.Fatalf("decode testdata: %v", err)
	}
	job := doc["jobs"].([]any)[0].(map[string]any)
	read := job["read"].(map[string]any)
	pct := read["clat_ns"].(map[string]any)["percentile"].(map[string]any)
	return read["iops"].(float64), read["bw"].(float64),
		pct["50.000000"].(float64) / 1000, pct["99.000000"].(float64) / 1000, pct["99.900000"].(float64) / 1000,
		job["job options"].(map[string]any)["ioengine"].(string)
}

func TestParseRealOutput(t *testing.T) {
	tests := []struct {
		file            string
		wantBlockBytes  int
		wantJobs        int
		wantIODepth     int
		wantVersionPref string
	}{
		{"randread-iouring-512.json", 512, 2, 64, "fio-3"},
		{"randread-libaio-4k.json", 4096, 2, 64, "fio-3"},
		{"noisy-prefix.json", 512, 2, 64, "fio-3"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			iops, bw, p50, p99, p999, engine := wantFromRaw(t, raw)
			if got.IOPS != iops || got.BandwidthKiBps != bw {
				t.Errorf("got IOPS %v bw %v, want %v %v", got.IOPS, got.BandwidthKiBps, iops, bw)
			}
			if got.ClatUs.P50 != p50 || got.ClatUs.P99 != p99 || got.ClatUs.P999 != p999 {
				t.Errorf("got clat %+v, want p50 %v p99 %v p999 %v", got.ClatUs, p50, p99, p999)
			}
			if got.Engine != engine {
				t.Errorf("got engine %q, want %q", got.Engine, engine)
			}
			if got.BlockBytes != tt.wantBlockBytes || got.Jobs != tt.wantJobs || got.IODepth != tt.wantIODepth {
				t.Errorf("got bs %d jobs %d iodepth %d, want %d %d %d", got.BlockBytes, got.Jobs, got.IODepth,
					tt.wantBlockBytes, tt.wantJobs, tt.wantIODepth)
			}
			if !strings.HasPrefix(got.Version, tt.wantVersionPref) {
				t.Errorf("got version %q, want prefix %q", got.Version, tt.wantVersionPref)
			}
			if got.UsrCPU <= 0 && got.SysCPU <= 0 {
				t.Errorf("got usr %v sys %v CPU, want some", got.UsrCPU, got.SysCPU)
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "randread-iouring-512.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(good)
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "no JSON document"},
		{"plain text", "fio: engine nosuch not loadable\n", "engine nosuch not loadable"},
		{"truncated", s[:len(s)/2], "parse JSON output"},
		{"no jobs", `{"fio version":"fio-3.33","jobs":[]}`, "no jobs"},
		{"job error", strings.Replace(s, `"error" : 0`, `"error" : 5`, 1), "ended with error 5"},
		{"no p99", strings.Replace(s, `"99.000000"`, `"98.000000"`, 1), "percentile 99.000000"},
		{"bad bs", strings.Replace(s, `"bs" : "512"`, `"bs" : "huge"`, 1), `bs="huge"`},
		{"negative iops", strings.Replace(s, `"iops" : 94727.772228`, `"iops" : -1`, 1), "invalid read iops"},
		{"no reads", `{"jobs":[{"jobname":"w","read":{"iops":0,"total_ios":0}}]}`, "did no reads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "fio: ") {
				t.Errorf("got error %q, want it to name fio", err)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	args, err := Job{Dir: "/d", Files: 2, FileBytes: 1 << 20, BlockBytes: 512, Jobs: 3}.Args()
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--rw=randread", "--direct=1", "--ioengine=io_uring", "--bs=512", "--numjobs=3",
		"--iodepth=64", "--group_reporting", "--filename=/d/tierbench-fio.0:/d/tierbench-fio.1",
		"--filesize=1048576", "--output-format=json", "--runtime=5"} {
		if !strings.Contains(joined, want) {
			t.Errorf("got args %q, want %q among them", joined, want)
		}
	}
	rated, err := Job{Dir: "/d", RateIOPS: 1300, IODepth: 8}.Args()
	if err != nil {
		t.Fatal(err)
	}
	if j := strings.Join(rated, " "); !strings.Contains(j, "--rate_iops=1300") || !strings.Contains(j, "--lat_percentiles=1") || !strings.Contains(j, "--iodepth=8") {
		t.Errorf("a rated job's args %q lack --rate_iops=1300, --lat_percentiles=1 or --iodepth=8", j)
	}
	if strings.Contains(joined, "rate_iops") {
		t.Errorf("an unrated job's args %q cap the rate", joined)
	}
	bad := []Job{
		{Dir: "/d", RateIOPS: -1},
		{},
		{Filenames: []string{"/a:b"}},
		{Dir: "/d", BlockBytes: -1},
		{Dir: "/d", FileBytes: 100, BlockBytes: 4096},
	}
	for _, j := range bad {
		if _, err := j.Args(); err == nil {
			t.Errorf("Job %+v: got no error, want one", j)
		}
	}
}

// TestRunReal runs the real fio for a short time on the real disk.
func TestRunReal(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	for _, engine := range []string{"io_uring", "libaio"} {
		t.Run(engine, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			got, err := Run(ctx, Job{Dir: dir, Files: 2, FileBytes: 4 << 20, BlockBytes: 512, Jobs: 1,
				IODepth: 16, Engine: engine, RuntimeSeconds: 1})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got.IOPS <= 0 || got.BandwidthKiBps <= 0 || got.ClatUs.P50 <= 0 || got.ClatUs.P99 < got.ClatUs.P50 {
				t.Errorf("got %+v, want positive IOPS, bandwidth and ordered percentiles", got)
			}
			if got.Engine != engine || got.BlockBytes != 512 || got.IODepth != 16 || got.Jobs != 1 {
				t.Errorf("got engine %q bs %d iodepth %d jobs %d, want %s 512 16 1", got.Engine, got.BlockBytes, got.IODepth, got.Jobs, engine)
			}
		})
	}
}

// TestRunAtRate runs the real fio capped at a rate: it achieves about
// that rate, and reports total latency beside completion latency.
func TestRunAtRate(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := Run(ctx, Job{Dir: dir, Files: 1, FileBytes: 4 << 20, BlockBytes: 512, IODepth: 8, RateIOPS: 500, RuntimeSeconds: 2})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.IOPS < 350 || got.IOPS > 650 {
		t.Errorf("fio at --rate_iops=500 did %.0f IOPS", got.IOPS)
	}
	if got.LatUs.P50 <= 0 || got.LatUs.P50 < got.ClatUs.P50 || got.LatUs.P99 < got.LatUs.P50 {
		t.Errorf("total latency %+v beside completion latency %+v: want positive, ordered and no less", got.LatUs, got.ClatUs)
	}
}

func TestRunFailures(t *testing.T) {
	dir := testenv.MustDiskDir(t)
	t.Run("fio exits non-zero", func(t *testing.T) {
		testenv.MustLookPath(t, "fio")
		_, err := Run(context.Background(), Job{Dir: dir, Files: 1, FileBytes: 1 << 20, Engine: "nosuchengine", RuntimeSeconds: 1})
		if err == nil || !strings.Contains(err.Error(), "nosuchengine") || !strings.HasPrefix(err.Error(), "fio ") {
			t.Fatalf("got %v, want an error naming fio and the engine", err)
		}
	})
	t.Run("fio prints non-JSON", func(t *testing.T) {
		bin := t.TempDir()
		script := "#!/bin/sh\necho 'this is not json'\n"
		if err := os.WriteFile(filepath.Join(bin, "fio"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		_, err := Run(context.Background(), Job{Dir: dir, RuntimeSeconds: 1})
		if err == nil || !strings.Contains(err.Error(), "this is not json") {
			t.Fatalf("got %v, want an error quoting fio's output", err)
		}
	})
	t.Run("fio missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := Run(context.Background(), Job{Dir: dir})
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("got %v, want ErrNotInstalled", err)
		}
		if !strings.Contains(err.Error(), "apt-get install fio") {
			t.Errorf("got %q, want it to name the package", err)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"randread-iouring-512.json", "randread-libaio-4k.json", "noisy-prefix.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"jobs":[{"read":{"iops":1,"clat_ns":{"percentile":{}}}}]}`))
	f.Add([]byte("fio: error\n{"))
	f.Add([]byte(`{"jobs":[{"read":{"iops":1,"total_ios":1,"clat_ns":{"percentile":{"50.000000":1,"99.000000":2,"99.900000":3}},"lat_ns":{"percentile":{"50.000000":-1}}}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Parse(in)
		if err != nil {
			return
		}
		if res.IOPS < 0 || res.BandwidthKiBps < 0 || res.ClatUs.P50 < 0 || res.LatUs.P50 < 0 || res.LatUs.P99 < 0 {
			t.Fatalf("Parse accepted negative figures: %+v", res)
		}
	})
}
