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
	"strings"
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

// BenchmarkAgainstRedisBenchmark runs tierbench bench (both pipelines)
// and redis-benchmark side by side against one redis-server: GET at
// pipeline depth 64 over 8, 32 and 64 connections (PEER_CONNS overrides,
// comma-separated), 100 k keys of 12 bytes loaded, so that both clients
// read the same loaded keys (redis-benchmark's __rand_int__ spells key
// indices as 12 zero-padded digits, as tierbench does at --keylength 12).
// The server is pinned to CPU 0 and the clients to CPU 1
// (TIERBENCH_PEER_SERVER_CPU, _CLIENT_CPU override). Each trio runs
// PEER_PASSES times (default 3), in a rotating order, and the medians are
// reported: each tierbench pipeline's throughput ratio to redis-benchmark,
// and every client's CPU µs per op. PEER_TLS=1 measures over TLS: the
// server listens on a TLS port alone, with a certificate from a CA made for
// the run, and both clients speak TLS (--tls --cacert) to it.
//
//	go test -run XXX -bench AgainstRedisBenchmark -benchtime 1x ./bench
//	PEER_TLS=1 PEER_CONNS=8,32 PEER_PASSES=5 go test -run XXX -bench AgainstRedisBenchmark -benchtime 1x ./bench
func BenchmarkAgainstRedisBenchmark(b *testing.B) {
	serverCPU, clientCPU := envOr("TIERBENCH_PEER_SERVER_CPU", "0"), envOr("TIERBENCH_PEER_CLIENT_CPU", "1")
	passes, _ := strconv.Atoi(envOr("PEER_PASSES", "3"))
	seconds, _ := strconv.Atoi(envOr("PEER_SECONDS", "4"))
	pipeline, _ := strconv.Atoi(envOr("PEER_PIPELINE", "64"))
	var connSweep []int
	for _, f := range strings.Split(envOr("PEER_CONNS", "8,32,64"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("PEER_CONNS %q: want connection counts such as 8,32,64", f)
		}
		connSweep = append(connSweep, n)
	}
	testenv.MustLookPath(b, "redis-benchmark")
	testenv.MustLookPath(b, "taskset")
	bin := testenv.MustBinary(b)
	redis := testenv.MustLookPath(b, "redis-server")
	port := testenv.FreePort(b)
	srvArgs := []string{"-c", serverCPU, redis, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", b.TempDir()}
	var ourTLS, theirTLS []string
	if os.Getenv("PEER_TLS") == "1" {
		caFile, tlsArgs := peerTLSFiles(b)
		srvArgs = append(append(srvArgs, "--port", "0", "--tls-port", strconv.Itoa(port)), tlsArgs...)
		ourTLS = []string{"--tls", "--cacert", caFile}
		theirTLS = ourTLS
	}
	srv := exec.Command("taskset", srvArgs...)
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { testenv.StopProcess(srv) })
	const dbsize, keyLength = 100000, 12
	common := append([]string{"--port", strconv.Itoa(port), "--dbsize", strconv.Itoa(dbsize), "--keylength", strconv.Itoa(keyLength)}, ourTLS...)
	peerWaitUp(b, bin, common)
	runChild(b, clientCPU, bin, append([]string{"bench", "--runtime", "0", "-b", "1024", "--load-threads", "4"}, common...)...)

	runOurs := func(mode string, conns int) peerRun {
		out, user, sys := runChild(b, clientCPU, bin, append([]string{"bench", "-s", "--json", "--pipeline", mode, "-t", strconv.Itoa(conns),
			"-b", strconv.Itoa(pipeline), "--runtime", strconv.Itoa(seconds)}, common...)...)
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
	runTheirs := func(conns, n int) peerRun {
		out, user, sys := runChild(b, clientCPU, "redis-benchmark", append(append([]string{"-p", strconv.Itoa(port), "-c", strconv.Itoa(conns), "-P", strconv.Itoa(pipeline),
			"-n", strconv.Itoa(n), "-r", strconv.Itoa(dbsize), "-q"}, theirTLS...), "GET", "__rand_int__")...)
		m := redisBenchRate.FindSubmatch(out)
		if m == nil {
			b.Fatalf("redis-benchmark output not understood:\n%s", out)
		}
		rate, _ := strconv.ParseFloat(string(m[1]), 64)
		return peerRun{opsPerSec: rate, userSeconds: user, sysSeconds: sys, ops: float64(n)}
	}
	med := func(rs []peerRun, f func(peerRun) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return median(v)
	}
	rate := func(r peerRun) float64 { return r.opsPerSec }
	cpuMicros := func(r peerRun) float64 { return (r.userSeconds + r.sysSeconds) / r.ops * 1e6 }
	for _, conns := range connSweep {
		var batch, win, theirs []peerRun
		var batchRatios, winRatios []float64
		estimate := 0.0
		for pass := range passes {
			// Rotate the order so that drift in the machine's load does
			// not favour one client; redis-benchmark runs a fixed request
			// count, sized to the same duration from the latest
			// throughput seen.
			var o, w, r peerRun
			steps := []func(){
				func() { o = runOurs(PipelineBatch, conns); estimate = o.opsPerSec },
				func() { w = runOurs(PipelineWindow, conns); estimate = max(estimate, w.opsPerSec) },
				func() { r = runTheirs(conns, int(estimate*float64(seconds))) },
			}
			for i := range steps { // pass 0 starts with batch, so estimate is set before redis-benchmark runs
				steps[(i+pass)%len(steps)]()
			}
			batch, win, theirs = append(batch, o), append(win, w), append(theirs, r)
			batchRatios, winRatios = append(batchRatios, o.opsPerSec/r.opsPerSec), append(winRatios, w.opsPerSec/r.opsPerSec)
			b.Logf("c=%d -P %d pass %d: batch %.0f ops/s %.3f CPU µs/op | window %.0f ops/s %.3f CPU µs/op | redis-benchmark %.0f ops/s %.3f CPU µs/op | ratios batch %.3f window %.3f",
				conns, pipeline, pass+1, o.opsPerSec, cpuMicros(o), w.opsPerSec, cpuMicros(w), r.opsPerSec, cpuMicros(r), batchRatios[pass], winRatios[pass])
		}
		b.ReportMetric(median(batchRatios), fmt.Sprintf("c%d-batch-throughput-ratio", conns))
		b.ReportMetric(median(winRatios), fmt.Sprintf("c%d-window-throughput-ratio", conns))
		b.ReportMetric(med(batch, cpuMicros), fmt.Sprintf("c%d-batch-cpu-µs/op", conns))
		b.ReportMetric(med(win, cpuMicros), fmt.Sprintf("c%d-window-cpu-µs/op", conns))
		b.ReportMetric(med(theirs, cpuMicros), fmt.Sprintf("c%d-redis-benchmark-cpu-µs/op", conns))
		b.Logf("c=%d -P %d medians of %d passes: throughput ratio to redis-benchmark batch %.3f, window %.3f (batch %.0f, window %.0f, redis-benchmark %.0f ops/s); CPU µs per op batch %.3f, window %.3f, redis-benchmark %.3f",
			conns, pipeline, passes, median(batchRatios), median(winRatios), med(batch, rate), med(win, rate), med(theirs, rate),
			med(batch, cpuMicros), med(win, cpuMicros), med(theirs, cpuMicros))
	}
}

// peerTLSFiles writes a CA made for the run and a server certificate it
// signed for 127.0.0.1, returning the CA's file and redis-server's TLS
// arguments.
func peerTLSFiles(b *testing.B) (caFile string, serverArgs []string) {
	_, caFile, certFile, keyFile := testenv.WriteTLSFiles(b, testenv.TLSServerCert)
	return caFile, []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no"}
}

// peerWaitUp waits until tierbench bench can reach the server (a PING,
// over TLS when common says so): a load of one key.
func peerWaitUp(b *testing.B, bin string, common []string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := exec.Command(bin, append(append([]string{"bench", "--runtime", "0"}, common...), "--dbsize", "1")...).Run()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("the server never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
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
// redis-server, over TCP and over TLS: 4 connections, pipeline 64.
//
//	go test -run XXX -bench OfflineGETCell/tls -benchtime 1x -cpuprofile tls.prof ./bench
func BenchmarkOfflineGETCell(b *testing.B) {
	r := testenv.MustTLSRedisServer(b, testenv.TLSServerCert)
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "tls"}[secure]
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Port = r.Port
			if secure {
				cfg.Port, cfg.TLS = r.TLSPort, &TLSOptions{CACertFile: r.CAFile}
			}
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
		})
	}
}
