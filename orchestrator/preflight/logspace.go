package preflight

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/pass"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
	"golang.org/x/sys/unix"
)

// assumedCellOpsPerSec is the rate the log-space check assumes of every
// measured second: above any mixed cell measured so far (docs/notes), so
// a plan it lets through does not fill the disk however fast the server.
const assumedCellOpsPerSec = 1_000_000

// LogGrowth projects what one row writes to its data dir: the load (every
// key once) plus, for a mix that writes, every SET and RMW appending a
// record — the SET share × the ops of the row's warm-up and cells at
// assumedCellOpsPerSec × the record's bytes. Each row wipes the data dir
// first, so the rows do not add up.
func LogGrowth(c plan.Config) (total, load, updates, ops int64) {
	record := int64(results.RecordBytes(c.KeyLength, c.ValueLength))
	load = c.DBSize * record
	seconds := int64(c.WarmupSeconds) + int64(c.Passes)*int64(len(c.Threads))*int64(c.CellSeconds)
	ops = seconds * assumedCellOpsPerSec
	updates = int64(pass.SetShare(c) * float64(ops) * float64(record))
	return load + updates, load, updates, ops
}

// CheckLogSpace refuses, at planning, a run whose projected log growth
// (LogGrowth) exceeds the free space on --data, naming the estimate. It
// applies to a tiered server on a disk of this machine; --force runs
// anyway.
func CheckLogSpace(c plan.Config) error {
	if c.Force || c.ServerAddr != "" || !c.Spec().Tiered || c.Spec().InRAM || (c.HostsMode() && !c.ServerHostLocal()) || c.DataDir == "" {
		return nil
	}
	free, at, err := freeBytes(c.DataDir)
	if err != nil {
		return fmt.Errorf("orchestrator: free space on --data %s: %w", c.DataDir, err)
	}
	total, load, updates, ops := LogGrowth(c)
	if total <= free {
		return nil
	}
	mix := ""
	if updates > 0 {
		mix = fmt.Sprintf(" plus %.0f %% SETs × %d ops (%d s of warm-up and cells at an assumed %s ops/s) × %d B = %s of updates",
			100*pass.SetShare(c), ops, ops/assumedCellOpsPerSec, human.Ops(assumedCellOpsPerSec), results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(updates))
	}
	return fmt.Errorf("%w: the log would grow by %s per row (the load, %d keys × %d B = %s%s), more than the %s free on %s (for --data %s); free space, lower --dbsize, --cell-seconds or --passes, or --force",
		fault.ErrConfig, human.Bytes(total), c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(load), mix, human.Bytes(free), at, c.DataDir)
}

// freeBytes is the space free to an unprivileged writer on the file
// system of dir, or of its nearest existing parent when the run has not
// created it yet, and the directory it was read at.
func freeBytes(dir string) (int64, string, error) {
	at := filepath.Clean(dir)
	for {
		if _, err := os.Stat(at); err == nil {
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			break
		}
		at = parent
	}
	var st unix.Statfs_t
	if err := unix.Statfs(at, &st); err != nil {
		return 0, at, err
	}
	return int64(st.Bavail) * int64(st.Bsize), at, nil
}
