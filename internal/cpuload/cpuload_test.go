package cpuload

import (
	"math"
	"syscall"
	"testing"
	"time"
)

func cpuSeconds(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	tv := func(v syscall.Timeval) float64 { return float64(v.Sec) + float64(v.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// TestHold: the threads spin for their share of the wall time, and the
// process's CPU time shows it (loosely: other tests and the host may take
// the CPUs from them, so only the spin's own account is held tight).
func TestHold(t *testing.T) {
	tests := []struct {
		share   float64
		threads int
	}{
		{0.3, 1},
		{0.6, 2},
		{0, 2},
		{1.5, 1}, // spins throughout
	}
	for _, tt := range tests {
		cpu0 := cpuSeconds(t)
		start := time.Now()
		stop := Hold(tt.share, tt.threads)
		time.Sleep(400 * time.Millisecond)
		busy := stop()
		wall := time.Since(start).Seconds()
		cpu := cpuSeconds(t) - cpu0
		want := math.Min(tt.share, 1) * wall * float64(tt.threads)
		if tt.share <= 0 {
			want = 0
		}
		if math.Abs(busy-want) > 0.1*want+0.01*float64(tt.threads) {
			t.Errorf("Hold(%v, %d) over %.3f s: spun %.3f s, want %.3f s", tt.share, tt.threads, wall, busy, want)
		}
		if want > 0 && cpu < 0.2*want {
			t.Errorf("Hold(%v, %d) over %.3f s: the process used %.3f CPU s, want at least a fifth of the %.3f s asked", tt.share, tt.threads, wall, cpu, want)
		}
	}
}
