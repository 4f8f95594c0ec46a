package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/bench"
	"github.com/tierbench/tierbench/internal/keyspace"
)

func init() {
	register(command{name: "bench", summary: "RESP load generator: offline throughput, online latency", run: runBench})
}

const benchUsage = `Usage: tierbench bench [flags]

bench drives any RESP server (tierbench, Redis, Garnet, Dragonfly, KeyDB)
the way Garnet's Resp.benchmark does. It first loads keys 0..dbsize-1 with
MSET (every key exactly once; -s skips this), then either measures offline
throughput: for each thread count of -t, one connection per thread sends
pre-built pipelined batches of -b requests for --runtime seconds and prints
[Throughput] (the connections are driven by --loops event-loop threads, one
per CPU by default, so -t counts connections, not OS threads); or, with --online, measures per-op latency with --itp ops in
flight per connection, printing percentiles every 2 s. A key is its index in
decimal, zero-padded to --keylength; its value is derived from the key, so
--verify can check every GET. Misses (null replies) and error replies are
counted beside the hits, never hidden, and the client reports when its own
CPU is saturated. --json prints one JSON document on stdout.

Exit status: 0 when every request was answered cleanly; 1 when the server
could not be reached or refused the password, closed mid-run (the figures
so far are printed, marked incomplete), answered with error replies, or
--verify found a wrong value or a miss; 2 for bad flags.

Example, against a local redis-server:
  redis-server --port 6379 --save '' &
  tierbench bench --op GET --dbsize 100000 -t 1,4 -b 1024 --runtime 10
  tierbench bench -s --online --op-workload GET,SET --op-percent 90,10 \
      --dbsize 100000 -t 4 --itp 8 --rate 50000 --runtime 30 --hdr-out lat.hlog
  tierbench bench -s --workload ycsb-b --key-dist zipf:0.99 --verify \
      --dbsize 100000 -t 8 -b 256 --runtime 10

Over TLS as an ACL user, as redis-benchmark and memtier_benchmark spell it
(the password from a file keeps it out of ps):
  tierbench bench --tls --cacert ca.pem --host cache.example.com --port 6380 \
      --user alice --auth-file pw.txt --dbsize 100000 -t 8 -b 64 --runtime 10
  tierbench bench --uri rediss://alice@cache.example.com:6380 --auth-file pw.txt …

Flags:
`

func runBench(args []string, stdout, stderr io.Writer) int {
	cfg := bench.DefaultConfig()
	fs := flag.NewFlagSet("tierbench bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Host, "host", cfg.Host, "server `address`")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "server TCP `port`")
	readAuthFile := passwordFlags(fs, &cfg.Auth, "`password` sent with AUTH on every connection (with --user: AUTH user password)")
	fs.StringVar(&cfg.User, "user", "", "ACL `user` name: connections send AUTH user password (needs --auth or --auth-file; Redis 6+ ACL users)")
	var tlsOpts bench.TLSOptions
	useTLS := fs.Bool("tls", false, "speak TLS on every connection (the server's tls-port); the server's certificate is verified against --cacert, or the system's CAs")
	fs.StringVar(&tlsOpts.CACertFile, "cacert", "", "with --tls: PEM `file` of the CA certificates the server's certificate must be signed by (the server's tls-ca-cert-file); empty: the system's CAs")
	fs.StringVar(&tlsOpts.CertFile, "cert", "", "with --tls: client certificate PEM `file`, for a server that checks clients (tls-auth-clients yes)")
	fs.StringVar(&tlsOpts.KeyFile, "key", "", "with --tls: PEM `file` of --cert's private key")
	fs.StringVar(&tlsOpts.SNI, "sni", "", "with --tls: server `name` sent (SNI) and checked against the certificate; empty: --host (--cluster-bench: each node's host; a --sni given is sent to every node)")
	fs.BoolVar(&tlsOpts.Insecure, "insecure", false, "with --tls: do not verify the server's certificate (any CA, any name, expired): the traffic is encrypted but the server unauthenticated")
	uri := fs.String("uri", "", "server as a `URI`: redis://[user[:password]@]host[:port] or rediss://… for TLS (memtier's --uri), replacing --host, --port, --user and --auth;\n"+
		"a password here is on the command line, where ps shows it: prefer --auth-file")
	fs.StringVar(&cfg.Op, "op", cfg.Op, "offline `command`: GET, SET, MSET, MGET, INCR, DEL or PING (MGET/MSET carry -b keys in one command)")
	fs.Int64Var(&cfg.DBSize, "dbsize", cfg.DBSize, "distinct `keys`: indices 0..dbsize-1, loaded unless -s")
	fs.IntVar(&cfg.KeyLength, "keylength", 0, "key `bytes`: the key index zero-padded; 0 means the digits of dbsize-1")
	fs.IntVar(&cfg.ValueLength, "valuelength", cfg.ValueLength, "value `bytes` (values are digits derived from the key; up to 18 they are valid INCR operands)")
	threads := fs.String("t", "1,2,4,8,16,32", "thread-count `sweep`, comma-separated: one cell per count, one connection per thread (online: one count, default 1)")
	fs.IntVar(&cfg.Batch, "b", cfg.Batch, "`requests` per pipelined batch (offline), keys per MSET (load)")
	fs.StringVar(&cfg.Pipeline, "pipeline", cfg.Pipeline, "offline `mode`: batch sends -b requests and reads all their replies before the next batch (the reference's client); window keeps -b requests in flight per connection, sending new ones as replies arrive (single-key commands)")
	runtime := fs.Int("runtime", int(cfg.Runtime/time.Second), "`seconds` per cell; 0 loads only; -1 (online) runs until interrupted")
	fs.BoolVar(&cfg.SkipLoad, "s", false, "skip the load: run against a server loaded before")
	fs.BoolVar(&cfg.SkipLoad, "skipload", false, "same as -s")
	fs.IntVar(&cfg.LoadThreads, "load-threads", 0, "load `connections`; 0 means the largest of -t")
	fs.IntVar(&cfg.Loops, "loops", 0, "offline and online --rate over TCP: event-loop `threads` driving the connections (spread round-robin, each polling its share with one epoll); 0 means one per CPU the client may run on, at most -t (--cluster-bench runs a goroutine per thread instead)")
	fs.Var(idleNapFlag{&cfg.IdleNap}, "idle-nap", "offline: how an event loop with nothing to read waits: auto (the default) sizes its naps from the waits it measures and parks when one runs long;\na `duration` naps (20µs sleeps) that long before it parks until a reply wakes it; 0 parks at once (see docs/client-benchmark.md)")
	fs.BoolVar(&cfg.OwnCPUs, "own-cpus", false, "online --rate: no server runs on the CPUs this client may run on (taskset or a cpuset apart from the server's; tierbench run sets it for pinned rows), so a paced loop spins through the gap before each send instead of sleeping on a timer that wakes it tens of µs late; without it a loop spins so only when the loops leave one of the client's CPUs spare, and yields its CPU at every turn of the spin (sched_yield) so that a server scheduled there runs at once")
	fs.BoolVar(&cfg.NoFreezeProbe, "no-freeze-probe", false, "online: do not measure the host's freezes (the [Host] line's \"stood still\" and host_freezes). Where perf events are allowed (root, CAP_PERFMON or kernel.perf_event_paranoid ≤ 0) an online run samples every CPU each millisecond to find spans the host did not run this machine at all, as when its CPU quota runs out, which steal does not count; that wakes every CPU 1000 times a second, which cost a busy CPU 2-3 % of its time on a 2-CPU virtual machine")
	fs.IntVar(&cfg.PrebuiltOpsPerThread, "prebuilt-ops", 0, "offline: `requests` each thread builds (keys drawn) before the timed window and cycles through; 0 sizes it automatically (up to 65536, 16 MiB)")
	keyDist := fs.String("key-dist", "uniform", "key `distribution` of the offline cells and --online (the load writes every key once whatever it is): "+keyspace.DistSyntax+`.
zipf: rank i (key index i, the lowest the hottest) drawn with probability ∝ (i+1)^-THETA, default 0.99, THETA up to 5;
hotspot: the lowest HOTSET of the keys take HOTOPS of the draws, uniform inside each part (YCSB; default 0.2,0.8);
latest: zipf over recency, key dbsize-1 the hottest (the latest written by a one-thread load), default THETA 0.99;
gaussian: normal around MEDIAN*(dbsize-1) with standard deviation STDDEV*dbsize, both fractions, draws outside the range drawn again (memtier; default 0.5,0.1667).
Distinct keys a cell can draw: a uniform cell cycles the requests pre-built per thread, so at most -t × --prebuilt-ops keys (automatic size: up to 65536 per thread, about 2 M per cell);
a skewed cell redraws each batch's keys (--pipeline window: each request's key) once its replies are in, so over its run it draws from all dbsize keys,
the whole distribution, at the client CPU of a draw per op (--cluster-bench cycles its pre-built keys for every distribution)`)
	opMix := fs.String("op-mix", "", "offline: a `mix` of operations instead of --op, as OP:PERCENT,… of GET, SET, INCR, DEL, MGET (10 keys, each an op) and RMW (a GET then a SET of the same key,\n"+
		"sent back to back in one batch: one op), whole percentages adding up to 100, such as GET:95,SET:5. Each batch carries -b ops drawn from the mix (--pipeline batch),\n"+
		"pre-built like a single-command cell; the cell prints ops/sec, hits, misses, errors and latency (from the batch's first write to the op's reply) per operation.\n"+
		"SET writes the value the load wrote (the key's own, --valuelength bytes), so GET, SET, MGET and RMW leave the dataset as loaded (DBSIZE, every value);\n"+
		"DEL and INCR change it (keys gone, values incremented): --verify refuses them, and a later run over the same keys counts misses or mismatches")
	workloadName := fs.String("workload", "", "offline: a named --op-mix: ycsb-a (GET:50,SET:50), ycsb-b (GET:95,SET:5), ycsb-c (GET:100), ycsb-f (GET:50,RMW:50): YCSB's core `workload`s' operation shares\n"+
		"(YCSB draws their keys zipfian: add --key-dist zipf:0.99 for that)")
	fs.BoolVar(&cfg.Zipf, "zipf", false, "same as --key-dist zipf:THETA with --zipf-theta's THETA")
	fs.Float64Var(&cfg.ZipfTheta, "zipf-theta", cfg.ZipfTheta, "zipf skew `theta`, between 0 and 1")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "`seed` of the key draws: equal seeds draw equal keys at equal -t, except that a cell of writes only (SET, MSET, INCR, DEL) draws other keys than a read cell, so a GET cell never reads back the keys a SET cell just wrote, in the order written")
	fs.BoolVar(&cfg.Cluster, "cluster-bench", false, "drive a Redis Cluster: read the slot map from --host:--port (CLUSTER SHARDS, else CLUSTER SLOTS), route every key to the master of its slot, one connection per thread to every master; -MOVED and -ASK are followed and counted apart; the load sends MSETs of one slot each; output gains a per-node breakdown")
	fs.BoolVar(&cfg.JSON, "json", false, "print one JSON document on stdout; human lines go to stderr")
	fs.BoolVar(&cfg.Verify, "verify", false, "check every GET/MGET value against the loaded one; mismatches, misses and errors fail the run")
	fs.BoolVar(&cfg.Online, "online", false, "latency mode: per-op HdrHistogram percentiles every 2 s")
	workload := fs.String("op-workload", "GET", "online: comma-separated `commands` mixed (GET, SET, INCR, DEL, PING)")
	percent := fs.String("op-percent", "100", "online: comma-separated `shares` of --op-workload, adding up to 100")
	fs.IntVar(&cfg.InFlight, "itp", cfg.InFlight, "online: `ops` in flight per connection")
	fs.Float64Var(&cfg.Rate, "rate", 0, "online: offered load in `ops/sec` over all connections, latency counted from each op's intended send time; 0 sends as fast as replies return")
	fs.StringVar(&cfg.HdrOut, "hdr-out", "", "online: write the HdrHistogram interval log (nanoseconds) to `file`")
	fs.DurationVar(&cfg.ReportInterval, "report-interval", cfg.ReportInterval, "online: `period` of the percentile rows")
	startAt := fs.Int64("start-at", 0, "start measuring at this Unix time in `milliseconds` and measure exactly --runtime from it (one cell): clients on several hosts\nmeasure one window; connections and requests are made before it, and offline only batches answered inside the window count")
	warmup := fs.Int("warmup-seconds", 0, "online: `seconds` before --runtime during which ops are sent at the same rate but not recorded, so connection set-up and first touches stay out of the percentiles, the JSON and --hdr-out; 0 = none")
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if err := readAuthFile(); err != nil {
		fmt.Fprintf(stderr, "tierbench bench: %v\n", err)
		return 2
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tierbench bench: "+format+"\n\n", a...)
		fs.Usage()
		return 2
	}
	tlsFlags := tlsOpts.CACertFile != "" || tlsOpts.CertFile != "" || tlsOpts.KeyFile != "" || tlsOpts.SNI != "" || tlsOpts.Insecure
	if *useTLS {
		cfg.TLS = &tlsOpts
	} else if tlsFlags && *uri == "" {
		return usageErr("--cacert, --cert, --key, --sni and --insecure need --tls (or a rediss:// --uri)")
	}
	if *uri != "" {
		if err := bench.ApplyURI(&cfg, *uri); err != nil {
			return usageErr("%v", strings.TrimPrefix(err.Error(), bench.ErrUsage.Error()+": "))
		}
		if cfg.TLS != nil && !*useTLS {
			cfg.TLS = &tlsOpts // rediss://: the TLS flags given apply
		} else if cfg.TLS == nil && tlsFlags {
			return usageErr("--uri %s is plain redis://: the TLS flags need rediss:// or --tls", *uri)
		}
	}
	if argvPassword(fs, *uri) {
		// As redis-cli warns for -a and -u: the orchestrator's own clients
		// only ever take --auth-file.
		fmt.Fprintln(stderr, "tierbench bench: WARNING: a password on the command line is shown to every user of this host (ps, /proc/PID/cmdline): --auth-file FILE keeps it off")
	}
	var err error
	threadsSet := false
	fs.Visit(func(f *flag.Flag) { threadsSet = threadsSet || f.Name == "t" })
	if cfg.Online && !threadsSet {
		*threads = "1"
	}
	if cfg.Threads, err = parseInts(*threads); err != nil {
		return usageErr("-t: %v", err)
	}
	if cfg.OpPercent, err = parseInts(*percent); err != nil {
		return usageErr("--op-percent: %v", err)
	}
	cfg.OpWorkload = strings.Split(*workload, ",")
	if cfg.Online && len(cfg.Threads) != 1 {
		return usageErr("--online takes one thread count, -t %s is a sweep", *threads)
	}
	if *runtime < -1 {
		return usageErr("--runtime %d: give seconds, 0 to load only, or -1 (online) to run until interrupted", *runtime)
	}
	cfg.Runtime = time.Duration(*runtime) * time.Second
	if *startAt != 0 {
		if len(cfg.Threads) != 1 {
			return usageErr("--start-at measures one window: give one thread count, not -t %s", *threads)
		}
		cfg.StartAt = time.UnixMilli(*startAt)
	}
	cfg.Warmup = time.Duration(*warmup) * time.Second
	if cfg.KeyDist, err = keyspace.ParseDist(*keyDist); err != nil {
		return usageErr("--key-dist: %v", err)
	}
	if *workloadName != "" {
		if *opMix != "" {
			return usageErr("--workload %s and --op-mix %s: give one (a workload is a named mix)", *workloadName, *opMix)
		}
		mix, ok := bench.Workloads[strings.ToLower(*workloadName)]
		if !ok {
			return usageErr("--workload %q is not one of ycsb-a, ycsb-b, ycsb-c, ycsb-f", *workloadName)
		}
		*opMix = mix
	}
	if *opMix != "" {
		if cfg.OpMix, err = bench.ParseOpMix(*opMix); err != nil {
			return usageErr("--op-mix: %v", err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", strings.TrimPrefix(err.Error(), bench.ErrUsage.Error()+": "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench.Run(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tierbench bench: %v\n", strings.TrimPrefix(err.Error(), "bench: "))
		return 1
	}
	return 0
}

// parseInts parses a comma-separated list of integers such as "8,32,48,64".
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a comma-separated list of integers", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// idleNapFlag is --idle-nap: "auto" (bench.IdleNapAuto) or a duration.
type idleNapFlag struct{ d *time.Duration }

func (f idleNapFlag) String() string {
	if f.d == nil || *f.d == bench.IdleNapAuto {
		return "auto"
	}
	return f.d.String()
}

func (f idleNapFlag) Set(v string) error {
	if v == "auto" {
		*f.d = bench.IdleNapAuto
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want auto or a duration such as 50us (0 parks at once)")
	}
	if d < 0 {
		return fmt.Errorf("%v is negative: want auto or a duration such as 50us", d)
	}
	*f.d = d
	return nil
}

// argvPassword reports whether bench's password came on its command line:
// --auth, or a password in --uri.
func argvPassword(fs *flag.FlagSet, uri string) bool {
	if flagGiven(fs, "auth") {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}
