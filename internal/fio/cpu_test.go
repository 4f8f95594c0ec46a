package fio

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawCPU reads a fio JSON file with a generic decoder: every entry's
// usr_cpu + sys_cpu weighted by its job_runtime, its jobs and its IOPS,
// so the expectation does not come from the code under test.
func rawCPU(t *testing.T, raw []byte) (busyPct float64, jobs int, iops float64) {
	t.Helper()
	var doc struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal(raw[strings.IndexByte(string(raw), '{'):], &doc); err != nil {
		t.Fatal(err)
	}
	var w float64
	for _, j := range doc.Jobs {
		rt := j["job_runtime"].(float64)
		busyPct += rt * (j["usr_cpu"].(float64) + j["sys_cpu"].(float64))
		w += rt
		iops += j["read"].(map[string]any)["iops"].(float64)
	}
	return busyPct / w, len(doc.Jobs), iops
}

// TestResultCPU judges fio's CPU from real outputs: group-reported
// (usr_cpu and sys_cpu per job, averaged) and one entry per job.
func TestResultCPU(t *testing.T) {
	tests := []struct {
		file      string
		cpus      int
		wantBound bool
	}{
		// 2 jobs × QD64 on both CPUs, 26 % busy: the disk, not fio.
		{"randread-iouring-512.json", 2, false},
		// 1 job × QD512 pinned to CPU 0 (--cpus_allowed=0), 76 % busy.
		{"randread-iouring-512-pinned-1job.json", 1, false},
		// 2 jobs without --group_reporting: two entries, 47 % and 48 %.
		{"randread-psync-2jobs-nogroup.json", 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			busy, entries, iops := rawCPU(t, raw)
			jobs := max(res.Jobs, 1)
			if entries > 1 {
				jobs = entries // one entry per job: each reports numjobs=2 of the group
			}
			res.Jobs = jobs
			got := res.CPU(tt.cpus)
			wantShare := busy / 100 * float64(jobs) / float64(min(tt.cpus, jobs))
			wantMicros := busy / 100 * float64(jobs) * 1e6 / iops
			if math.Abs(got.Share-wantShare) > 1e-9 || math.Abs(got.MicrosPerRead-wantMicros) > 1e-6 || got.Bound != tt.wantBound {
				t.Errorf("got %+v, want share %.4f, %.3f µs per read, bound %v", got, wantShare, wantMicros, tt.wantBound)
			}
		})
	}
}

func TestCPUOf(t *testing.T) {
	tests := []struct {
		name       string
		usr, sys   float64
		jobs       int
		iops       float64
		cpus       int
		wantShare  float64
		wantMicros float64
		wantSystem float64 // µs per read in the kernel
		wantBound  bool
	}{
		// The figure: two jobs saturating both CPUs at 200 K IOPS.
		{"both CPUs saturated", 12, 85, 2, 200_000, 2, 0.97, 9.7, 8.5, true},
		{"at the threshold", 10, 80, 1, 100_000, 1, 0.9, 9, 8, true},
		{"just below", 10, 79.9, 1, 100_000, 1, 0.899, 8.99, 7.99, false},
		// Two jobs on one CPU (pinned): each can have half of it.
		{"two jobs on one CPU", 5, 40, 2, 100_000, 1, 0.9, 9, 8, true},
		{"cpus 0: one CPU per job", 5, 40, 2, 100_000, 0, 0.45, 9, 8, false},
		{"no reads: no CPU per read", 50, 50, 1, 0, 1, 1, 0, 0, true},
		{"NaN usr", math.NaN(), 1, 1, 100, 1, math.NaN(), 0, 0, false},
		{"NaN sys", 1, math.NaN(), 1, 100, 1, math.NaN(), 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CPUOf(tt.usr, tt.sys, tt.jobs, tt.iops, tt.cpus)
			if !near(got.Share, tt.wantShare) || math.Abs(got.MicrosPerRead-tt.wantMicros) > 1e-9 ||
				math.Abs(got.SystemMicrosPerRead-tt.wantSystem) > 1e-9 || got.Bound != tt.wantBound {
				t.Errorf("got %+v, want share %v, %v µs per read (%v in the kernel), bound %v", got, tt.wantShare, tt.wantMicros, tt.wantSystem, tt.wantBound)
			}
		})
	}
}

func near(a, b float64) bool {
	if math.IsNaN(b) {
		return math.IsNaN(a)
	}
	return math.Abs(a-b) < 1e-9
}

func TestJobArgsPinnedRegistered(t *testing.T) {
	job := Job{Filenames: []string{"/d/a"}, Engine: "io_uring", CPUs: "0-1", Mems: "0", Registered: true, Batched: true, IODepth: 8}
	args, err := job.Args()
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(args, " ") + " "
	for _, want := range []string{"--cpus_allowed=0-1", "--numa_mem_policy=bind:0", "--registerfiles", "--fixedbufs",
		"--iodepth_batch_submit=8 ", "--iodepth_batch_complete_min=1 ", "--iodepth_batch_complete_max=8 "} {
		if !strings.Contains(s, want) {
			t.Errorf("args %q lack %q", s, want)
		}
	}
	job.Engine, job.IODepth = "libaio", 128
	args, _ = job.Args()
	s = strings.Join(args, " ") + " "
	if strings.Contains(s, "--fixedbufs") {
		t.Errorf("libaio args %q: want no io_uring options", s)
	}
	if !strings.Contains(s, "--iodepth_batch_submit=32 ") || !strings.Contains(s, "--iodepth_batch_complete_max=32 ") {
		t.Errorf("libaio args %q: want batches of 32 both ways", s)
	}
	job.Batched = false
	if args, _ := job.Args(); strings.Contains(strings.Join(args, " "), "--iodepth_batch") {
		t.Errorf("unbatched args %q: want fio's one-at-a-time defaults", args)
	}
	job.CPUs = "0;rm"
	if _, err := job.Args(); err == nil || !strings.Contains(err.Error(), "CPUs") {
		t.Errorf("bad CPU list: got %v, want an error naming CPUs", err)
	}
}
