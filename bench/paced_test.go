package bench

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestPacedLoopAllocatesNothing sends GETs to a real redis-server through
// a paced loop, every op due at once, and reads their replies: the loop's
// send and receive path allocates nothing per op.
func TestPacedLoopAllocatesNothing(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad, cfg.Online, cfg.Rate, cfg.InFlight, cfg.Verify, cfg.Runtime = true, true, 1000, 4, true, time.Second
	p, err := cfg.plan()
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]*onlineThread, 2)
	for i := range ts {
		conn, err := dial(context.Background(), p.addr, p.spec)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.conn.Close()
		ts[i] = &onlineThread{conn: conn, rr: newReplyReader(conn, readBufferBytes, opGet, true, p.ValueLength),
			hist: hdrhistogram.New(histLowestNs, histHighestNs, histDigits), late: hdrhistogram.New(histLowestNs, histHighestNs, histDigits),
			own: hdrhistogram.New(histLowestNs, histHighestNs, histDigits)}
	}
	var stop, cut atomic.Bool
	loops, err := newPacedLoops(p, ts, 1, 1, &stop, &cut, func() { stop.Store(true) }) // 1 ns apart: every op is due
	if err != nil {
		t.Fatal(err)
	}
	l := loops[0]
	defer l.close()
	l.base = time.Now()
	round := func() {
		l.sendDue(l.now())
		for _, c := range l.conns {
			for c.n > 0 && !c.done {
				l.poll(-1)
			}
		}
	}
	round()
	allocs := testing.AllocsPerRun(200, round)
	for _, th := range ts {
		if th.sendErr != nil || th.recvErr != nil {
			t.Fatal(th.sendErr, th.recvErr)
		}
		if c := th.rr.counts; c.hits == 0 || c.mismatches != 0 || c.misses != 0 {
			t.Errorf("counts %+v: want verified hits", c)
		}
		if th.hist.TotalCount() != th.rr.counts.hits || th.late.TotalCount() != th.hist.TotalCount() {
			t.Errorf("%d latencies and %d lateness values for %d replies, want one of each per reply", th.hist.TotalCount(), th.late.TotalCount(), th.rr.counts.hits)
		}
	}
	if allocs != 0 {
		t.Errorf("a round of %d GETs on each of %d connections, sent and answered, allocated %v times, want 0", p.InFlight, len(ts), allocs)
	}
}

// TestPacingIsPrecise offers GETs at a fixed rate to a real redis-server,
// which answers in microseconds: half the sends leave within a bound that
// sends timed by Go's timers cross, since those wait in whole milliseconds
// (their lateness p50 was 0.5–0.9 ms here, p99 1–7 ms). The bound is on
// the median: on a shared two-CPU machine the p99 is how long other
// processes hold the CPUs (up to 40 ms seen under load), which no client
// can pace around; it is logged. A host that takes the CPUs away for a
// whole window (a CI run's parallel packages on a VM whose steal rose:
// p50 652 µs, 48 of 2057 ops never sent) can push the median over too,
// so the run is tried up to three times and the best median must be
// within the bound: a pacer on Go's timers misses it every time. Under
// -race the median is logged too (235 µs seen under load):
// scripts/test.sh runs this test without it.
func TestPacingIsPrecise(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad, cfg.Online, cfg.Rate, cfg.InFlight = true, true, 2000, 4
	cfg.Threads = []int{4}
	cfg.Runtime, cfg.Warmup = time.Second, 200*time.Millisecond
	const boundMicros = 300
	const attempts = 3
	best, bestHuman := math.Inf(1), ""
	for attempt := 1; attempt <= attempts; attempt++ {
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("online: %v\n%s", err, human)
		}
		o := rep.Online
		pc := o.Pacing
		if pc == nil || pc.Due == 0 || pc.Due-pc.Unsent != o.Ops {
			t.Fatalf("pacing %+v with %d ops: want the lateness measured and due − unsent = ops\n%s", pc, o.Ops, human)
		}
		if pc.Loops < 1 || pc.SpinSeconds > o.ClientCPUSeconds {
			t.Errorf("pacing: %d loops, %.3f s spun of %.3f s client CPU: want the loops and their spin counted", pc.Loops, pc.SpinSeconds, o.ClientCPUSeconds)
		}
		steal := -1.0
		if o.HostStealShare != nil {
			steal = *o.HostStealShare
		}
		t.Logf("attempt %d: lateness p50 %.1f p99 %.1f max %.1f µs; latency p50 %.1f p99 %.1f µs; host steal %.3f",
			attempt, pc.LatenessMicros.P50, pc.LatenessMicros.P99, pc.LatenessMicros.Max, o.LatencyMicros.P50, o.LatencyMicros.P99, steal)
		if pc.LatenessMicros.P50 < best {
			best, bestHuman = pc.LatenessMicros.P50, human
		}
		if best <= boundMicros || raceEnabled {
			return
		}
	}
	t.Errorf("sends late by p50 %.1f µs at best of %d runs, want under %d µs\n%s", best, attempts, boundMicros, bestHuman)
}

// TestPacedLoopCount checks how many paced loops a rate gets and how long
// each may spin: a loop per CPU while their sends are far enough apart to
// block between them, fewer once they would spin through their gaps.
func TestPacedLoopCount(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tests := []struct {
		loops, threads int
		rate           float64
		want           int
	}{
		{0, 8, 1000, 2},     // 2 ms between a loop's sends
		{0, 8, 5000, 2},     // 400 µs: still blocks between them
		{0, 8, 13000, 1},    // 154 µs for two loops: one spins instead
		{0, 8, 250000, 2},   // three loops' worth, two CPUs
		{0, 1, 1000, 1},     // never more than the connections
		{3, 8, 13000, 3},    // --loops decides
		{16, 4, 1000000, 4}, // but not past the connections
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Loops = tt.loops
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		if got := pacedLoopCount(p, tt.threads, tt.rate); got != tt.want {
			t.Errorf("--loops %d, %d connections at %.0f ops/s: got %d loops, want %d", tt.loops, tt.threads, tt.rate, got, tt.want)
		}
	}
	spins := []struct {
		intervalNs int64
		threads, n int
		spare      bool
		want       int64
	}{
		{8_000_000, 8, 1, true, pacedSpinMaxNs}, // 1 ms gap: the ceiling
		{8 * 77_000, 8, 1, true, 77_000},        // the whole gap, a CPU to spare
		{8 * 77_000, 8, 1, false, pacedSpinMinNs},
		{8 * 160_000, 8, 1, false, 20_000}, // an eighth of the gap
	}
	runtime.GOMAXPROCS(1) // one loop on the client's one CPU: none spare
	for _, own := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.OwnCPUs = own
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		if got := spinSpare(p, 1); got != own {
			t.Errorf("one loop on one CPU, --own-cpus %v: spinSpare %v, want %v", own, got, own)
		}
		if got := spinYields(p); got == own {
			t.Errorf("--own-cpus %v: spinYields %v, want %v (a server may share the CPU only without it)", own, got, !own)
		}
	}
	for _, tt := range spins {
		if got := maxSpin(tt.intervalNs, tt.threads, tt.n, tt.spare); got != tt.want {
			t.Errorf("maxSpin(%d ns, %d connections, %d loops, spare %v) = %d ns, want %d", tt.intervalNs, tt.threads, tt.n, tt.spare, got, tt.want)
		}
	}
}
