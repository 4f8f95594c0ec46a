package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/orchestrator"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/reproduce"
)

func init() {
	// A child the process runtime started pinned binds its CPUs and
	// memory and re-executes itself before anything else runs.
	process.ExecPinnedChild()
	register(command{name: "run", summary: "the one-command reproduction of the backend x pin x threads matrix", run: runRun})
}

// runFlags defines run's flags of the configuration on a new flag set
// named name (run, and plan, which takes the same) and returns it with
// the step that, after parsing, sets cfg.Given and the list flags; that
// step's error is a bad value, said with the flag's name.
func runFlags(name string, cfg *plan.Config) (*flag.FlagSet, func() error) {
	var threads, backends, pins, shards, serverPIDs, servers string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&cfg.Profile, "profile", "quick", "quick (minutes on a small host, dataset ≥ 20 × --memory) or reference (the Garnet seed: 100 M keys, 12 s cells, 3 passes)")
	fs.StringVar(&cfg.Scenario, "scenario", "storage", "the reference's server set-up: storage (scenario 2, the tiered server on the native device: the backend × pin matrix), memory (scenario 1, the untiered server, t=1…32, each cell must read < 1 % of a sector per GET), localmemory (scenario 3, the tiered server on the in-RAM device, -b 1024 and -b 256 rows, ≥ 0.9 device reads per GET from INFO store), or all (the three in sequence, one bundle with a section and table each)")
	fs.BoolVar(&cfg.Ladder, "ladder", false, "after the matrix, measure the layers below the best RESP cell on the same data dir, shape, backend and CPUs (its server's cpuset when pinned) — fio (the preflight's ceiling on those CPUs), tierbench device at the better of one submitter per CPU sharing the throttle depth and the cell's connections × -b, tierbench kv with the same --memory --page --index and dataset at one thread per CPU and at the cell's connections — and print each layer's ops/s, share of the layer below and CPU µs per op, naming the largest drop; a layer above the one below it by more than the noise is flagged instead; with --latency, also fio alone at each step's offered rate and depth, and again with the CPUs held as little idle as the step kept them where it was busier (a virtual disk may slow under the guest's CPU load), each step's p50/p99 marked against both (default on in the reference profile; with --server-addr only RESP and fio)")
	fs.Int64Var(&cfg.DBSize, "dbsize", 0, "keys to load and read (default from the profile: quick 2700000, reference 100000000)")
	fs.IntVar(&cfg.KeyLength, "keylength", 0, "key bytes (default 16)")
	fs.IntVar(&cfg.ValueLength, "valuelength", 0, "value bytes (default 96)")
	fs.StringVar(&threads, "threads", "", "client connections per cell, one column each, e.g. 8,32,48,64 (the default; env TIERBENCH_THREADS); an empty item is refused")
	fs.IntVar(&cfg.Batch, "batch", 0, "GETs per pipelined batch, Resp.benchmark's -b (default quick 256, reference 1024)")
	fs.IntVar(&cfg.CellSeconds, "cell-seconds", 0, "seconds per measured cell (default quick 2, reference 12; env TIERBENCH_CELL_SECONDS)")
	fs.IntVar(&cfg.Passes, "passes", 0, "passes per cell, at least 1; the table shows the median (default quick 2, reference 3; env TIERBENCH_PASSES)")
	fs.IntVar(&cfg.WarmupSeconds, "warmup-seconds", 0, "seconds of the unrecorded warm-up GET phase per row; 0 = no warm-up (default quick 1, reference 12)")
	fs.IntVar(&cfg.LoadThreads, "load-threads", 0, "loader connections (default quick 8, reference 32)")
	fs.IntVar(&cfg.LoadBatch, "load-batch", 0, "keys per loader MSET (default 4096, as the reference loads)")
	fs.StringVar(&cfg.Memory, "memory", "", "server --memory, the in-memory log (default 16m); a list (4m,32m,128m) is a memory-tier sweep: a row per size over one dataset, reloaded per size, each cell showing the share of GETs that read the device")
	fs.StringVar(&cfg.ReadCacheMemory, "readcache-memory", "", "server --readcache-memory, its read cache (default off); a list (32m,128m) is a read-cache sweep: a row per size, each cell showing the cache's hit share and the best cache's beside its device share (docs/read-cache.md)")
	fs.StringVar(&cfg.Page, "page", "", "server --page (default 4m)")
	fs.StringVar(&cfg.Segment, "segment", "", "server --segment (default 1g)")
	fs.StringVar(&cfg.Index, "index", "", "server --index (default quick 256m, reference 8g)")
	fs.StringVar(&backends, "backends", "", "device backends, one pair of rows each (default libaio,uring)")
	fs.StringVar(&pins, "pin", "", "pin modes: pinned (server node 0, client node 1; CPU halves on one node) and/or none (default pinned,none; across hosts none)")
	fs.StringVar(&cfg.DataDir, "data", "", "the server's data dir on the device under test: yours, in directories nobody else may write; new, empty, or holding only tierbench's own files (never /, your home, the current directory or a parent of them, or --out); locked for the run, its segment files wiped before each row and at the end (default "+safe.DefaultDataDir+"; env TIERBENCH_DATA); with --server-addr, where that server's data lives, which gives it a fio ceiling")
	fs.BoolVar(&cfg.KeepData, "keep-data", false, "keep the last row's segment files in --data when the run ends")
	fs.StringVar(&cfg.OutDir, "out", "", "the results bundle directory, checked like --data: yours, nobody else may write it (default "+plan.DefaultOutParent+"/<run id>)")
	fs.StringVar(&cfg.Resume, "resume", "", "complete the bundle in this directory: the passes it holds are skipped")
	fs.StringVar(&cfg.Runtime, "runtime", "", "docker, process, or auto: Docker when the engine answers (default auto; with --resume, the runtime the run began with)")
	fs.StringVar(&cfg.Binary, "binary", "", "the static tierbench binary to run as server and client (default this one)")
	fs.StringVar(&cfg.ServerHost, "server-host", "", "the Docker engine of the server's host: unix:///path, tcp://host:2376 (TLS from DOCKER_CERT_PATH, DOCKER_TLS_VERIFY),\nssh://user@host (runs `docker system dial-stdio` there) or a Docker context name; NAME=ENDPOINT names the host (default: the local engine)")
	fs.StringVar(&cfg.ClientHosts, "client-hosts", "", "comma-separated `endpoints` of the client hosts, as --server-host takes them: each cell's connections are split over them,\nall start at one time and measure one window (default: the server's host)")
	fs.StringVar(&cfg.ServerBind, "server-bind", "", "`address` the server listens on across hosts (default: the server host's address on the route to the first\nother client host; beyond loopback a password made for the run is required)")
	fs.StringVar(&cfg.ServerAddr, "server-addr", "", "HOST:PORT of a RESP server already running (Redis, Garnet, …): measure it instead of starting one; redis://[user@]host:port\nas an ACL user, rediss://… over TLS (a managed service); its password with --auth-file or --auth-env, never in the address")
	fs.StringVar(&cfg.AuthFile, "auth-file", "", "the password of the server at --server-addr: the first line of this `file` (recorded by path for --resume; the password is never printed or kept)")
	fs.StringVar(&cfg.AuthEnv, "auth-env", "", "the password of the server at --server-addr: the environment variable of this `name`")
	fs.StringVar(&cfg.TLS, "tls", "", "on, off or both: the servers the run starts listen on a TLS port alone, with a CA and certificates made for the run (the CA's certificate kept in the bundle,\nthe keys never), and every client and probe speaks TLS; both measures each row without and with TLS, side by side with the server's CPU per GET.\nDefault: on across hosts beyond loopback, where the run's password and every request would otherwise cross the network it measures in clear (--tls off refuses it); off on one machine")
	fs.StringVar(&cfg.CACert, "cacert", "", "with --server-addr rediss://…: the CA certificate `file` (PEM) its certificate must be signed by (default: the system's roots)")
	fs.BoolVar(&cfg.Insecure, "insecure", false, "with --server-addr rediss://…: do not verify its certificate (encrypted, but the server unauthenticated)")
	fs.StringVar(&serverPIDs, "server-pid", "", "that server's pid on this host (a container's host pid), whose /proc/<pid>/io counts its device reads; it must own the listening socket of --server-addr (default: the socket's owner, found in /proc). For a cluster node, a comma-separated list: each master gets the pid that owns its listening socket")
	fs.StringVar(&shards, "shards", "", "shard counts, comma-separated, one row each per backend × pin (e.g. 1,2): N tiered servers as one static cluster, slots split evenly, each with its own data dir (under --data, or one of a --data list) and CPU set (a NUMA node each when there are enough, else disjoint CPU slices); the client drives them with --cluster-bench; rows read \"N shards / …\"; process runtime; --scenario storage or localmemory")
	fs.BoolVar(&cfg.SkipLoad, "skip-load", false, "with --server-addr: do not load; the server must hold at least --dbsize keys and pass the sampled GET check")
	fs.Float64Var(&cfg.MaxMissRatio, "max-miss-ratio", 0, "share of GETs a cell (and the sampled check) may miss and still count; the report states a non-zero value in bold (default 0: any miss keeps the cell out)")
	fs.BoolVar(&cfg.Latency, "latency", false, "after each row's passes, measure GET latency at fixed offered rates of 10, 25, 50, 75 and 90 % of the row's best median, from each GET's intended send time (default on in the reference profile, off in quick)")
	fs.BoolVar(&cfg.ServerInfo, "server-info", false, "after each row's passes, keep every server node's whole INFO in the bundle (server-info.jsonl)")
	fs.StringVar(&cfg.SLO, "slo", "", "after each row's passes, search the highest offered GET rate whose latency `percentile=bound` holds: p50, p99 or p99.9, in us or ms (e.g. p99=1ms);\n"+
		"fixed-rate steps as --latency's, starting at the row's best median, halving until one meets the bound (down to 1/64), then bisecting to within 5 %: at most 11 steps;\n"+
		"a step the client could not pace counts only if it met the bound (its lateness is inside the latency), else it caps the search as the client's limit; the report's table \"GET ops/s at p99 ≤ 1 ms\", every step in latency.jsonl and the latency chart")
	fs.StringVar(&cfg.KeyDist, "key-dist", "", "key `distribution` of the measured cells and the latency steps, as tierbench bench --key-dist takes it: uniform (the default), zipf[:THETA], hotspot[:HOTSET,HOTOPS], latest[:THETA] or gaussian[:MEDIAN,STDDEV]; the load still writes every key once")
	fs.StringVar(&cfg.Mix, "workload", "", "the measured cells' operations: a `mix` such as GET:95,SET:5 (GET, SET, MGET, RMW; as tierbench bench --op-mix) or a preset: ycsb-a (GET:50,SET:50), ycsb-b (GET:95,SET:5), ycsb-c (GET:100), ycsb-f (GET:50,RMW:50);\n"+
		"SET writes each key's loaded value, so the load check holds after; device bytes per GET divide by the ops that read a key; the latency steps and the ladder stay GETs (default: GETs alone)")
	fs.BoolVar(&cfg.Force, "force", false, "measure even when a preflight check failed")
	fs.BoolVar(&cfg.NoFio, "no-fio", false, "skip fio: the baseline (the report then has no ceiling), the disk-settle probes after a load and the 1 s fio after every pass that each cell is also held against (beside)")
	fs.BoolVar(&cfg.Silent, "silent", false, "no progress lines on stderr")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve progress and the cell under way as Prometheus metrics at `ADDR`/metrics (:PORT is loopback; other hosts are refused, as the endpoint has no authentication, except 0.0.0.0:PORT)")
	fs.StringVar(&servers, "server", "", "servers to measure side by side, comma-separated, one set of rows each: tierbench, garnet, redis, valkey, keydb, dragonfly (the catalogue, README's \"Measure Garnet, Redis and others\"); each started as tierbench's own is: pinned, on a wiped data dir, its pid proven to own the socket (the real server behind a launcher), its whole process tree stopped (default tierbench)")
	fs.StringVar(&cfg.ServerCmd, "server-cmd", "", "a server of your own to measure beside --server's, as a command `template` with {port} {bind} {data} {memory} {page} {segment} {index} {backend}\nand {password_file} (the run's password, one line), split into words as a shell does; its rows are named cmd")
	fs.StringVar(&cfg.ServerBin, "server-bin", "", "the `file` that starts the one --server besides tierbench (e.g. …/GarnetServer, or …/GarnetServer.dll run by dotnet; default: its program on PATH)")
	fs.StringVar(&cfg.ServerImage, "server-image", "", "under --runtime docker, the `image` that runs the one --server besides tierbench, from the catalogue's entrypoint; never pulled unless --pull")
	fs.BoolVar(&cfg.Pull, "pull", false, "pull --server-image when the Docker engine lacks it (without it, the run refuses and prints the docker pull line)")
	fs.StringVar(&cfg.StateDir, "state-dir", "", "where pid files of running children and the run's password and TLS files are kept: a directory of yours nobody else may write, made 0700 (default /run/tierbench for root, else $XDG_RUNTIME_DIR/tierbench or /tmp/tierbench-UID)")
	parse := func() error {
		var err error
		fail := func(format string, a ...any) error { return fmt.Errorf(format, a...) }
		fs.Visit(func(f *flag.Flag) { cfg.Given = append(cfg.Given, f.Name) })
		for _, l := range []struct {
			name, value string
			dst         *[]string
		}{{"backends", backends, &cfg.Backends}, {"pin", pins, &cfg.Pins}} {
			if !isGiven(cfg.Given, l.name) {
				continue
			}
			if *l.dst, err = plan.SplitList(strings.ToLower(l.value)); err != nil {
				return fail("--%s %q: %v", l.name, l.value, err)
			}
		}
		if isGiven(cfg.Given, "server") {
			if cfg.Servers, err = plan.SplitList(strings.ToLower(servers)); err != nil {
				return fail("--server %q: %v", servers, err)
			}
		}
		if isGiven(cfg.Given, "shards") {
			if cfg.Shards, err = plan.ParseInts(shards); err != nil {
				return fail("--shards %q: %v", shards, err)
			}
		}
		if isGiven(cfg.Given, "server-pid") {
			// Each pid as written: run's checks word what is wrong with it.
			for _, f := range strings.Split(serverPIDs, ",") {
				pid, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return fail("--server-pid %q: %q is not a pid", serverPIDs, f)
				}
				cfg.ServerPIDs = append(cfg.ServerPIDs, pid)
			}
			cfg.ServerPID = cfg.ServerPIDs[0]
		}
		if isGiven(cfg.Given, "threads") {
			if cfg.Threads, err = plan.ParseInts(threads); err != nil {
				return fail("--threads %q: %v", threads, err)
			}
		}
		return nil
	}
	return fs, parse
}

func runRun(args []string, stdout, stderr io.Writer) int {
	var cfg plan.Config
	var planPath, reproducePath string
	var repro reproduceOptions
	fs, parseFlags := runFlags("run", &cfg)
	fs.StringVar(&planPath, "plan", "", "run the plan in this `file` (tierbench plan's YAML or JSON, a bundle's plan.json, or a bundle): the flags given beside it override it, each said on stderr; a host that cannot give what it needs (runtime, NUMA nodes of its pinned rows, backends, servers, images) is refused before anything starts (docs/plan-files.md)")
	fs.StringVar(&reproducePath, "reproduce", "", "run this `bundle`'s plan on this host, after checking its sums, then write reproduction.md and reproduction.html into the new bundle: both hosts side by side and a verdict per cell (docs/reproduction.md)")
	fs.Float64Var(&repro.tolerance, "tolerance", reproduce.DefaultTolerance, "with --reproduce: the largest difference, in `points` of each host's own fio ceiling, of a reproduced cell's share")
	fs.BoolVar(&repro.unverified, "unverified", false, "with --reproduce: reproduce a bundle whose sums fail, are missing or leave results.json uncovered; the reproduction says so")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench run [flags]

Reproduces the Garnet "NVMe storage-bound" matrix: for each backend × pin
row it runs the preflight, starts a fresh tiered server on a wiped data dir,
proves the server's pid owns its listening socket, loads the dataset and
requires every key to be there (loader acknowledgements and DBSIZE equal to
--dbsize, then a sampled GET of at least 20000 keys with no miss), warms
up, then measures each thread count for several passes, counting the
server's device reads in /proc/<pid>/io, the data disk's r/s and depth in
/proc/diskstats and the server's CPU in /proc/<pid>/stat. The fio ceiling
is the best of a depth sweep up to the server's 4096 reads in flight over
files as large as the dataset; a cell above 1.02 × it gets fio again at
its own depth and, if still above, is marked above-ceiling. Cells served
from memory or with misses are kept out of the table. It prints the
| backend | NUMA | t=8 | t=32 | t=48 | t=64 | table and writes a results
bundle (fingerprint.json, preflight.json, cells.jsonl, ceilings.jsonl,
results.json, table.md, report.md, logs/). Interrupted runs continue with --resume.

--plan FILE runs a plan written by 'tierbench plan' (or a bundle's plan);
--reproduce BUNDLE runs a bundle's plan here and judges each cell against
it: reproduced, differs or not comparable (exit 0 when every cell
reproduced, 1 when one differs, 3 when none differs but some are not
comparable, 4 when none could be compared; 2 and the run's own statuses
as below).

Environment: TIERBENCH_DATA, TIERBENCH_THREADS, TIERBENCH_PASSES and
TIERBENCH_CELL_SECONDS stand for the flags not given, each said on stderr;
the reference generator's DATA, THREADS, PASSES and RUNTIME are refused. A
flag given explicitly means what it says: --warmup-seconds 0 is no warm-up,
--passes 0 is refused.

Examples:
  tierbench run --profile quick (data in /var/tmp/tierbench-$UID/data, the bundle in ./tierbench-results/<run id>)
  tierbench run --plan quick.yaml --passes 3 (a plan file, one value overridden)
  tierbench run --reproduce published/RUN --tolerance 10 (a published bundle, here)
  tierbench run --scenario all --profile quick (the seed's three scenarios, one table each)
  tierbench run --profile reference --data /mnt/nvme/tierbench --runtime docker
  tierbench run --server-addr 127.0.0.1:6379 --server-pid 1234 --dbsize 1000000 --skip-load
  tierbench run --profile quick --backends uring --pin none --shards 1,2 --data /mnt/a,/mnt/b
  tierbench run --server-addr 127.0.0.1:7000 --server-pid 11,12,13 --dbsize 1000000 (a Redis Cluster)
  tierbench run --scenario memory --server tierbench,redis,valkey (servers side by side, one table)
  tierbench run --server garnet --server-bin /opt/garnet/GarnetServer.dll (Garnet under dotnet)
  tierbench run --server garnet --runtime docker --server-image ghcr.io/microsoft/garnet
  tierbench run --scenario memory --server-cmd 'my-server --port {port} --dir {data}'
  tierbench run --server-host ssh://me@storage1 --client-hosts ssh://me@client1,ssh://me@client2 --data /mnt/nvme/tb
  tierbench run --tls both --backends uring --pin none (each row without and with TLS: what TLS costs)
  tierbench run --server-addr rediss://default@my-cache.example.com:6380 --auth-file ~/cache.pass --dbsize 100000 (a managed service)

`+orchestrator.ExitCodesHelp+`
Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if err := parseFlags(); err != nil {
		return usageError(fs, stderr, "%v", err)
	}
	var err error
	cfg.Given = slices.DeleteFunc(cfg.Given, func(g string) bool {
		return g == "plan" || g == "reproduce" || g == "tolerance" || g == "unverified"
	})
	switch {
	case planPath != "" && reproducePath != "":
		return usageError(fs, stderr, "--plan and --reproduce both name a plan: give one")
	case (flagGiven(fs, "tolerance") || repro.unverified) && reproducePath == "":
		return usageError(fs, stderr, "--tolerance and --unverified apply to --reproduce")
	case reproducePath != "":
		return runReproduce(reproducePath, cfg, repro, stdout, stderr)
	case planPath != "":
		if cfg, err = planConfig(planPath, cfg, false, stderr); err != nil {
			fmt.Fprintf(stderr, "tierbench run: %v\n", err)
			return orchestrator.ExitCode(err)
		}
	}
	err = orchestrator.Run(context.Background(), cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench run: %v\n", err)
	}
	return orchestrator.ExitCode(err)
}

func isGiven(given []string, name string) bool {
	for _, g := range given {
		if g == name {
			return true
		}
	}
	return false
}

// usageError prints a bad flag value and the usage, and returns 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, "tierbench run: "+format+"\n\n", a...)
	fs.SetOutput(stderr)
	fs.Usage()
	return 2
}
