package rig

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ProcTicks is a process's CPU time from /proc/<pid>/stat, in clock
// ticks: user and system (kernel) apart, so that a server's time in the
// kernel can be set beside fio's.
type ProcTicks struct {
	User, System uint64
}

// Total is user + system; the parser refuses counts whose sum overflows.
func (t ProcTicks) Total() uint64 { return t.User + t.System }

// CPUTicks returns utime and stime of /proc/<pid>/stat in clock ticks.
func (p ProcRoot) CPUTicks(pid int) (ProcTicks, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return ProcTicks{}, fmt.Errorf("orchestrator: read the CPU time of pid %d: %w", pid, err)
	}
	v, err := ParseProcStat(data)
	if err != nil {
		return ProcTicks{}, fmt.Errorf("orchestrator: %s: %w", path, err)
	}
	return v, nil
}

// ParseProcStat returns utime and stime (fields 14 and 15, counting the
// pid as 1) of a /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from after the last ')'.
func ParseProcStat(data []byte) (ProcTicks, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ProcTicks{}, fmt.Errorf("no ')' closing the command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// After the name come field 3 (state) onwards: utime is f[11].
	if len(f) < 13 {
		return ProcTicks{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcTicks{}, fmt.Errorf("utime %q and stime %q are not tick counts", Clip([]byte(f[11])), Clip([]byte(f[12])))
	}
	if u+s < u {
		return ProcTicks{}, fmt.Errorf("utime %d + stime %d overflow", u, s)
	}
	return ProcTicks{User: u, System: s}, nil
}

// ClockTicks returns USER_HZ as sysconf(_SC_CLK_TCK) would, from this
// process's auxiliary vector (no cgo to call sysconf itself), or 100 with
// a note saying why.
func ClockTicks() (int, string) {
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

// atClockTick is AT_CLKTCK, the auxiliary-vector entry from which the C
// library's sysconf(_SC_CLK_TCK) answers.
const atClockTick = 17

// defaultClockTicks is USER_HZ on every architecture Linux runs tierbench
// on (x86, arm64): /proc/<pid>/stat counts in it whatever CONFIG_HZ is.
const defaultClockTicks = 100
