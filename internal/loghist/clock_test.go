package loghist

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestNowKeepsTime: Now advances as the runtime's clock does, never goes
// back within a goroutine, and, on an amd64 host whose kernel keeps time
// with the counter, is read from the counter (the fast path is the one
// this test checks there).
func TestNowKeepsTime(t *testing.T) {
	if runtime.GOARCH == "amd64" {
		b, err := os.ReadFile(clocksourcePath)
		if err == nil && bytes.Equal(bytes.TrimSpace(b), []byte("tsc")) && !tscOn() {
			t.Fatalf("the kernel's clocksource is tsc, but Now does not read the counter")
		}
	}
	for _, sleep := range []time.Duration{time.Millisecond, 30 * time.Millisecond} {
		n0, r0 := Now(), sinceEpoch()
		time.Sleep(sleep)
		n1, r1 := Now(), sinceEpoch()
		got, want := n1-n0, r1-r0
		// 0.05 % of the span plus the skew of two reading pairs.
		if d := got - want; d > want/2000+20_000 || d < -want/2000-20_000 {
			t.Errorf("over %v: Now advanced %d ns, the runtime's clock %d ns", sleep, got, want)
		}
	}
	prev := Now()
	for range 100_000 {
		n := Now()
		if n < prev {
			t.Fatalf("Now went back from %d to %d", prev, n)
		}
		prev = n
	}
}

func BenchmarkNow(b *testing.B) {
	var sum int64
	for b.Loop() {
		sum += Now()
	}
	if sum == 0 {
		b.Fatal("no readings")
	}
}
