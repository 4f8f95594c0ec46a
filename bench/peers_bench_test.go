package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// The side-by-side benchmark: tierbench bench (both pipelines) beside
// redis-benchmark and memtier_benchmark against one redis-server, GET of
// loaded keys. See docs/client-benchmark.md for how to run it and read it.

// peerShape is one group of runs: every client at one connection count,
// transport and pipeline depth.
type peerShape struct {
	conns int
	tls   bool
	depth int // -b, -P, --pipeline
}

func (s peerShape) transport() string { return map[bool]string{false: "TCP", true: "TLS"}[s.tls] }

// peerClient is one client of the comparison: tierbench's two pipelines,
// redis-benchmark, memtier_benchmark.
type peerClient struct {
	name string
	ours bool   // tierbench: its rows are compared with the best peer's
	bin  string // tierbench's binary: the one built from this tree, or PEER_BASELINE
}

// peerShapes is the matrix PEER_MATRIX names: "full" (1, 2, 8, 32, 64
// connections × TCP, TLS × depth 1, 16, 64) or "quick" (1, 8, 32
// connections × TCP, TLS × depth 1, 64, and 2 connections, TCP, depth 64);
// PEER_CONNS, PEER_DEPTHS and PEER_TRANSPORTS (comma-separated) replace
// the full matrix's axes.
func peerShapes(b *testing.B) []peerShape {
	conns, depths, transports := "1,2,8,32,64", "1,16,64", "tcp,tls"
	switch m := envOr("PEER_MATRIX", "quick"); m {
	case "quick":
		if os.Getenv("PEER_CONNS")+os.Getenv("PEER_DEPTHS")+os.Getenv("PEER_TRANSPORTS") == "" {
			var shapes []peerShape
			for _, c := range []int{1, 8, 32} {
				for _, secure := range []bool{false, true} {
					for _, d := range []int{1, 64} {
						shapes = append(shapes, peerShape{c, secure, d})
					}
				}
			}
			return append(shapes, peerShape{2, false, 64})
		}
	case "full":
	default:
		b.Fatalf("PEER_MATRIX %q: want quick or full", m)
	}
	ints := func(name, def string) []int {
		var out []int
		for _, f := range strings.Split(envOr(name, def), ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("%s %q: want positive whole numbers, comma-separated, such as %s", name, f, def)
			}
			out = append(out, n)
		}
		return out
	}
	var secures []bool
	for _, f := range strings.Split(envOr("PEER_TRANSPORTS", transports), ",") {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "tcp":
			secures = append(secures, false)
		case "tls":
			secures = append(secures, true)
		default:
			b.Fatalf("PEER_TRANSPORTS %q: want tcp, tls or tcp,tls", f)
		}
	}
	var shapes []peerShape
	for _, c := range ints("PEER_CONNS", conns) {
		for _, secure := range secures {
			for _, d := range ints("PEER_DEPTHS", depths) {
				shapes = append(shapes, peerShape{c, secure, d})
			}
		}
	}
	return shapes
}

// peerBench is the set-up every run of BenchmarkPeers shares.
type peerBench struct {
	b                    *testing.B
	bin, memtier         string // bin: tierbench built from this tree, for the load
	plainAddr            string // the server's plain port: INFO
	port, tlsPort        int
	caFile               string
	clientCPU            string   // taskset list, or "" unpinned
	prefix               []string // PEER_PREFIX: a command the server and the clients run under
	clientCPUs           int      // CPUs the clients may run on
	seconds              int
	dbsize, keyLen, vLen int
}

// peerKeyPrefix and the key range make memtier_benchmark's keys (prefix
// and a decimal number) loaded keys: 12-byte key indices 10000..99999,
// spelled as tierbench and redis-benchmark spell them.
const (
	peerKeyPrefix = "0000000"
	peerKeyMin    = 10000
)

// BenchmarkPeers runs tierbench bench (batch and window pipelines),
// redis-benchmark and memtier_benchmark side by side against one
// redis-server holding 100 000 keys of 12 bytes with 96-byte values, GET
// only, and prints a table: for each shape (connections, TCP or TLS,
// pipeline depth) and each tierbench pipeline, its GET/s and ops per
// client CPU-second beside the best peer's, medians of PEER_PASSES
// (default 5) passes in which the four clients run in rotating order.
// Every run's GETs are checked against the server's own counters: no
// miss. A peer whose binary is absent is left out with a message
// (memtier_benchmark: on PATH or $MEMTIER_BENCHMARK). It is a benchmark,
// run by hand, never by go test alone; docs/client-benchmark.md has the
// knobs.
//
//	go test -run XXX -bench Peers -benchtime 1x -timeout 0 ./bench
//	PEER_MATRIX=full PEER_LOCK=/tmp/tierbench-measure.lock go test -run XXX -bench Peers -benchtime 1x -timeout 0 ./bench
func BenchmarkPeers(b *testing.B) {
	shapes := peerShapes(b)
	passes, _ := strconv.Atoi(envOr("PEER_PASSES", "5"))
	seconds, _ := strconv.Atoi(envOr("PEER_SECONDS", "3"))
	if passes < 1 || seconds < 1 {
		b.Fatalf("PEER_PASSES %d, PEER_SECONDS %d: want both at least 1", passes, seconds)
	}
	pb := &peerBench{b: b, seconds: seconds, dbsize: 100000, keyLen: 12, vLen: 96}
	pb.bin = testenv.MustBinary(b)
	redis := testenv.MustLookPath(b, "redis-server")
	clients := []peerClient{{name: "tierbench batch", ours: true, bin: pb.bin}, {name: "tierbench window", ours: true, bin: pb.bin}}
	if base := os.Getenv("PEER_BASELINE"); base != "" {
		// Another tierbench binary (a build of an earlier commit) alternated
		// with the rest: before and after a change, on one host at one time.
		clients = append(clients, peerClient{name: "baseline batch", ours: true, bin: base}, peerClient{name: "baseline window", ours: true, bin: base})
	}
	if _, err := exec.LookPath("redis-benchmark"); err == nil {
		clients = append(clients, peerClient{name: "redis-benchmark"})
	} else {
		b.Logf("redis-benchmark not found on PATH (apt-get install redis-tools): left out")
	}
	pb.memtier = os.Getenv("MEMTIER_BENCHMARK")
	if pb.memtier == "" {
		pb.memtier, _ = exec.LookPath("memtier_benchmark")
	}
	if pb.memtier != "" {
		clients = append(clients, peerClient{name: "memtier_benchmark"})
	} else {
		b.Logf("memtier_benchmark not found on PATH or in $MEMTIER_BENCHMARK: left out (docs/client-benchmark.md says how to build it)")
	}
	if len(clients) == 2 {
		b.Fatalf("no peer to compare with: install redis-tools or build memtier_benchmark")
	}

	// The server: pinned to PEER_SERVER_CPU (default 0) and the clients to
	// PEER_CLIENT_CPU (default 1) unless PEER_PIN=0.
	serverCPU := envOr("PEER_SERVER_CPU", "0")
	pb.clientCPU, pb.clientCPUs = envOr("PEER_CLIENT_CPU", "1"), 1
	srvPrefix := []string{"taskset", "-c", serverCPU}
	if os.Getenv("PEER_PIN") == "0" {
		srvPrefix, pb.clientCPU, pb.clientCPUs = nil, "", runtime.NumCPU()
	} else {
		pb.clientCPUs = cpuListLen(b, pb.clientCPU)
		testenv.MustLookPath(b, "taskset")
	}
	if pb.prefix = strings.Fields(os.Getenv("PEER_PREFIX")); len(pb.prefix) > 0 {
		testenv.MustLookPath(b, pb.prefix[0])
		srvPrefix = append(slices.Clone(pb.prefix), srvPrefix...)
	}
	pb.port, pb.tlsPort = testenv.FreePort(b), testenv.FreePort(b)
	var tlsArgs []string
	pb.caFile, tlsArgs = peerTLSFiles(b)
	srvArgs := append(append(srvPrefix, redis, "--port", strconv.Itoa(pb.port), "--tls-port", strconv.Itoa(pb.tlsPort), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", b.TempDir()), tlsArgs...)
	srv := exec.Command(srvArgs[0], srvArgs[1:]...)
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { testenv.StopProcess(srv) })
	pb.plainAddr = "127.0.0.1:" + strconv.Itoa(pb.port)
	common := pb.ourCommon(false)
	peerWaitUp(b, pb.bin, common)
	pb.run(pb.bin, append([]string{"bench", "--runtime", "0", "-b", "1024", "--load-threads", "4"}, common...)...)
	if got := pb.info("db0:keys="); got != strconv.Itoa(pb.dbsize) {
		b.Fatalf("the server holds %s keys after the load, want %d", got, pb.dbsize)
	}

	var rows []peerRow
	for _, shape := range shapes {
		unlock := pb.lock()
		rs := pb.shape(shape, clients, passes)
		unlock()
		rows = append(rows, rs...)
	}
	table := peerTable(rows)
	fmt.Fprint(os.Stdout, table)
	if out := os.Getenv("PEER_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuListLen is how many CPUs a taskset list such as 1 or 2-3,6 names.
func cpuListLen(b *testing.B, list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		z, err2 := a, error(nil)
		if isRange {
			z, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || z < a {
			b.Fatalf("PEER_CLIENT_CPU %q: want a CPU list such as 1 or 2-3,6", list)
		}
		n += z - a + 1
	}
	return n
}

// lock holds PEER_LOCK (a file every measuring process on the host
// flocks, so that two never measure at once) for one shape's runs.
func (pb *peerBench) lock() (unlock func()) {
	path := os.Getenv("PEER_LOCK")
	if path == "" {
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		pb.b.Fatalf("PEER_LOCK: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		pb.b.Fatalf("PEER_LOCK: flock: %v", err)
	}
	return func() { f.Close() }
}

// ourCommon is tierbench bench's server, key and TLS arguments.
func (pb *peerBench) ourCommon(secure bool) []string {
	port := pb.port
	var extra []string
	if secure {
		port, extra = pb.tlsPort, []string{"--tls", "--cacert", pb.caFile}
	}
	return append([]string{"--port", strconv.Itoa(port), "--dbsize", strconv.Itoa(pb.dbsize), "--keylength", strconv.Itoa(pb.keyLen),
		"--valuelength", strconv.Itoa(pb.vLen)}, extra...)
}

// peerRun is one client run: throughput and the child's user+sys CPU.
type peerRun struct {
	opsPerSec  float64
	ops        float64
	cpuSeconds float64 // the child's user + system CPU, all of its life
}

func (r peerRun) opsPerCPUSecond() float64 { return r.ops / r.cpuSeconds }

// run runs a client (pinned to the clients' CPUs) and returns its stdout
// and its user+system CPU seconds from its rusage.
func (pb *peerBench) run(name string, args ...string) (out []byte, cpuSeconds float64) {
	pb.b.Helper()
	if pb.clientCPU != "" {
		name, args = "taskset", append([]string{"-c", pb.clientCPU, name}, args...)
	}
	if len(pb.prefix) > 0 {
		name, args = pb.prefix[0], append(append(slices.Clone(pb.prefix[1:]), name), args...)
	}
	cmd := exec.Command(name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		pb.b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return stdout.Bytes(), (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Seconds()
}

// info returns the value of the first INFO line starting with prefix,
// up to a comma.
func (pb *peerBench) info(prefix string) string {
	out, err := testenv.Command(pb.plainAddr, "INFO")
	if err != nil {
		pb.b.Fatalf("INFO: %v", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
			v, _, _ = strings.Cut(v, ",")
			return v
		}
	}
	return ""
}

// keyspaceCounts is the server's keyspace_hits and keyspace_misses.
func (pb *peerBench) keyspaceCounts() (hits, misses int64) {
	hits, _ = strconv.ParseInt(pb.info("keyspace_hits:"), 10, 64)
	misses, _ = strconv.ParseInt(pb.info("keyspace_misses:"), 10, 64)
	return hits, misses
}

// runClient runs one client at shape and checks with the server's
// counters that every GET it counted hit a loaded key. estimate is the
// latest GET/s seen, which sizes redis-benchmark's request count.
func (pb *peerBench) runClient(c peerClient, s peerShape, estimate float64) peerRun {
	h0, m0 := pb.keyspaceCounts()
	var r peerRun
	switch c.name {
	case "tierbench batch", "tierbench window", "baseline batch", "baseline window":
		_, pipeline, _ := strings.Cut(c.name, " ")
		r = pb.runOurs(c.bin, pipeline, s)
	case "redis-benchmark":
		r = pb.runRedisBenchmark(s, int(max(estimate*float64(pb.seconds), 1000)))
	case "memtier_benchmark":
		r = pb.runMemtier(s)
	}
	h1, m1 := pb.keyspaceCounts()
	if m1 != m0 {
		pb.b.Fatalf("%s at %d connections %s depth %d: the server counted %d misses, want 0: the keys read are not the keys loaded", c.name, s.conns, s.transport(), s.depth, m1-m0)
	}
	if float64(h1-h0) < r.ops {
		pb.b.Fatalf("%s at %d connections %s depth %d: counted %.0f GETs, the server only %d hits", c.name, s.conns, s.transport(), s.depth, r.ops, h1-h0)
	}
	return r
}

func (pb *peerBench) runOurs(bin, pipeline string, s peerShape) peerRun {
	out, cpu := pb.run(bin, append([]string{"bench", "-s", "--json", "--op", "GET", "--pipeline", pipeline, "-t", strconv.Itoa(s.conns),
		"-b", strconv.Itoa(s.depth), "--runtime", strconv.Itoa(pb.seconds)}, pb.ourCommon(s.tls)...)...)
	var rep Report
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Cells) != 1 {
		pb.b.Fatalf("tierbench bench JSON: %v\n%s", err, out)
	}
	c := rep.Cells[0]
	if c.Misses != 0 || c.Errors != 0 {
		pb.b.Fatalf("tierbench bench: %d misses, %d errors: want none", c.Misses, c.Errors)
	}
	return peerRun{opsPerSec: c.OpsPerSec, ops: float64(c.Ops), cpuSeconds: cpu}
}

var redisBenchRate = regexp.MustCompile(`GET __rand_int__: ([0-9.]+) requests per second`)

func (pb *peerBench) runRedisBenchmark(s peerShape, n int) peerRun {
	args := []string{"-p", strconv.Itoa(pb.port), "-c", strconv.Itoa(s.conns), "-P", strconv.Itoa(s.depth),
		"-n", strconv.Itoa(n), "-r", strconv.Itoa(pb.dbsize), "-q"}
	if s.tls {
		args = append(args, "-p", strconv.Itoa(pb.tlsPort), "--tls", "--cacert", pb.caFile)
	}
	out, cpu := pb.run("redis-benchmark", append(args, "GET", "__rand_int__")...)
	m := redisBenchRate.FindSubmatch(out)
	if m == nil {
		pb.b.Fatalf("redis-benchmark output not understood:\n%s", out)
	}
	rate, _ := strconv.ParseFloat(string(m[1]), 64)
	return peerRun{opsPerSec: rate, ops: float64(n), cpuSeconds: cpu}
}

// runMemtier runs memtier_benchmark with GETs only over loaded keys: one
// thread per client CPU (its default is 4 threads of 50 connections), the
// connections split evenly over them, --pipeline the depth (memtier keeps
// that many requests in flight per connection, as tierbench's window
// pipeline does), and --distinct-client-seed: by default every memtier
// connection draws the same key sequence, so the server finds most keys
// of a GET still in its CPU's cache, fetched by the connection before;
// tierbench's and redis-benchmark's connections each draw their own.
func (pb *peerBench) runMemtier(s peerShape) peerRun {
	threads := min(pb.clientCPUs, s.conns)
	for s.conns%threads != 0 {
		threads--
	}
	jsonFile := filepath.Join(pb.b.TempDir(), "memtier.json")
	args := []string{"-s", "127.0.0.1", "-p", strconv.Itoa(pb.port), "-t", strconv.Itoa(threads), "-c", strconv.Itoa(s.conns / threads),
		"--pipeline", strconv.Itoa(s.depth), "--ratio", "0:1", "--key-prefix", peerKeyPrefix,
		"--key-minimum", strconv.Itoa(peerKeyMin), "--key-maximum", strconv.Itoa(pb.dbsize - 1), "--key-pattern", "R:R",
		"--distinct-client-seed", "--test-time", strconv.Itoa(pb.seconds), "--hide-histogram", "--json-out-file", jsonFile}
	if s.tls {
		args = append(args, "-p", strconv.Itoa(pb.tlsPort), "--tls", "--cacert", pb.caFile)
	}
	_, cpu := pb.run(pb.memtier, args...)
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		pb.b.Fatal(err)
	}
	rate, count, err := memtierGets(raw, pb.seconds)
	if err != nil {
		pb.b.Fatal(err)
	}
	return peerRun{opsPerSec: rate, ops: count, cpuSeconds: cpu}
}

// memtierGets reads the GETs a memtier_benchmark run of seconds
// (--test-time) counted from its JSON, and its GET/s: the count over
// seconds, not memtier's own Ops/sec. Why: memtier averages its
// connections' start and end times with the seconds and the microseconds
// apart, each truncated, so with two connections or more its duration is
// often a second off (RedisLabs/memtier_benchmark pull request 209; fixed
// upstream in 465, after the snapshot this was measured with): at a test
// time of a few seconds its Ops/sec swung by half either way. Each
// connection stops when its own clock has run --test-time.
func memtierGets(raw []byte, seconds int) (rate, count float64, err error) {
	var doc struct {
		All struct {
			Gets struct {
				Count  float64 `json:"Count"`
				Misses float64 `json:"Misses/sec"`
			} `json:"Gets"`
		} `json:"ALL STATS"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return 0, 0, fmt.Errorf("memtier_benchmark JSON not understood: %v\n%s", err, raw)
	}
	g := doc.All.Gets
	switch {
	case g.Count == 0:
		return 0, 0, fmt.Errorf("memtier_benchmark counted no GETs:\n%s", raw)
	case g.Misses != 0:
		return 0, 0, fmt.Errorf("memtier_benchmark counted %v misses/s, want 0", g.Misses)
	}
	return g.Count / float64(seconds), g.Count, nil
}

// peerRow is one client's medians at one shape.
type peerRow struct {
	shape            peerShape
	client           peerClient
	opsPerSec        float64 // median GET/s
	opsPerCPUSecond  float64 // median ops per client CPU-second
	minRate, maxRate float64
}

// shape runs every client passes times at s, rotating their order each
// pass, and returns each client's medians.
func (pb *peerBench) shape(s peerShape, clients []peerClient, passes int) []peerRow {
	runs := make([][]peerRun, len(clients))
	estimate := 0.0
	for pass := range passes {
		// Pass p starts with client p: pass 0 with tierbench, whose rate
		// sizes redis-benchmark's request count.
		for k := range clients {
			i := (k + pass) % len(clients)
			r := pb.runClient(clients[i], s, estimate)
			estimate = max(estimate, r.opsPerSec)
			runs[i] = append(runs[i], r)
		}
	}
	rows := make([]peerRow, len(clients))
	for i, c := range clients {
		rates := make([]float64, len(runs[i]))
		perCPU := make([]float64, len(runs[i]))
		for j, r := range runs[i] {
			rates[j], perCPU[j] = r.opsPerSec, r.opsPerCPUSecond()
		}
		rows[i] = peerRow{shape: s, client: c, opsPerSec: median(rates), opsPerCPUSecond: median(perCPU), minRate: minOf(rates), maxRate: maxOf(rates)}
		fmt.Fprintf(os.Stderr, "peers: %d conns %s depth %d: %-18s %9.0f GET/s (%.0f..%.0f) %9.0f ops/CPU-s\n",
			s.conns, s.transport(), s.depth, c.name, rows[i].opsPerSec, rows[i].minRate, rows[i].maxRate, rows[i].opsPerCPUSecond)
	}
	return rows
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// peerTable renders the rows as Markdown: one line per shape and
// tierbench pipeline, with the best peer by GET/s and the best by ops per
// CPU-second, and tierbench's ratio to each.
func peerTable(rows []peerRow) string {
	var w strings.Builder
	fmt.Fprintln(&w, "| conns | transport | -b | tierbench pipeline | tierbench GET/s | best peer GET/s | ratio | tierbench ops/CPU-s | best peer ops/CPU-s | ratio |")
	fmt.Fprintln(&w, "|---|---|---|---|---|---|---|---|---|---|")
	order := []peerShape{}
	byShape := map[peerShape][]peerRow{}
	for _, r := range rows {
		if _, ok := byShape[r.shape]; !ok {
			order = append(order, r.shape)
		}
		byShape[r.shape] = append(byShape[r.shape], r)
	}
	for _, s := range order {
		var bestRate, bestCPU *peerRow
		for i, r := range byShape[s] {
			if r.client.ours {
				continue
			}
			if bestRate == nil || r.opsPerSec > bestRate.opsPerSec {
				bestRate = &byShape[s][i]
			}
			if bestCPU == nil || r.opsPerCPUSecond > bestCPU.opsPerCPUSecond {
				bestCPU = &byShape[s][i]
			}
		}
		for _, r := range byShape[s] {
			if !r.client.ours {
				continue
			}
			fmt.Fprintf(&w, "| %d | %s | %d | %s | %.0f K | %.0f K (%s) | %.2f | %.0f K | %.0f K (%s) | %.2f |\n",
				s.conns, s.transport(), s.depth, peerPipelineLabel(r.client.name),
				r.opsPerSec/1e3, bestRate.opsPerSec/1e3, bestRate.client.name, r.opsPerSec/bestRate.opsPerSec,
				r.opsPerCPUSecond/1e3, bestCPU.opsPerCPUSecond/1e3, bestCPU.client.name, r.opsPerCPUSecond/bestCPU.opsPerCPUSecond)
		}
	}
	return w.String()
}

// peerPipelineLabel is a tierbench client's pipeline column: "batch", or
// "window (baseline)" for PEER_BASELINE's.
func peerPipelineLabel(name string) string {
	who, pipeline, _ := strings.Cut(name, " ")
	if who == "baseline" {
		return pipeline + " (baseline)"
	}
	return pipeline
}

// TestMemtierGets reads memtier_benchmark's JSON as BenchmarkPeers does:
// the rate is the count over the test time, whatever duration memtier
// reports (the first document is one of its 8-connection runs of 2 s,
// which it timed at 3001 ms), and a run with misses or no GETs is refused.
func TestMemtierGets(t *testing.T) {
	doc := func(duration, count, misses string) []byte {
		return []byte(`{"ALL STATS":{"Runtime":{"Total duration":` + duration + `,"Time unit":"MILLISECONDS"},` +
			`"Gets":{"Count":` + count + `,"Ops/sec":486647.37,"Misses/sec":` + misses + `}}}`)
	}
	tests := []struct {
		name      string
		raw       []byte
		seconds   int
		wantRate  float64
		wantCount float64
		wantErr   string
	}{
		{"duration a second long", doc("3001", "1460238", "0.0"), 2, 730119, 1460238, ""},
		{"duration right", doc("2001", "891946", "0.0"), 2, 445973, 891946, ""},
		{"misses", doc("2001", "891946", "12.5"), 2, 0, 0, "misses"},
		{"no GETs", doc("2001", "0", "0.0"), 2, 0, 0, "no GETs"},
		{"not JSON", []byte("Segmentation fault"), 2, 0, 0, "not understood"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate, count, err := memtierGets(tt.raw, tt.seconds)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || rate != tt.wantRate || count != tt.wantCount {
				t.Errorf("got %v GET/s, %v GETs, %v; want %v GET/s, %v GETs", rate, count, err, tt.wantRate, tt.wantCount)
			}
		})
	}
}

// TestPeerPipelineLabel names the table's tierbench rows.
func TestPeerPipelineLabel(t *testing.T) {
	for name, want := range map[string]string{"tierbench batch": "batch", "tierbench window": "window", "baseline window": "window (baseline)"} {
		if got := peerPipelineLabel(name); got != want {
			t.Errorf("peerPipelineLabel(%q): got %q, want %q", name, got, want)
		}
	}
}
