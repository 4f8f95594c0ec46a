package preflight

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestLogSpaceRefusal: a plan whose projected log growth exceeds the
// free space on --data is refused at planning, the error naming the
// estimate; GETs alone project the load only, and a mix adds its SETs.
func TestLogSpaceRefusal(t *testing.T) {
	dir := t.TempDir()
	free, _, err := freeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	record := int64(results.RecordBytes(16, 96))
	base := plan.Config{Workload: results.Workload{
		DataDir:     dir + "/data",
		KeyLength:   16,
		ValueLength: 96,
		Threads:     []int{1},
		Passes:      1,
		CellSeconds: 1,
	},
	}
	fits := base
	fits.DBSize = 1000
	if err := CheckLogSpace(fits); err != nil {
		t.Errorf("1000 keys: got %v, want no refusal", err)
	}
	tooBig := base
	tooBig.DBSize = free/record + 1
	if err := CheckLogSpace(tooBig); !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "the log would grow by") {
		t.Errorf("%d keys on %d B free: got %v, want a refusal", tooBig.DBSize, free, err)
	}
	tooBig.Force = true
	if err := CheckLogSpace(tooBig); err != nil {
		t.Errorf("--force: got %v, want none", err)
	}
	// A mix whose SETs would write more than the disk holds: the seconds
	// needed at the assumed rate, with 50 % SETs.
	mixed := base
	mixed.DBSize, mixed.Mix = 1000, "ycsb-a"
	mixed.CellSeconds = int(free/(assumedCellOpsPerSec/2*record)) + 1
	err = CheckLogSpace(mixed)
	if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "50 % SETs ×") || !strings.Contains(err.Error(), "assumed 1.00 M ops/s") {
		t.Errorf("ycsb-a for %d s: got %v, want a refusal naming the SET share and the assumed rate", mixed.CellSeconds, err)
	}
	mixed.Mix = "ycsb-c"
	if err := CheckLogSpace(mixed); err != nil {
		t.Errorf("ycsb-c (GETs alone) for %d s: got %v, want no refusal", mixed.CellSeconds, err)
	}
}
