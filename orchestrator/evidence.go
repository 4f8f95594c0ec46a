package orchestrator

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/plan"

	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/results"
)

// diskReading is the data disks' and the CPUs' counters read just before
// a GET phase, on the server's host.
type diskReading struct {
	disk   diskstats.Sample
	err    error
	cpu    cpustat.Sample
	cpuErr error
}

// diskBefore reads the data disks' and the CPUs' counters where the
// server runs.
func (r *runner) diskBefore(ctx context.Context) diskReading {
	var s diskReading
	if len(r.evidence.disks) > 0 {
		s.disk, s.err = r.host.diskSample(ctx, r.evidence.disks)
	}
	s.cpu, s.cpuErr = r.host.cpuSample(ctx)
	return s
}

// serverSteal is the steal of the server's CPUs (its placement's
// Cpus_allowed_list; every CPU when that is unknown) between two readings
// of its host; nil when it cannot be told, which leaves the pass without
// it rather than failing it.
func serverSteal(before, after cpustat.Sample, cpus string) *float64 {
	if cpus == "" {
		return cpustat.Between(before, after, nil)
	}
	set, err := cpulist.Parse(cpus)
	if err != nil {
		return nil
	}
	return cpustat.Between(before, after, set)
}

// recordDisks reads the disks' counters again after the phase and puts
// the change into rec's evidence. A counter that cannot be read leaves a
// note instead of failing the pass.
func (r *runner) recordDisks(ctx context.Context, before diskReading, rec *results.PassRecord) {
	ev := &rec.PassEvidence
	if before.cpuErr == nil {
		if after, err := r.host.cpuSample(ctx); err == nil {
			ev.ServerStealShare = serverSteal(before.cpu, after, rec.Server.CPUs)
		}
	}
	switch {
	case len(r.evidence.disks) == 0:
		ev.DiskNote = r.evidence.note
	case before.err != nil:
		ev.DiskNote = before.err.Error()
	default:
		after, err := r.host.diskSample(ctx, r.evidence.disks)
		var d diskstats.Delta
		if err == nil {
			d, err = after.Since(before.disk)
		}
		if err != nil {
			ev.DiskNote = err.Error()
			break
		}
		ev.DiskDevices = r.evidence.disks
		ev.DiskReads, ev.DiskWeightedMs, ev.DiskWindowSeconds = d.ReadsCompleted, d.WeightedMs, d.Seconds
	}
}

// procTicks is a process's CPU time from /proc/<pid>/stat, in clock
// ticks: user and system (kernel) apart, so that a server's time in the
// kernel can be set beside fio's.
type procTicks struct {
	user, system uint64
}

// total is user + system; the parser refuses counts whose sum overflows.
func (t procTicks) total() uint64 { return t.user + t.system }

// cpuTicks returns utime and stime of /proc/<pid>/stat in clock ticks.
func (p procRoot) cpuTicks(pid int) (procTicks, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return procTicks{}, fmt.Errorf("orchestrator: read the CPU time of pid %d: %w", pid, err)
	}
	v, err := parseProcStat(data)
	if err != nil {
		return procTicks{}, fmt.Errorf("orchestrator: %s: %w", path, err)
	}
	return v, nil
}

// parseProcStat returns utime and stime (fields 14 and 15, counting the
// pid as 1) of a /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from after the last ')'.
func parseProcStat(data []byte) (procTicks, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procTicks{}, fmt.Errorf("no ')' closing the command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// After the name come field 3 (state) onwards: utime is f[11].
	if len(f) < 13 {
		return procTicks{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return procTicks{}, fmt.Errorf("utime %q and stime %q are not tick counts", clip([]byte(f[11])), clip([]byte(f[12])))
	}
	if u+s < u {
		return procTicks{}, fmt.Errorf("utime %d + stime %d overflow", u, s)
	}
	return procTicks{user: u, system: s}, nil
}

// atClockTick is AT_CLKTCK, the auxiliary-vector entry from which the C
// library's sysconf(_SC_CLK_TCK) answers.
const atClockTick = 17

// defaultClockTicks is USER_HZ on every architecture Linux runs tierbench
// on (x86, arm64): /proc/<pid>/stat counts in it whatever CONFIG_HZ is.
const defaultClockTicks = 100

// clockTicks returns USER_HZ as sysconf(_SC_CLK_TCK) would, from this
// process's auxiliary vector (no cgo to call sysconf itself), or 100 with
// a note saying why.
func clockTicks() (int, string) {
	auxv, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return defaultClockTicks, fmt.Sprintf("assumed %d clock ticks per second (USER_HZ): %v", defaultClockTicks, err)
	}
	if hz, ok := auxvValue(auxv, atClockTick); ok && hz > 0 && hz <= 1_000_000 {
		return int(hz), ""
	}
	return defaultClockTicks, fmt.Sprintf("assumed %d clock ticks per second (USER_HZ): /proc/self/auxv has no AT_CLKTCK", defaultClockTicks)
}

// auxvValue finds key in an auxiliary vector of native-endian 64-bit
// (type, value) pairs.
func auxvValue(auxv []byte, key uint64) (uint64, bool) {
	for i := 0; i+16 <= len(auxv); i += 16 {
		k := binary.NativeEndian.Uint64(auxv[i:])
		if k == 0 {
			break // AT_NULL
		}
		if k == key {
			return binary.NativeEndian.Uint64(auxv[i+8:]), true
		}
	}
	return 0, false
}

// resolveDisks finds the physical disks below the data dir once per run.
// For an external server they are sampled only when the user named where
// its data lives: any other disk would be a stranger's evidence.
func (r *runner) resolveDisks(ctx context.Context) {
	if r.cfg.Spec().InRAM {
		r.evidence.note = "--scenario " + r.cfg.ScenarioName() + " keeps the data in RAM"
		r.printf("evidence: no disk counters (%s); the server's CPU is still sampled\n", r.evidence.note)
		return
	}
	if !plan.CeilingApplies(r.cfg) {
		r.evidence.note = "the external server's data dir was not named (--data)"
		r.printf("evidence: no disk counters (%s); the server's CPU is still sampled\n", r.evidence.note)
		return
	}
	disks, err := r.host.dataDisks(ctx, r.cfg.DataDir)
	if err != nil {
		r.evidence.note = err.Error()
		r.printf("%sevidence: no disk counters: %v\n", hostPrefix(r.host), err)
		return
	}
	r.evidence.disks = disks
	there := ""
	if r.host.where() != "" {
		there = ", read there"
	}
	r.printf("%sevidence: /proc/diskstats of %s (below %s) and the server's /proc/<pid>/stat around every GET phase%s\n", hostPrefix(r.host), strings.Join(disks, "+"), r.cfg.DataDir, there)
}

// evidenceLine is the progress line's account of one pass's evidence.
func evidenceLine(rec results.PassRecord) string {
	var s string
	if len(rec.DiskDevices) > 0 {
		s += fmt.Sprintf(", disk %s r/s at depth %.0f", FormatOps(rec.DiskReadsPerSec), rec.DiskQueueDepth)
	}
	if rec.ServerCPUs > 0 {
		s += fmt.Sprintf(", server CPU %.0f %% of %d", 100*rec.ServerCPUShare, rec.ServerCPUs)
	}
	if rec.ServerCPUBound {
		s += " [server-cpu-bound]"
	}
	return s
}
