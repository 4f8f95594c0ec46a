package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tierbench/tierbench/internal/testenv"
)

// TestOnlineWarmupIsNotRecorded offers a fixed rate to redis-server for a
// warm-up and a recorded window of equal length: the server answers both,
// but the histogram, --hdr-out and the figures hold only the second, so the
// count is about rate × recorded seconds, not rate × the whole run.
func TestOnlineWarmupIsNotRecorded(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	const rate = 2000.0
	cfg.SkipLoad = true
	cfg.Online = true
	cfg.Verify = true
	cfg.Rate = rate
	cfg.InFlight = 16 // slots never hold the pace back
	cfg.Warmup = time.Second
	cfg.Runtime = time.Second
	cfg.HdrOut = filepath.Join(t.TempDir(), "lat.hlog")
	before := commandsProcessed(r.Addr)
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("online with a warm-up: %v\n%s", err, human)
	}
	// Less the INFO itself and each connection's PING.
	served := commandsProcessed(r.Addr) - before - 1 - int64(cfg.Threads[0])
	o := rep.Online

	h, err := hdrhistogram.Decode([]byte(o.Histogram))
	if err != nil {
		t.Fatalf("decode the JSON histogram: %v", err)
	}
	logged := hlogCount(t, cfg.HdrOut)
	if h.TotalCount() != o.Ops || logged != o.Ops {
		t.Errorf("histogram %d, --hdr-out %d latencies: want one per recorded op (%d)", h.TotalCount(), logged, o.Ops)
	}
	// The recorded window is the runtime, plus the drain of the last
	// replies; never the warm-up too.
	if o.Seconds < 0.9 || o.Seconds > 1.5 {
		t.Errorf("recorded window %.2f s, want about the 1 s runtime", o.Seconds)
	}
	if o.Warmup.Seconds != 1 || o.Warmup.Ops < int64(0.5*rate) || o.Warmup.Ops > int64(1.3*rate) || o.Warmup.Hits != o.Warmup.Ops {
		t.Errorf("warm-up %+v: want about %.0f verified hits in 1 s", o.Warmup, rate)
	}
	// The pacing is by intended send time, so recorded ops are about rate
	// × recorded seconds whatever the machine's load; with the warm-up
	// counted they would be about twice that.
	if want := rate * o.Seconds; float64(o.Ops) < 0.5*want || float64(o.Ops) > 1.3*want {
		t.Errorf("recorded %d ops in %.2f s at --rate %.0f, want about %.0f (rate × recorded seconds, not × the whole %.2f s)",
			o.Ops, o.Seconds, rate, want, o.Seconds+o.Warmup.Seconds)
	}
	if ach := o.OpsPerSec; ach < 0.5*rate || ach > 1.3*rate {
		t.Errorf("achieved %.0f ops/s over the recorded window, want about the offered %.0f", ach, rate)
	}
	// The warm-up's ops were sent and answered, only not recorded.
	if served >= 0 && served != o.Ops+o.Warmup.Ops {
		t.Errorf("server processed %d commands, want the %d recorded plus the %d of the warm-up", served, o.Ops, o.Warmup.Ops)
	}
	if !strings.Contains(human, "[Warm-up]:") {
		t.Errorf("human output does not mention the warm-up:\n%s", human)
	}
}

// hlogCount is the number of latencies an HdrHistogram log holds.
func hlogCount(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reader := hdrhistogram.NewHistogramLogReader(f)
	var n int64
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		if h == nil {
			return n
		}
		n += h.TotalCount()
	}
}

// TestOnlineDoneAllocatesNothing: taking a reply, warm-up or recorded, is on
// every op's path.
func TestOnlineDoneAllocatesNothing(t *testing.T) {
	th := &onlineThread{rr: &replyReader{}, hist: hdrhistogram.New(histLowestNs, histHighestNs, histDigits), warmupNs: 1000}
	tests := []struct {
		name         string
		stampNs      int64
		wantRecorded int64
	}{
		{"warm-up", 999, 0},
		{"recorded", 1000, 1},
	}
	for _, tt := range tests {
		th.hist.Reset()
		allocs := testing.AllocsPerRun(100, func() { th.done(tt.stampNs, tt.stampNs+500) })
		if allocs != 0 {
			t.Errorf("%s: done allocated %v times per op, want 0", tt.name, allocs)
		}
		if got := th.hist.TotalCount(); (got > 0) != (tt.wantRecorded > 0) {
			t.Errorf("%s: histogram holds %d, want recorded %v", tt.name, got, tt.wantRecorded > 0)
		}
	}
}
