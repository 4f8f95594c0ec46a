package orchestrator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fleet"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// latencyRunner is a runner that can run latency steps against addr with
// the real binary as a child process, writing into a temp bundle.
func latencyRunner(t *testing.T, cellSeconds int) (*runner, target.Server, results.Row) {
	t.Helper()
	bin := testenv.MustBinary(t)
	pids, err := safe.NewPIDFile(t.TempDir(), "latency-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pids.Close() })
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, results.DirLogs), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: plan.Config{Workload: results.Workload{
		DBSize:      2000,
		KeyLength:   16,
		ValueLength: 96,
		Batch:       64,
		CellSeconds: cellSeconds,
	},
	},
		out: out, stderr: io.Discard, drv: process.NewDriver(bin, pids), local: localMachine{pids: pids}}
	r.clients = r.localFleet()
	return r, target.Server{}, results.Row{Backend: "redis", Pin: plan.PinNone, Label: "no pin"}
}

// debugSleep has a redis-server stop answering for seconds ("0.5").
func debugSleep(t *testing.T, addr, seconds string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$%d\r\n%s\r\n", len(seconds), seconds); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && line != "+OK\r\n" {
		t.Errorf("DEBUG SLEEP: got %q, want +OK", line)
	}
	return err
}

// TestLatencyStepShowsAStall runs two fixed-rate steps against a real
// redis-server, one while it sleeps for 500 ms (DEBUG SLEEP): measured
// from the intended send times, the stall must show in p99.9 at close to
// its length, and the quiet step must stay below that. The step's
// HdrHistogram log must read back with the same maximum, and each step
// must have had its unrecorded warm-up at the offered rate.
func TestLatencyStepShowsAStall(t *testing.T) {
	redis := testenv.MustRedisServer(t, "--enable-debug-command", "yes")
	r, tgt, row := latencyRunner(t, 3)
	tgt.Addr = redis.Addr
	// Load the keys the steps read.
	if _, _, err := r.drv.RunClient(t.Context(), r.benchSpec(row, tgt, "load", []string{"--op", "MSET", "--runtime", "0", "-t", "2"})); err != nil {
		t.Fatal(err)
	}
	best := results.Cell{Row: row, Threads: 4, Median: 4000}
	quiet, err := latency.Step(t.Context(), rowEnv{r, row, tgt}, row, best, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	const stall = 500 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		// Half a second into the recorded 3 s: the step's 1 s warm-up
		// starts once the client has started and dialled, which took over
		// 100 ms at load 17, and a stall begun in the warm-up is partly
		// not recorded.
		time.Sleep(1500 * time.Millisecond)
		done <- debugSleep(t, redis.Addr, "0.5")
	}()
	stalled, err := latency.Step(t.Context(), rowEnv{r, row, tgt}, row, best, 0.75)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("DEBUG SLEEP: %v", err)
	}
	t.Logf("p99.9 %s without the stall, %s with it (p50 %s, max %s)", plots.FormatMicros(quiet.P999Micros),
		plots.FormatMicros(stalled.P999Micros), plots.FormatMicros(stalled.P50Micros), plots.FormatMicros(stalled.MaxMicros))
	stallMicros := float64(stall.Microseconds())
	if stalled.P999Micros < 0.8*stallMicros {
		t.Errorf("stalled step: got p99.9 %s, want at least 0.8 × the %v stall", plots.FormatMicros(stalled.P999Micros), stall)
	}
	// The machine is shared: the quiet step's tail is scheduling noise
	// (100–250 ms seen under load), which must stay below the line the
	// stall crosses.
	if quiet.P999Micros >= 0.8*stallMicros {
		t.Errorf("got p99.9 %s without the stall and %s with it, want the quiet step under 0.8 × the %v stall",
			plots.FormatMicros(quiet.P999Micros), plots.FormatMicros(stalled.P999Micros), stall)
	}
	for _, rec := range []results.LatencyRecord{quiet, stalled} {
		if rec.OfferedOpsPerSec != best.Median*rec.Share || rec.Ops == 0 || rec.Misses != 0 || rec.Hlog == "" {
			t.Errorf("step %.0f %%: got offered %.0f, %d ops, %d misses, hlog %q; want %.0f offered, ops, no misses, a log",
				100*rec.Share, rec.OfferedOpsPerSec, rec.Ops, rec.Misses, rec.Hlog, best.Median*rec.Share)
		}
		if s := rec.HostStealShare; hostCountsSteal() && (s == nil || *s < 0 || *s > 1) {
			t.Errorf("step %.0f %%: got host steal %v, want the share the client read", 100*rec.Share, s)
		}
		if s := rec.HostFrozenShare; perfEventsAllowed() && (s == nil || *s < 0 || *s > 1) {
			t.Errorf("step %.0f %%: got host frozen share %v, want the share the client measured", 100*rec.Share, s)
		}
		if pc := rec.Pacing; pc == nil || pc.Due == 0 || pc.Due-pc.Unsent != rec.Ops {
			t.Errorf("step %.0f %%: pacing %+v with %d ops recorded: want the client's lateness and due − unsent = ops", 100*rec.Share, pc, rec.Ops)
		}
		// Half the offered rate over the warm-up: the client sends on a
		// schedule, and a shared machine may delay its start.
		if want := 0.5 * rec.OfferedOpsPerSec * results.LatencyWarmupSeconds; rec.WarmupSeconds != results.LatencyWarmupSeconds || float64(rec.WarmupOps) < want {
			t.Errorf("step %.0f %%: got a %v s warm-up of %d ops, want %d s of at least %.0f", 100*rec.Share, rec.WarmupSeconds, rec.WarmupOps, results.LatencyWarmupSeconds, want)
		}
	}
	f, err := os.Open(filepath.Join(r.out, stalled.Hlog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := hdrhistogram.NewHistogramLogReader(f).NextIntervalHistogram()
	if err != nil || h == nil {
		t.Fatalf("read back %s: got %v, %v; want one interval", stalled.Hlog, h, err)
	}
	if got := float64(h.Max()) / 1e3; got < 0.8*stallMicros || h.TotalCount() != stalled.Ops {
		t.Errorf("%s: got max %s over %d ops, want ≥ 0.8 × %v over the step's %d ops", stalled.Hlog, plots.FormatMicros(got), h.TotalCount(), stall, stalled.Ops)
	}
}

func TestBestCellAndResolve(t *testing.T) {
	bundlePlan := referencePlan()
	best, ok := latency.BestCell(bundlePlan, referencePasses(bundlePlan), bundlePlan.Rows[0])
	if !ok || best.Threads != 64 {
		t.Errorf("bestCell of the reference's first row: got %+v, %v; want t=64", best, ok)
	}
	if _, ok := latency.BestCell(bundlePlan, nil, bundlePlan.Rows[0]); ok {
		t.Errorf("bestCell with no Passes: got a cell, want none")
	}
	for _, tt := range []struct {
		cfg  plan.Config
		want bool
	}{
		{plan.Config{Workload: results.Workload{Profile: plan.ProfileQuick}}, false},
		{plan.Config{Workload: results.Workload{Profile: plan.ProfileQuick, Latency: true, Given: []string{"latency"}}}, true},
		{plan.Config{Workload: results.Workload{Profile: plan.ProfileReference}}, true},
		{plan.Config{Workload: results.Workload{Profile: plan.ProfileReference, Given: []string{"latency"}}}, false},
	} {
		got, err := tt.cfg.Resolve(func(string) string { return "" }, parts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Latency != tt.want {
			t.Errorf("resolve(%s, latency %v, given %v): got latency %v, want %v", tt.cfg.Profile, tt.cfg.Latency, tt.cfg.Given, got.Latency, tt.want)
		}
	}
}

func FuzzParseOnline(f *testing.F) {
	f.Add([]byte(`{"online":{"ops":10,"seconds":1,"ops_per_sec":10,"latency_us":{"p50":1,"p99":2,"p99_9":3,"max":4},"histogram":""}}`))
	h := hdrhistogram.New(1, 60e9, 3)
	h.RecordValue(1000)
	enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	f.Add([]byte(`warning line` + "\n" + `{"online":{"ops":1,"histogram":"` + string(enc) + `"}}`))
	f.Add([]byte(`{"online":{"ops":-1}}`))
	f.Add([]byte(`{"online":{"histogram":"HISTFAAAA"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, h, err := latency.ParseOnline(data)
		if err != nil {
			return
		}
		if o.Online == nil || o.Online.Ops < 0 {
			t.Fatalf("accepted %+v", o)
		}
		if h != nil {
			h.ValueAtQuantile(99.9)
		}
	})
}

// TestResumeRunsMissingLatency stops a --latency run in its latency phase
// (SIGINT once latency.jsonl holds two steps): --resume measures no pass
// again, keeps the two steps as they were and runs the three the row
// lacks; a second --resume finds the row complete and skips it.
func TestResumeRunsMissingLatency(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	state := filepath.Join(base, "state")
	run := startBackground(t, bin, append(tinyArgs(t, data, out), "--runtime", "process", "--backends", "libaio", "--pin", "none", "--latency")...)
	run.waitUntil(t, "two latency steps", 3*time.Minute, func() bool {
		steps, _ := readLatencySteps(out)
		return len(steps) >= 2
	})
	run.interrupt(t)
	passes, _, err := results.ReadCells(out)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := readLatencySteps(out)
	if err != nil || len(kept) < 2 || len(kept) >= len(latency.Shares) {
		t.Fatalf("after SIGINT: %d latency steps (%v), want at least 2 and not all %d", len(kept), err, len(latency.Shares))
	}

	r := runBinary(t, bin, "run", "--resume", out, "--state-dir", state)
	if r.code != 0 {
		t.Fatalf("resume exited %d:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"passes done already, what its steps measure not all in the bundle", "latency: Libaio"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("resume: stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "cell 1/") {
		t.Errorf("resume measured a pass again:\n%s", r.stderr)
	}
	after, _, _ := results.ReadCells(out)
	if len(after) != len(passes) {
		t.Errorf("resume: %d passes in cells.jsonl, want the %d of before", len(after), len(passes))
	}
	steps, err := readLatencySteps(out)
	if err != nil {
		t.Fatal(err)
	}
	if recs, _ := results.ReadLatency(out); len(recs) != len(steps)+1 {
		t.Errorf("latency.jsonl after resume: %d records, want the %d steps and one floor", len(recs), len(steps))
	}
	var shares []float64
	for _, l := range steps {
		shares = append(shares, l.Share)
	}
	if !slices.Equal(shares, latency.Shares) {
		t.Errorf("latency.jsonl after resume: got shares %v, want each of %v once", shares, latency.Shares)
	}
	for i, k := range kept {
		if i < len(steps) && (steps[i].Share != k.Share || !steps[i].Time.Equal(k.Time)) {
			t.Errorf("step %d after resume: got share %v at %v, want the %v step kept as it was measured at %v", i, steps[i].Share, steps[i].Time, k.Share, k.Time)
		}
	}
	checkBundle(t, out, r.stdout, 1, 1)

	again := runBinary(t, bin, "run", "--resume", out, "--state-dir", state)
	if again.code != 0 || !strings.Contains(again.stderr, "done already, skipped") || strings.Contains(again.stderr, "latency: Libaio") {
		t.Errorf("second resume: exit %d, want the row skipped and no step run:\n%s", again.code, again.stderr)
	}
	if steps2, _ := readLatencySteps(out); len(steps2) != len(latency.Shares) {
		t.Errorf("after the second resume: %d steps, want %d", len(steps2), len(latency.Shares))
	}
	assertNoProcesses(t, bin)
}

// TestLatencyTodo: a row whose passes are done still counts as work to
// --resume until the bundle holds its latency: every step with --latency
// (none for a row without a cell in the table), and across hosts its
// merged online phase, which a torn last line of hosts/latency.jsonl does
// not lose.
func TestLatencyTodo(t *testing.T) {
	dir := writeBundle(t, false)
	bundlePlan := referencePlan()
	r := &runner{cfg: plan.ConfigOf(bundlePlan.Workload), plan: bundlePlan, out: dir}
	r.clients = r.localFleet()
	row := bundlePlan.Rows[0]
	todo := func(what string, row results.Row, want bool) {
		t.Helper()
		if got, err := r.stepsTodo(row); err != nil || got != want {
			t.Errorf("%s: stepsTodo(%s) = %v, %v; want %v", what, row.ID(), got, err, want)
		}
	}
	steps := bundletest.LatencySteps(bundlePlan)
	for _, rec := range steps[:2] {
		if err := latency.Append(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	todo("two steps of five", row, true)
	for _, rec := range steps[2:] {
		if err := latency.Append(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	todo("every step", row, false)
	todo("no cell in the table", results.Row{Backend: "uring", Pin: plan.PinNone, Label: "elsewhere"}, false)
	r.cfg.Latency = false
	todo("no --latency", bundlePlan.Rows[1], false)

	r.clients = fleet.NewHosts(fleet.Env{Bundle: dir}, &docker.HostsDriver{})
	todo("across hosts, no merged phase", row, true)
	if err := os.MkdirAll(filepath.Join(dir, results.DirHosts), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, results.DirHosts, results.FileHostsLatency)
	line, err := json.Marshal(results.HostsLatencyRecord{Row: row, Count: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"row":{"backend":"libaio"`)
	f.Close()
	todo("across hosts, the phase recorded", row, false)
	todo("across hosts, another row's phase", bundlePlan.Rows[1], true)
}

// TestHlogNamesAreTheRows: rows that differ in any dimension of their id
// (a memory-tier sweep's rows share backend and pin) log their steps to
// files of their own.
func TestHlogNamesAreTheRows(t *testing.T) {
	base := results.Row{Backend: "libaio", Pin: "none"}
	rows := []results.Row{base}
	for _, change := range []func(*results.Row){
		func(r *results.Row) { r.Memory = "32m" },
		func(r *results.Row) { r.Memory = "128m" },
		func(r *results.Row) { r.Server = "redis" },
		func(r *results.Row) { r.Batch = 64 },
		func(r *results.Row) { r.Shards = 2 },
		func(r *results.Row) { r.TLS = true },
		func(r *results.Row) { r.Pin = "0" },
	} {
		r := base
		change(&r)
		rows = append(rows, r)
	}
	seen := map[string]string{}
	for _, r := range rows {
		name := latency.HlogName(r, "10")
		if strings.ContainsRune(name, '/') {
			t.Errorf("row %s: got %q, want a file name without a directory", r.ID(), name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("rows %s and %s: both log to %q, want a file each", other, r.ID(), name)
		}
		seen[name] = r.ID()
	}
}

// TestFloorStep measures a row's floor against a real redis-server: PING
// at the lowest step's rate, appended to latency.jsonl as the row's floor,
// which latencySteps then does not run again and which no GET share
// counts as done.
func TestFloorStep(t *testing.T) {
	redis := testenv.MustRedisServer(t)
	r, tgt, row := latencyRunner(t, 1)
	tgt.Addr = redis.Addr
	best := results.Cell{Row: row, Threads: 2, Median: 20000}
	if err := latency.FloorStep(t.Context(), rowEnv{r, row, tgt}, row, best); err != nil {
		t.Fatal(err)
	}
	recs, err := results.ReadLatency(r.out)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := results.FloorOf(recs, row)
	if !ok || len(recs) != 1 {
		t.Fatalf("latency.jsonl: got %+v, want the one floor record", recs)
	}
	if f.Floor != latency.FloorCommand || f.Share != 0 || f.OfferedOpsPerSec != latency.Shares[0]*best.Median || f.Ops == 0 || f.Errors != 0 || f.Pacing == nil {
		t.Errorf("floor: got %+v, want PING at %.0f/s answered without errors, with the client's pacing", f, latency.Shares[0]*best.Median)
	}
	// Loopback and an idle redis-server: the floor is well under 50 ms
	// even on a loaded machine, and above nothing.
	if f.P50Micros <= 0 || f.P50Micros > 50e3 {
		t.Errorf("floor p50 %s, want a loopback round trip", plots.FormatMicros(f.P50Micros))
	}
	if got := latency.MissingShares(recs, row); !slices.Equal(got, latency.Shares) {
		t.Errorf("with only the floor in latency.jsonl: missing shares %v, want all of %v", got, latency.Shares)
	}
}

// readLatencySteps reads the latency steps of the bundle at out, without the
// rows' floors (calibration records).
func readLatencySteps(out string) ([]results.LatencyRecord, error) {
	recs, err := results.ReadLatency(out)
	return slices.DeleteFunc(recs, func(l results.LatencyRecord) bool { return !l.Step() }), err
}

// TestBenchSpecPinsTheClientApart: a pinned row's client runs on its own
// CPUs and is told so (--own-cpus: its paced loops may spin there); an
// unpinned row's client shares the server's CPUs and is not.
func TestBenchSpecPinsTheClientApart(t *testing.T) {
	r := &runner{cfg: plan.Config{Workload: results.Workload{DBSize: 10, KeyLength: 16, ValueLength: 96}}, out: t.TempDir(),
		local: localMachine{pinning: rig.Pinning{ServerCPUs: "0", ClientCPUs: "1", ServerMems: "0", ClientMems: "0"}}}
	tgt := target.Server{Addr: "127.0.0.1:6379"}
	for _, tt := range []struct {
		pin      string
		wantCPUs string
		wantOwn  bool
	}{
		{plan.PinPinned, "1", true},
		{plan.PinNone, "", false},
	} {
		spec := r.benchSpec(results.Row{Backend: "uring", Pin: tt.pin}, tgt, "latency", []string{"--online"})
		if got := slices.Contains(spec.Args, "--own-cpus"); spec.CPUs != tt.wantCPUs || got != tt.wantOwn {
			t.Errorf("pin %s: got cpus %q, --own-cpus %v (args %q); want cpus %q, --own-cpus %v", tt.pin, spec.CPUs, got, spec.Args, tt.wantCPUs, tt.wantOwn)
		}
	}
}
