package fio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestDepthLadder(t *testing.T) {
	tests := []struct {
		maxDepth, maxJobs int
		want              []Step
	}{
		{4096, 32, []Step{{1, 64}, {2, 64}, {4, 128}, {8, 256}, {16, 256}}},
		{4096, 2, []Step{{1, 64}, {2, 64}, {2, 256}, {2, 1024}, {2, 2048}}},
		{4096, 1, []Step{{1, 64}, {1, 128}, {1, 512}, {1, 2048}, {1, 4096}}},
		{64, 8, []Step{{1, 64}, {2, 64}, {4, 128}, {8, 256}, {8, 512}}},
		{10000, 32, []Step{{1, 64}, {2, 64}, {4, 128}, {8, 256}, {16, 256}, {16, 512}, {16, 1024}}},
		{20000, 1, []Step{{1, 64}, {1, 128}, {1, 512}, {1, 2048}, {1, 4096}, {2, 4096}, {4, 4096}, {8, 4096}}},
	}
	for _, tt := range tests {
		got := DepthLadder(tt.maxDepth, tt.maxJobs)
		if !slices.Equal(got, tt.want) {
			t.Errorf("DepthLadder(%d, %d): got %v, want %v", tt.maxDepth, tt.maxJobs, got, tt.want)
		}
		if last := got[len(got)-1].Depth(); last < tt.maxDepth {
			t.Errorf("DepthLadder(%d, %d) ends at %d reads in flight, want ≥ %d", tt.maxDepth, tt.maxJobs, last, tt.maxDepth)
		}
	}
}

func TestStepFor(t *testing.T) {
	tests := []struct {
		depth, jobs int
		want        Step
	}{
		{300, 2, Step{2, 150}},
		{301, 2, Step{2, 151}},
		{1, 8, Step{1, 1}},
		{0, 0, Step{1, 1}},
		{9000, 2, Step{4, 2250}},
	}
	for _, tt := range tests {
		if got := StepFor(tt.depth, tt.jobs); got != tt.want || got.Depth() < max(tt.depth, 1) {
			t.Errorf("StepFor(%d, %d): got %v, want %v", tt.depth, tt.jobs, got, tt.want)
		}
	}
}

// TestSweepStopRule drives the stopping rule with IOPS sequences a real
// disk cannot be told to produce.
func TestSweepStopRule(t *testing.T) {
	steps := DepthLadder(4096, 32)
	tests := []struct {
		name        string
		iops        []float64
		flatSteps   int
		wantPoints  int
		wantBest    int
		wantStopped bool
	}{
		{"keeps growing", []float64{100, 200, 300, 400, 500}, 2, 5, 4, false},
		{"flat after the second", []float64{100, 200, 201, 199, 500}, 2, 4, 2, true},
		{"one flat step is not enough", []float64{100, 200, 201, 300, 301}, 2, 5, 4, false},
		{"dip then growth", []float64{100, 90, 150, 149, 148}, 2, 5, 2, false},
		{"never stops when told not to", []float64{100, 100, 100, 100, 100}, 0, 5, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			s := Sweep{Job: Job{Dir: "/d"}, Steps: steps, FlatSteps: tt.flatSteps, MinGrowth: 0.02,
				Run: func(_ context.Context, j Job) (Result, error) {
					if j.Jobs != steps[calls].Jobs || j.IODepth != steps[calls].IODepth {
						t.Errorf("step %d: got %d jobs × %d, want %v", calls, j.Jobs, j.IODepth, steps[calls])
					}
					calls++
					return Result{IOPS: tt.iops[calls-1]}, nil
				}}
			got, err := s.Do(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Points) != tt.wantPoints || got.Best != tt.wantBest || got.StoppedEarly != tt.wantStopped {
				t.Errorf("got %d points, best %d, stopped %v; want %d, %d, %v", len(got.Points), got.Best, got.StoppedEarly,
					tt.wantPoints, tt.wantBest, tt.wantStopped)
			}
			if got.StoppedEarly != (got.Note != "") {
				t.Errorf("got note %q with stopped %v, want a note exactly when stopped early", got.Note, got.StoppedEarly)
			}
		})
	}
	t.Run("a failing step names its depth", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := Sweep{Job: Job{Dir: "/d"}, Steps: steps, Run: func(_ context.Context, j Job) (Result, error) {
			if j.Jobs*j.IODepth > 64 {
				return Result{}, boom
			}
			return Result{IOPS: 1}, nil
		}}.Do(context.Background())
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "128 reads in flight") {
			t.Errorf("got %v, want boom at 128 reads in flight", err)
		}
	})
	if _, err := (Sweep{}).Do(context.Background()); !errors.Is(err, ErrNoSteps) {
		t.Errorf("empty sweep: got %v, want ErrNoSteps", err)
	}
}

// TestSweepReal sweeps the real fio over a small file set, one second per
// step. No step may count as growth (MinGrowth 1000 %), so the sweep must
// stop after the third of five steps, and the best point must be the one
// with the highest IOPS fio reported.
func TestSweepReal(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	steps := DepthLadder(1024, 2)
	got, err := Sweep{Job: Job{Dir: dir, Files: 2, FileBytes: 8 << 20, BlockBytes: 512, RuntimeSeconds: 1},
		Steps: steps, FlatSteps: 2, MinGrowth: 10}.Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Points) != 3 || !got.StoppedEarly || !strings.Contains(got.Note, "2 deeper step(s) not run") {
		t.Fatalf("got %d points, stopped %v (%q); want 3 of %d and an early stop", len(got.Points), got.StoppedEarly, got.Note, len(steps))
	}
	best := 0
	for i, p := range got.Points {
		if p.Result.IODepth != p.IODepth || p.Result.Jobs != p.Jobs || p.Result.IOPS <= 0 {
			t.Errorf("point %d: fio ran %d jobs × %d with %v IOPS, want %d × %d and positive IOPS", i,
				p.Result.Jobs, p.Result.IODepth, p.Result.IOPS, p.Jobs, p.IODepth)
		}
		if p.Result.IOPS > got.Points[best].Result.IOPS {
			best = i
		}
	}
	if got.Best != best {
		t.Errorf("got best %d (%v IOPS), want %d (%v IOPS)", got.Best, got.BestPoint().Result.IOPS, best, got.Points[best].Result.IOPS)
	}

	// Read-only over files someone else wrote: fio must neither lay them
	// out again nor change them.
	names := []string{filepath.Join(dir, "tierbench-fio.0"), filepath.Join(dir, "tierbench-fio.1")}
	before, _ := os.Stat(names[0])
	r, err := Run(ctx, Job{Filenames: names, ReadOnly: true, BlockBytes: 4096, Jobs: 1, IODepth: 8, RuntimeSeconds: 1})
	if err != nil || r.IOPS <= 0 {
		t.Fatalf("read-only run: %v, %v IOPS; want reads", err, r.IOPS)
	}
	after, _ := os.Stat(names[0])
	if before == nil || after == nil || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("read-only run changed %s: before %v, after %v", names[0], before, after)
	}
}
