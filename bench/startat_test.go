package bench

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestStartAtSharesOneWindow runs two clients as two hosts would: one
// start time, one window. Each waits for the start, measures exactly the
// window (Seconds is the window, not its own time), and a client ready
// late says by how much.
func TestStartAtSharesOneWindow(t *testing.T) {
	r := testenv.MustRedisServer(t)
	load := configFor(t, r.Addr)
	mustLoad(t, &load)
	window := 700 * time.Millisecond
	// Lead enough for both to connect and build their requests on a
	// busy machine under -race.
	start := time.Now().Add(1500 * time.Millisecond).Truncate(time.Millisecond)
	reps := make([]*Report, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := configFor(t, r.Addr)
			cfg.SkipLoad, cfg.StartAt, cfg.Runtime = true, start, window
			cfg.PrebuiltOpsPerThread = 1000
			reps[i], _, errs[i] = runJSON(t, context.Background(), cfg)
		}()
	}
	wg.Wait()
	if since := time.Since(start); since < window {
		t.Errorf("the clients returned %v after the start, before the %v window ended", since, window)
	}
	for i, rep := range reps {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		c := rep.Cells[0]
		if c.Window == nil || c.Window.StartUnixMs != start.UnixMilli() || c.Window.Seconds != window.Seconds() || c.Window.LateSeconds != 0 {
			t.Errorf("client %d window: got %+v, want start %d, %v s, not late", i, c.Window, start.UnixMilli(), window.Seconds())
		}
		if c.Seconds != window.Seconds() || c.Ops == 0 || c.OpsPerSec != float64(c.Ops)/window.Seconds() {
			t.Errorf("client %d: got %d ops in %v s at %v ops/s, want ops over exactly the %v s window", i, c.Ops, c.Seconds, c.OpsPerSec, window.Seconds())
		}
	}

	// Ready after the start: it measures the rest of the window.
	cfg := configFor(t, r.Addr)
	cfg.SkipLoad, cfg.StartAt, cfg.Runtime = true, time.Now().Add(-300*time.Millisecond), window
	cfg.PrebuiltOpsPerThread = 1000
	rep, _, err := runJSON(t, context.Background(), cfg)
	since := time.Since(cfg.StartAt).Seconds()
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Cells[0].Window; w == nil || w.LateSeconds < 0.3 || w.LateSeconds > since || w.Seconds != window.Seconds() {
		t.Errorf("late client: window %+v, want late_seconds from 0.3 to %.2f (the start was 0.3 s past) and the %v s window", w, since, window.Seconds())
	}
}

// TestOnlineHistogramIsTheRun: the online report's encoded histogram
// holds every op of the run, so merging clients' histograms counts all
// their ops.
func TestOnlineHistogramIsTheRun(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.StartAt = time.Now().Add(100 * time.Millisecond)
	cfg.Runtime = 400 * time.Millisecond
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, human)
	}
	h, err := hdrhistogram.Decode([]byte(rep.Online.Histogram))
	if err != nil {
		t.Fatalf("decode the histogram: %v", err)
	}
	if h.TotalCount() != rep.Online.Ops || rep.Online.Ops == 0 {
		t.Errorf("histogram count %d, ops %d: want equal and non-zero", h.TotalCount(), rep.Online.Ops)
	}
	if rep.Online.Window == nil || rep.Online.Window.Seconds != 0.4 {
		t.Errorf("online window: got %+v, want 0.4 s", rep.Online.Window)
	}
}

func TestStartAtNeedsARuntime(t *testing.T) {
	cfg := DefaultConfig()
	cfg.StartAt, cfg.Runtime = time.Now(), 0
	if err := cfg.Validate(); !errors.Is(err, ErrUsage) {
		t.Errorf("--start-at with --runtime 0: got %v, want ErrUsage", err)
	}
}
