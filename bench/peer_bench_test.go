package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// peerRun is one client run: throughput and the child's user+sys CPU.
type peerRun struct {
	opsPerSec               float64
	userSeconds, sysSeconds float64
	ops                     float64
}

func (r peerRun) opsPerCPUSecond() float64 { return r.ops / (r.userSeconds + r.sysSeconds) }

// runChild runs a client pinned to cpu and returns its stdout and its user
// and system CPU seconds.
func runChild(b *testing.B, cpu string, name string, args ...string) (out []byte, userSeconds, sysSeconds float64) {
	b.Helper()
	cmd := exec.Command("taskset", append([]string{"-c", cpu, name}, args...)...)
	var stdout, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, errb.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return stdout.Bytes(), time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds()
}

var redisBenchRate = regexp.MustCompile(`GET __rand_int__: ([0-9.]+) requests per second`)

// BenchmarkAgainstRedisBenchmark runs tierbench bench and redis-benchmark
// side by side against one redis-server: GET, 4 connections, pipeline 64
// and 1024, 100 k keys of 12 bytes loaded. The server is pinned to CPU 0
// and both clients to CPU 1 (TIERBENCH_PEER_SERVER_CPU, _CLIENT_CPU
// override). Each pair runs PEER_PASSES times (default 3), interleaved, and
// the medians are reported: the throughput ratio ours/theirs, and each
// client's ops per CPU-second.
//
//	go test -run XXX -bench AgainstRedisBenchmark -benchtime 1x ./bench
func BenchmarkAgainstRedisBenchmark(b *testing.B) {
	serverCPU, clientCPU := envOr("TIERBENCH_PEER_SERVER_CPU", "0"), envOr("TIERBENCH_PEER_CLIENT_CPU", "1")
	passes, _ := strconv.Atoi(envOr("PEER_PASSES", "3"))
	seconds, _ := strconv.Atoi(envOr("PEER_SECONDS", "4"))
	testenv.MustLookPath(b, "redis-benchmark")
	testenv.MustLookPath(b, "taskset")
	bin := testenv.MustBinary(b)
	redis := testenv.MustLookPath(b, "redis-server")
	port := testenv.FreePort(b)
	srv := exec.Command("taskset", "-c", serverCPU, redis, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir())
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { testenv.StopProcess(srv) })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	testenv.MustWaitPing(b, addr, 10*time.Second)
	const dbsize, keyLength, conns = 100000, 12, 4
	common := []string{"--port", strconv.Itoa(port), "--dbsize", strconv.Itoa(dbsize), "--keylength", strconv.Itoa(keyLength)}
	runChild(b, clientCPU, bin, append([]string{"bench", "--runtime", "0", "-b", "1024", "--load-threads", "4"}, common...)...)

	runOurs := func(pipeline int) peerRun {
		out, user, sys := runChild(b, clientCPU, bin, append([]string{"bench", "-s", "--json", "-t", strconv.Itoa(conns), "-b", strconv.Itoa(pipeline), "--runtime", strconv.Itoa(seconds)}, common...)...)
		var rep Report
		if err := json.Unmarshal(out, &rep); err != nil || len(rep.Cells) != 1 {
			b.Fatalf("tierbench bench JSON: %v\n%s", err, out)
		}
		c := rep.Cells[0]
		if c.Misses != 0 || c.Errors != 0 {
			b.Fatalf("misses %d errors %d: the keyspace is not loaded", c.Misses, c.Errors)
		}
		return peerRun{opsPerSec: c.OpsPerSec, userSeconds: user, sysSeconds: sys, ops: float64(c.Ops)}
	}
	runTheirs := func(pipeline, n int) peerRun {
		out, user, sys := runChild(b, clientCPU, "redis-benchmark", "-p", strconv.Itoa(port), "-c", strconv.Itoa(conns), "-P", strconv.Itoa(pipeline),
			"-n", strconv.Itoa(n), "-r", strconv.Itoa(dbsize), "-q", "GET", "__rand_int__")
		m := redisBenchRate.FindSubmatch(out)
		if m == nil {
			b.Fatalf("redis-benchmark output not understood:\n%s", out)
		}
		rate, _ := strconv.ParseFloat(string(m[1]), 64)
		return peerRun{opsPerSec: rate, userSeconds: user, sysSeconds: sys, ops: float64(n)}
	}
	for _, pipeline := range []int{64, 1024} {
		var ours, theirs []peerRun
		var ratios []float64
		estimate := 0.0
		for pass := range passes {
			// Alternate which client goes first so drift in the machine's
			// load does not favour one; redis-benchmark runs a fixed
			// request count, sized to the same duration from the latest
			// throughput seen.
			var o, r peerRun
			if pass%2 == 0 || estimate == 0 {
				o = runOurs(pipeline)
				r = runTheirs(pipeline, int(o.opsPerSec*float64(seconds)))
			} else {
				r = runTheirs(pipeline, int(estimate*float64(seconds)))
				o = runOurs(pipeline)
			}
			estimate = o.opsPerSec
			ours, theirs, ratios = append(ours, o), append(theirs, r), append(ratios, o.opsPerSec/r.opsPerSec)
			b.Logf("-P %d pass %d: tierbench %.0f ops/s, user %.3f sys %.3f s for %.0f ops | redis-benchmark %.0f ops/s, user %.3f sys %.3f s for %.0f ops | ratio %.3f",
				pipeline, pass+1, o.opsPerSec, o.userSeconds, o.sysSeconds, o.ops, r.opsPerSec, r.userSeconds, r.sysSeconds, r.ops, ratios[len(ratios)-1])
		}
		med := func(rs []peerRun, f func(peerRun) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			return median(v)
		}
		rate := func(r peerRun) float64 { return r.opsPerSec }
		perCPU := func(r peerRun) float64 { return r.opsPerCPUSecond() }
		cpuMicros := func(r peerRun) float64 { return (r.userSeconds + r.sysSeconds) / r.ops * 1e6 }
		b.ReportMetric(median(ratios), fmt.Sprintf("P%d-throughput-ratio", pipeline))
		b.ReportMetric(med(ours, perCPU), fmt.Sprintf("P%d-tierbench-ops/cpu-s", pipeline))
		b.ReportMetric(med(theirs, perCPU), fmt.Sprintf("P%d-redis-benchmark-ops/cpu-s", pipeline))
		b.Logf("-P %d medians of %d passes: throughput ratio %.3f (tierbench %.0f, redis-benchmark %.0f ops/s); CPU per op tierbench %.3f µs (%.0f ops per CPU-s), redis-benchmark %.3f µs (%.0f ops per CPU-s)",
			pipeline, passes, median(ratios), med(ours, rate), med(theirs, rate), med(ours, cpuMicros), med(ours, perCPU), med(theirs, cpuMicros), med(theirs, perCPU))
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// BenchmarkOfflineGETCell profiles one offline cell against a real
// redis-server: 4 connections, pipeline 64, reporting allocations per op.
func BenchmarkOfflineGETCell(b *testing.B) {
	r := testenv.MustRedisServer(b)
	cfg := DefaultConfig()
	cfg.Port = r.Port
	cfg.DBSize = 100000
	cfg.Batch = 64
	cfg.Threads = []int{4}
	cfg.Runtime = 0
	var sink bytes.Buffer
	if err := Run(b.Context(), cfg, &sink, &sink); err != nil {
		b.Fatal(err)
	}
	p, err := cfg.plan()
	if err != nil {
		b.Fatal(err)
	}
	p.Runtime = 2 * time.Second
	b.ReportAllocs()
	b.ResetTimer()
	var ops int64
	for b.Loop() {
		c, err := runCell(b.Context(), p, 4)
		if err != nil {
			b.Fatal(err)
		}
		ops += c.Ops
	}
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "ops/s")
}
