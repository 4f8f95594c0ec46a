package freeze

import (
	"encoding/binary"
	"testing"
	"time"
)

// records builds a ring's bytes: a sample per time, and a lost record
// where a time is 0.
func records(times ...uint64) []byte {
	var b []byte
	for _, t := range times {
		if t == 0 {
			b = binary.NativeEndian.AppendUint32(b, recordLost)
			b = binary.NativeEndian.AppendUint16(b, 0)
			b = binary.NativeEndian.AppendUint16(b, headerBytes+16)
			b = binary.NativeEndian.AppendUint64(b, 1) // id
			b = binary.NativeEndian.AppendUint64(b, 3) // lost
			continue
		}
		b = binary.NativeEndian.AppendUint32(b, recordSample)
		b = binary.NativeEndian.AppendUint16(b, 0)
		b = binary.NativeEndian.AppendUint16(b, headerBytes+8)
		b = binary.NativeEndian.AppendUint64(b, t)
	}
	return b
}

func TestParseRecords(t *testing.T) {
	const ms = uint64(time.Millisecond)
	tests := []struct {
		name                    string
		times                   []uint64
		count                   int64
		frozenMillis, longestMs float64
		samples, lost           int64
	}{
		{"steady", []uint64{1 * ms, 2 * ms, 3 * ms, 4 * ms}, 0, 0, 0, 4, 0},
		{"a little late is not a freeze", []uint64{1 * ms, 2 * ms, 3*ms + ms*9/10}, 0, 0, 0, 3, 0},
		{"one freeze", []uint64{1 * ms, 2 * ms, 10 * ms, 11 * ms}, 1, 7, 7, 4, 0},
		{"two freezes", []uint64{1 * ms, 5 * ms, 6 * ms, 12 * ms}, 2, 8, 5, 4, 0},
		{"no gap across lost samples", []uint64{1 * ms, 0, 20 * ms, 21 * ms}, 0, 0, 0, 3, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g cpuGaps
			var s Stats
			b := records(tc.times...)
			if n := parseRecords(b, ms, &g, &s); n != len(b) {
				t.Errorf("consumed %d of %d bytes", n, len(b))
			}
			if s.Count != tc.count || s.FrozenMillis != tc.frozenMillis || s.LongestMillis != tc.longestMs || s.Samples != tc.samples || s.Lost != tc.lost {
				t.Errorf("got %d freezes, %.1f ms, longest %.1f ms, %d samples, %d lost; want %d, %.1f, %.1f, %d, %d",
					s.Count, s.FrozenMillis, s.LongestMillis, s.Samples, s.Lost, tc.count, tc.frozenMillis, tc.longestMs, tc.samples, tc.lost)
			}
		})
	}
	// A record cut short is left for the next drain.
	b := records(1*ms, 2*ms)
	var g cpuGaps
	var s Stats
	if n := parseRecords(b[:len(b)-3], ms, &g, &s); n != 16 || s.Samples != 1 {
		t.Errorf("a cut record: consumed %d bytes, %d samples; want 16 and 1", n, s.Samples)
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"0-3", []int{0, 1, 2, 3}, true},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, true},
		{"", nil, false},
		{"3-1", nil, false},
		{"a", nil, false},
	}
	for _, tc := range tests {
		got, err := parseCPUList(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !equal(got, tc.want)) {
			t.Errorf("parseCPUList(%q): got %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProbeSamplesEveryCPU runs the real probe for 300 ms: every online
// CPU must deliver about a sample per millisecond, idle or not, or the
// gaps it reports mean nothing.
func TestProbeSamplesEveryCPU(t *testing.T) {
	p, err := Start(time.Millisecond)
	if err != nil {
		t.Skipf("no perf events here: %v", err) // unprivileged: the probe is off and says so
	}
	time.Sleep(300 * time.Millisecond)
	s := p.Stop()
	if s.CPUs < 1 || s.Samples < int64(s.CPUs)*150 {
		t.Errorf("300 ms at 1 ms on %d CPUs: got %d samples, want at least %d", s.CPUs, s.Samples, s.CPUs*150)
	}
	t.Logf("%d CPUs, %d samples, %d freezes, %.1f ms frozen, longest %.1f ms", s.CPUs, s.Samples, s.Count, s.FrozenMillis, s.LongestMillis)
}

func FuzzParseRecords(f *testing.F) {
	f.Add(records(1, 2, 0, 5000000))
	f.Add([]byte{9, 0, 0, 0, 0, 0, 3, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var g cpuGaps
		var s Stats
		if n := parseRecords(b, uint64(time.Millisecond), &g, &s); n < 0 || n > len(b) {
			t.Fatalf("consumed %d of %d bytes", n, len(b))
		}
	})
}

// TestWindow: a window where perf events are allowed reads a share of its
// own time, and a window that never started reads nil.
func TestWindow(t *testing.T) {
	if got := (Window{}).End(); got != nil {
		t.Errorf("a window without a probe: got %v, want nil", *got)
	}
	if _, err := Start(time.Millisecond); err != nil {
		t.Skipf("no perf events here: %v", err)
	}
	w := StartWindow()
	time.Sleep(200 * time.Millisecond)
	got := w.End()
	if got == nil || *got < 0 || *got > 1 {
		t.Fatalf("200 ms window: got %v, want a share in [0, 1]", got)
	}
	t.Logf("frozen %.2f %%", 100**got)
}
