package bench

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/freeze"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestOnlinePercentilesAndHdrLog(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.OpWorkload = []string{"GET", "SET"}
	cfg.OpPercent = []int{50, 50}
	cfg.InFlight = 4
	cfg.Verify = true
	cfg.Runtime = time.Second
	cfg.HdrOut = filepath.Join(t.TempDir(), "lat.hlog")
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("online: %v\n%s", err, human)
	}
	o := rep.Online
	if o == nil || len(rep.Cells) != 0 {
		t.Fatalf("online %v cells %d: want the online object and no cells", o, len(rep.Cells))
	}
	l := o.LatencyMicros
	ordered := []float64{l.Min, l.P5, l.P50, l.P95, l.P99, l.P999, l.Max}
	for i := 1; i < len(ordered); i++ {
		if ordered[i] < ordered[i-1] {
			t.Errorf("percentiles not monotone: %+v", l)
		}
	}
	if l.Min <= 0 || l.Avg < l.Min || l.Avg > l.Max || l.P50 > 1e6 {
		t.Errorf("latencies implausible for loopback: %+v", l)
	}
	if o.Ops == 0 || o.Hits != o.Ops || o.Mismatches != 0 || o.Incomplete {
		t.Errorf("ops %d hits %d mismatches %d incomplete %v: want every op a verified hit", o.Ops, o.Hits, o.Mismatches, o.Incomplete)
	}
	rows := regexp.MustCompile(`(?m)^[0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9.]+; [0-9]+; [0-9]+; [0-9.]+$`).FindAllString(human, -1)
	if len(rows) < 3 || !strings.Contains(human, onlineHeader) {
		t.Errorf("want the header and a row every 200 ms over 1 s, got %d rows:\n%s", len(rows), human)
	}
	logged := hlogCount(t, cfg.HdrOut)
	if logged != o.Ops {
		t.Errorf("--hdr-out holds %d latencies, want one per op (%d)", logged, o.Ops)
	}
}

func TestOnlineRateAndUntilInterrupted(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad = true
	cfg.Online = true
	cfg.Rate = 2000
	cfg.InFlight = 16 // slots never hold the pace back
	cfg.Runtime = -1  // until ctx ends
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rep, human, err := runJSON(t, ctx, cfg)
	if err != nil {
		t.Fatalf("--runtime -1 ended by the context: %v, want a clean end\n%s", err, human)
	}
	o := rep.Online
	// The offered load is paced: about 2000 ops/s, never a closed-loop
	// flood. The lower bound is loose: a loaded machine may fall behind.
	if rate := float64(o.Ops) / o.Seconds; rate < 1000 || rate > 2600 || o.Incomplete {
		t.Errorf("at --rate 2000: %d ops in %.2f s = %.0f ops/s (incomplete %v), want about 2000", o.Ops, o.Seconds, rate, o.Incomplete)
	}
	if !strings.Contains(human, "intended send time") {
		t.Errorf("rate mode does not say latency counts from the intended send time:\n%s", human)
	}
}

func TestServerClosingMidOnlineRunMarksIncomplete(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.InFlight = 8
	cfg.Runtime = 20 * time.Second
	go killAfterCommands(r, 30000)
	start := time.Now()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "stopped after") {
		t.Fatalf("got %v, want the online run stopped by the server closing\n%s", err, human)
	}
	if time.Since(start) > 15*time.Second {
		t.Errorf("the run went on for %v after the server died", time.Since(start))
	}
	if o := rep.Online; o == nil || !o.Incomplete || o.Ops == 0 {
		t.Errorf("online result %+v: want incomplete with the ops done so far", o)
	}
}

// TestRateChargesStallsToEveryDelayedOp stalls a real redis-server for
// 300 ms with DEBUG SLEEP during a paced run. Ops due during the stall are
// about a fifth of the run; measured from their due times they push the
// 95th percentile to about 225 ms. A client that measured from the actual
// send time (coordinated omission) would see one slow op and a p95 of
// microseconds.
func TestRateChargesStallsToEveryDelayedOp(t *testing.T) {
	r := testenv.MustRedisServer(t, "--enable-debug-command", "yes")
	cfg := configFor(t, r.Addr)
	cfg.Online = true
	cfg.Threads = []int{1}
	cfg.Rate = 2000
	cfg.Runtime = 1500 * time.Millisecond
	before := commandsProcessed(r.Addr)
	go func() {
		// Stall about half a second into the run (the load is ~100 MSETs).
		deadline := time.Now().Add(30 * time.Second)
		for commandsProcessed(r.Addr) < before+1100 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		redisSimple(t, r.Addr, "DEBUG", "SLEEP", "0.3")
	}()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, human)
	}
	l := rep.Online.LatencyMicros
	if l.Max < 250e3 || l.P95 < 50e3 {
		t.Errorf("after a 300 ms stall at 2000 ops/s: p95 %.0f µs, max %.0f µs; want p95 ≥ 50 ms and max ≥ 250 ms (latency from the intended send time)", l.P95, l.Max)
	}
}

// TestHeldSendsAreNotTheClients: a server that stalls across the end of
// a fixed-rate run holds every connection's one slot, so the ops due after
// the stall began are never sent. They are the server's delay: counted as
// held, they do not make the run client-bound, and ops due while the owed
// replies drain after the stop are not counted as due at all.
func TestHeldSendsAreNotTheClients(t *testing.T) {
	r := testenv.MustRedisServer(t, "--enable-debug-command", "yes")
	cfg := configFor(t, r.Addr)
	mustLoad(t, &cfg)
	cfg.SkipLoad, cfg.Online = true, true
	cfg.Threads, cfg.InFlight, cfg.Rate = []int{2}, 1, 1000
	cfg.Warmup, cfg.Runtime = 500*time.Millisecond, 1500*time.Millisecond
	// The stall starts 0.8 s into the 1.5 s window and ends 1.3 s after
	// it, give or take the run's set-up: any set-up under 0.8 s keeps it
	// across the stop.
	go func() {
		time.Sleep(1300 * time.Millisecond)
		redisSimple(t, r.Addr, "DEBUG", "SLEEP", "2")
	}()
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, human)
	}
	pc := rep.Online.Pacing
	if pc == nil {
		t.Fatalf("no pacing in a fixed-rate run's JSON:\n%s", human)
	}
	// 1.5 s at 1000/s is due; a stall from 0.8 s leaves about 700 unsent.
	if pc.Due < 1300 || pc.Due > 1700 {
		t.Errorf("due: got %d, want about 1500 (the window up to the stop, not the drain after it)", pc.Due)
	}
	if pc.Unsent < pc.Due/10 || pc.HeldUnsent < pc.Unsent*9/10 {
		t.Errorf("got %d of %d due unsent, %d of them held; want over a tenth unsent, nearly all held", pc.Unsent, pc.Due, pc.HeldUnsent)
	}
	t.Logf("%d due, %d unsent, %d of them held", pc.Due, pc.Unsent, pc.HeldUnsent)
	if !strings.Contains(human, "held by connections whose in-flight slots were all taken") {
		t.Errorf("the [Pacing] line does not say the unsent ops were held:\n%s", human)
	}
}

// TestPacingUnsent: ops left unsent make a run client-bound only where
// their connection had a slot free at the stop.
func TestPacingUnsent(t *testing.T) {
	const intervalNs, endNs = int64(time.Millisecond), int64(100 * time.Millisecond)
	for _, tt := range []struct {
		name         string
		nextK        int64 // per connection: 100 ops due in the window
		full         bool
		unsent, held int64
		bound        bool
	}{
		{"all sent", 100, false, 0, 0, false},
		{"a few unsent, slots free", 95, false, 10, 0, false},
		{"many unsent, slots free", 80, false, 40, 0, true},
		{"many unsent, windows full", 80, true, 40, 40, false},
	} {
		var ts []*onlineThread
		for range 2 {
			th := &onlineThread{nextK: tt.nextK, fullAtStop: tt.full,
				late: hdrhistogram.New(histLowestNs, histHighestNs, histDigits), own: hdrhistogram.New(histLowestNs, histHighestNs, histDigits)}
			ts = append(ts, th)
		}
		pc := pacing(ts, intervalNs, 0, endNs, 100)
		if pc.Due != 200 || pc.Unsent != tt.unsent || pc.HeldUnsent != tt.held || pc.ClientBound != tt.bound {
			t.Errorf("%s: got due %d, unsent %d, held %d, client-bound %v; want 200, %d, %d, %v", tt.name, pc.Due, pc.Unsent, pc.HeldUnsent, pc.ClientBound, tt.unsent, tt.held, tt.bound)
		}
	}
}

// TestPacingIsMeasured: a fixed-rate run reports how late its own sends
// were and which of the window's due ops it never sent: every op due in
// the window was sent or counted unsent (due − unsent = the ops recorded),
// and each recorded op has a lateness. A stall of the server holds the
// sender back (its in-flight slots fill), which shows as lateness but not
// in the client's own part, which alone decides client_bound: the stall is
// the server's, and its latency already carries it. The pacing
// is not checked against an absolute bound here (see the README's
// Workloads and latency tables for this machine's figures).
func TestPacingIsMeasured(t *testing.T) {
	r := testenv.MustRedisServer(t, "--enable-debug-command", "yes")
	for _, stall := range []bool{false, true} {
		cfg := configFor(t, r.Addr)
		if !stall {
			mustLoad(t, &cfg)
		}
		cfg.SkipLoad = true
		cfg.Online = true
		cfg.Threads = []int{2}
		cfg.InFlight = 1
		cfg.Rate = 1000
		cfg.Warmup = 500 * time.Millisecond
		cfg.Runtime = 1500 * time.Millisecond
		if stall {
			go func() {
				time.Sleep(time.Second)
				redisSimple(t, r.Addr, "DEBUG", "SLEEP", "0.2")
			}()
		}
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("stall %v: %v\n%s", stall, err, human)
		}
		o := rep.Online
		pc := o.Pacing
		if pc == nil {
			t.Fatalf("stall %v: no pacing in a fixed-rate run's JSON:\n%s", stall, human)
		}
		if pc.Due < 1000 || pc.Due-pc.Unsent != o.Ops {
			t.Errorf("stall %v: %d ops due in the window, %d unsent, %d recorded: want due ≈ 1500 and due − unsent = recorded", stall, pc.Due, pc.Unsent, o.Ops)
		}
		if o.Ops > 0 && (pc.LatenessMicros.P50 <= 0 || pc.LatenessMicros.Max < pc.LatenessMicros.P99) {
			t.Errorf("stall %v: lateness %+v: want a distribution of the sends' lateness", stall, pc.LatenessMicros)
		}
		if stall && pc.LatenessMicros.Max < 100e3 {
			t.Errorf("a 200 ms stall with one op in flight per connection: sends at most %.0f µs late, want ≥ 100 ms (the sender waits for a slot)", pc.LatenessMicros.Max)
		}
		// Under half: counted in the own part, the stall would make its max
		// the whole lateness's; left out, the own max is the client's worst
		// hiccup, which under -race beside other packages' tests reached
		// 52 ms of a 202 ms whole once (a fresh clone's CI).
		if stall && pc.OwnLatenessMicros.Max > pc.LatenessMicros.Max/2 {
			t.Errorf("a 200 ms stall of the server: the client's own lateness max %.0f µs, all %.0f µs; want the stall left out of the own part (under half)",
				pc.OwnLatenessMicros.Max, pc.LatenessMicros.Max)
		}
		if o.Ops > 0 && pc.OwnLatenessMicros.P99 > pc.LatenessMicros.P99 {
			t.Errorf("stall %v: own lateness p99 %.1f µs above all lateness p99 %.1f µs", stall, pc.OwnLatenessMicros.P99, pc.LatenessMicros.P99)
		}
		if probe, err := freeze.Start(time.Millisecond); err == nil { // perf events allowed here
			probe.Stop()
			if f := o.HostFreezes; f == nil || f.CPUs < 1 || f.Samples < int64(f.CPUs)*500 || !strings.Contains(human, "stood still") {
				t.Errorf("stall %v: host freezes %+v over a %.1f s window, human lines with them: %v; want every CPU sampled about every millisecond",
					stall, f, o.Seconds, strings.Contains(human, "stood still"))
			}
		}
		if !strings.Contains(human, "[Pacing]: sends late by p50") {
			t.Errorf("stall %v: the human lines lack the pacing:\n%s", stall, human)
		}
	}
	closed := configFor(t, r.Addr)
	closed.SkipLoad, closed.Online, closed.Runtime = true, true, 300*time.Millisecond
	closed.NoFreezeProbe = true
	rep, human, err := runJSON(t, context.Background(), closed)
	if err != nil || rep.Online.Pacing != nil {
		t.Errorf("closed loop: pacing %+v (%v), want none", rep.Online.Pacing, err)
	}
	if rep.Online.HostFreezes != nil || strings.Contains(human, "stood still") {
		t.Errorf("--no-freeze-probe: got host freezes %+v, want none measured and none printed:\n%s", rep.Online.HostFreezes, human)
	}
}
