package hostcheck

import (
	"context"
	"testing"

	"github.com/tierbench/tierbench/internal/fio"
)

// TestSweepStepsCountsTheRuns runs the baseline's sweep over a disk whose
// IOPS grow with depth up to a knee and checks SweepSteps against the fio
// runs it made: every one in a full sweep, at least as many in one that
// stops where IOPS stop growing (the estimate of a run counts the most).
func TestSweepStepsCountsTheRuns(t *testing.T) {
	tests := []struct {
		name            string
		maxDepth, cpus  int
		knee            int // reads in flight from which IOPS stop growing
		full            bool
		want, wantRuns  int
		stopsBeforeMost bool
	}{
		{name: "one CPU, the throttle limit", maxDepth: 4096, cpus: 1, knee: 1 << 20, full: true, want: 6, wantRuns: 6},
		{name: "two CPUs, the throttle limit", maxDepth: 4096, cpus: 2, knee: 1 << 20, full: true, want: 6, wantRuns: 6},
		{name: "64 CPUs, capped at 32 jobs", maxDepth: 4096, cpus: 64, knee: 1 << 20, full: true, want: 6, wantRuns: 6},
		{name: "past the ladder, doubling", maxDepth: 16384, cpus: 32, knee: 1 << 20, full: true, want: 8, wantRuns: 8},
		{name: "a full sweep past a flat disk", maxDepth: 4096, cpus: 2, knee: 64, full: true, want: 6, wantRuns: 6},
		{name: "stopped where IOPS stopped growing", maxDepth: 4096, cpus: 2, knee: 64, want: 6, wantRuns: 1 + sweepFlatSteps + 1, stopsBeforeMost: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var runs int
			run := func(_ context.Context, job fio.Job) (fio.Result, error) {
				runs++
				return fio.Result{Version: "fio-3.36", BlockBytes: job.BlockBytes, Jobs: job.Jobs, IODepth: job.IODepth,
					IOPS: float64(min(job.Jobs*job.IODepth, tc.knee)) * 1000}, nil
			}
			sampler := newDriverSampler(t.TempDir(), Storage{}, run)
			job := fio.Job{Dir: t.TempDir(), Files: 1, FileBytes: 1 << 20, Engine: "io_uring", RuntimeSeconds: 1}
			if _, err := runBaseline(context.Background(), t.TempDir(), sampler, job, tc.maxDepth, min(maxFIOJobs, tc.cpus), tc.full, nil); err != nil {
				t.Fatal(err)
			}
			got := SweepSteps(tc.maxDepth, tc.cpus)
			if got != tc.want || runs != tc.wantRuns {
				t.Errorf("got SweepSteps %d and %d fio runs, want %d and %d", got, runs, tc.want, tc.wantRuns)
			}
			if tc.stopsBeforeMost == (runs == got) {
				t.Errorf("got %d runs of at most %d; want the sweep to stop early: %v", runs, got, tc.stopsBeforeMost)
			}
		})
	}
}
