package orchestrator

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/results"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("orchestrator: docker: boom"), ExitFailed},
		{fmt.Errorf("%w: --passes 0", ErrConfig), ExitUsage},
		{fmt.Errorf("%w: 2 of 8", ErrExcluded), ExitExcluded},
		{fmt.Errorf("%w: all 8", ErrNothingPublishable), ExitNothing},
		{fmt.Errorf("%w: pid 1 does not own it", ErrWrongProcess), ExitNothing},
		{fmt.Errorf("%w: 1 missing", ErrPartialLoad), ExitNothing},
		{fmt.Errorf("%w: 3 missed", ErrSampleMiss), ExitNothing},
		{fmt.Errorf("%w: interrupted", &InterruptedError{Signal: syscall.SIGINT}), ExitSIGINT},
		{fmt.Errorf("%w: %w", &InterruptedError{Signal: syscall.SIGTERM}, ErrPartialLoad), ExitSIGTERM},
	}
	for _, tt := range tests {
		if got := ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	plan := referencePlan()
	cells := results.Aggregate(plan, referencePasses(plan), nil, 0)
	err := outcome(results.Results{Plan: plan, Cells: cells})
	for _, want := range []string{"3 of 16 cells are kept out", "Libaio no pin t=8 (memory-served)", "Uring srv node-0 / cli node-1 t=64 (misses 1.00 %)", "Uring no pin t=64 (not measured)"} {
		if !errors.Is(err, ErrExcluded) || !strings.Contains(err.Error(), want) {
			t.Errorf("partly excluded: got %v, want ErrExcluded naming %q", err, want)
		}
	}
	for i := range cells {
		cells[i].Excluded = results.ExcludedRefused
	}
	if err := outcome(results.Results{Plan: plan, Cells: cells}); !errors.Is(err, ErrNothingPublishable) || !strings.Contains(err.Error(), "all 16 cells") {
		t.Errorf("all excluded: got %v, want ErrNothingPublishable", err)
	}
	shown := results.Aggregate(plan, referencePasses(plan), nil, 0)[:3]
	if err := outcome(results.Results{Plan: plan, Cells: shown}); err != nil {
		t.Errorf("all shown: got %v, want nil", err)
	}
}

func TestEstimateCountsLoadsAhead(t *testing.T) {
	// The reference profile at cell 10 of 48: 39 cells of ~13 s left in
	// this row and later ones, and three 100 M-key loads still ahead.
	e := estimate{cellsLeft: 39, perCell: 13 * time.Second, cellSeconds: 12, rowsAhead: 3, warmupSeconds: 12, loadKeys: 100_000_000}
	secs, note := e.left()
	assumed := 39*13 + 3*12 + 3*100_000_000.0/assumedLoadKeysPerSec
	if secs != assumed || !strings.Contains(note, "3 load(s) of 100000000 keys ahead") || !strings.Contains(note, "assumed") {
		t.Errorf("before a load: got %.0f s, %q; want %.0f s with the assumed rate stated", secs, note, assumed)
	}
	e.loadedKeys, e.loadTime = 100_000_000, 240*time.Second
	secs, note = e.left()
	if want := 39*13 + 3*12 + 3*240.0; secs != want || !strings.Contains(note, "as measured") {
		t.Errorf("after a 240 s load: got %.0f s, %q; want %.0f s at the measured rate", secs, note, want)
	}
	e.rowsAhead = 0
	if secs, note = e.left(); secs != 39*13 || note != "" {
		t.Errorf("last row: got %.0f s, %q; want the cells only", secs, note)
	}
	first := estimate{cellsLeft: 8, cellSeconds: 1}
	if secs, _ := first.left(); secs != 16 {
		t.Errorf("first cell, 1 s cells: got %.0f s, want 8 × (1 + 1) s", secs)
	}
}
