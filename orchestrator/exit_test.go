package orchestrator

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/pass"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("orchestrator: docker: boom"), ExitFailed},
		{fmt.Errorf("%w: --passes 0", fault.ErrConfig), ExitUsage},
		{fmt.Errorf("%w: 2 of 8", ErrExcluded), ExitExcluded},
		{fmt.Errorf("%w: all 8", ErrNothingPublishable), ExitNothing},
		{fmt.Errorf("%w: pid 1 does not own it", rig.ErrWrongProcess), ExitNothing},
		{fmt.Errorf("%w: 1 missing", pass.ErrPartialLoad), ExitNothing},
		{fmt.Errorf("%w: 3 missed", pass.ErrSampleMiss), ExitNothing},
		{fmt.Errorf("%w: interrupted", &InterruptedError{Signal: syscall.SIGINT}), ExitSIGINT},
		{fmt.Errorf("%w: %w", &InterruptedError{Signal: syscall.SIGTERM}, pass.ErrPartialLoad), ExitSIGTERM},
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
