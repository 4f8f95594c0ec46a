package orchestrator

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"golang.org/x/sys/unix"
)

func TestParseProcStat(t *testing.T) {
	// Fields after the name: state ppid pgrp session tty tpgid flags
	// minflt cminflt majflt cmajflt utime stime …
	tail := " S 1 2 3 0 -1 4194560 100 0 0 0 %s %s 0 0 20 0 9 0 12345 1000000 200\n"
	tests := []struct {
		name, in string
		want     rig.ProcTicks
		wantErr  string
	}{
		{"plain", "4242 (tierbench)" + fmt.Sprintf(tail, "1500", "250"), rig.ProcTicks{User: 1500, System: 250}, ""},
		{"name with spaces and parens", "77 (tier (bench) x)" + fmt.Sprintf(tail, "7", "3"), rig.ProcTicks{User: 7, System: 3}, ""},
		{"no name", "77 tierbench S 1 2", rig.ProcTicks{}, "no ')'"},
		{"short", "77 (x) S 1 2 3", rig.ProcTicks{}, "fields after the command name"},
		{"bad utime", "77 (x)" + fmt.Sprintf(tail, "lots", "3"), rig.ProcTicks{}, `utime "lots"`},
		{"negative stime", "77 (x)" + fmt.Sprintf(tail, "1", "-3"), rig.ProcTicks{}, `stime "-3"`},
		{"overflow", "77 (x)" + fmt.Sprintf(tail, "18446744073709551615", "1"), rig.ProcTicks{}, "overflow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rig.ParseProcStat([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func FuzzParseProcStat(f *testing.F) {
	if self, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(self)
	}
	f.Add([]byte("77 (tier (bench) x) S 1 2 3 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 9 0 12345 1000000 200\n"))
	f.Add([]byte("1 ()"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = rig.ParseProcStat(in)
	})
}

// cpuSeconds is this process's user + system time from getrusage(2).
func cpuSeconds(t *testing.T) float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// TestCPUTicksReal reads this process's own CPU time from /proc before
// and after burning 0.3 CPU s and compares it with getrusage's account
// (the machine is shared, so wall time says nothing), and the clock tick
// rate with getconf's.
func TestCPUTicksReal(t *testing.T) {
	p := rig.ProcRoot("/proc")
	ru0 := cpuSeconds(t)
	before, err := p.CPUTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for cpuSeconds(t)-ru0 < 0.3 {
	}
	after, err := p.CPUTicks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ru := cpuSeconds(t) - ru0
	hz, note := rig.ClockTicks()
	if used := float64(after.Total()-before.Total()) / float64(hz); used < ru-0.1 || used > ru+0.1 {
		t.Errorf("got %.2f CPU s from /proc/<pid>/stat, want getrusage's %.2f ± 0.1", used, ru)
	}
	if _, err := p.CPUTicks(1 << 30); err == nil || !strings.Contains(err.Error(), "pid") {
		t.Errorf("missing pid: got %v, want an error naming the pid", err)
	}
	if getconf, err := exec.LookPath("getconf"); err == nil {
		out, err := exec.Command(getconf, "CLK_TCK").Output()
		want, perr := strconv.Atoi(strings.TrimSpace(string(out)))
		if err == nil && perr == nil && (hz != want || note != "") {
			t.Errorf("clock ticks: got %d (%q), want getconf's %d", hz, note, want)
		}
	}
}
