// Package orchestrator runs the reproduction: it plans the backend × pin ×
// threads matrix, starts server and client (Docker containers or pinned
// processes), loads and verifies the dataset, proves reads hit the device,
// takes medians and writes the results bundle, table and report.
//
// It drives the parts below it only through the tierbench binary's command
// line and JSON — `tierbench preflight --json`, `tierbench server`,
// `tierbench bench --json` — exactly as it would drive Garnet or Redis, and
// it speaks RESP itself only for PING, DBSIZE and INFO store.
//
// # The house
//
// This package is the facade: Run, the row loop, resume, progress and the
// exit statuses, and the registry (registry.go), the one list of what a
// run can measure and where it can run. Below it, each concern is a
// package that imports nothing above it:
//
//   - plan: the configuration, resolved and checked; a registered Part
//     (a measurement, a dimension) says itself what it supports.
//   - rig: the interfaces to the hardware (Driver, ServerHandle,
//     ServerProbe, ServerHost) and the runtimes under it, rig/process and
//     rig/docker, each saying what it can do in Capabilities.
//   - latency: the fixed-rate steps and the SLO search, run through an
//     Env the facade hands them for one row.
//   - safe: the directories, files and children of a run on a shared
//     host; fault: the errors that classify why a run stopped short.
//
// A new measurement, dimension or runtime is a package of its own and a
// line in registry.go.
//
// # A run
//
// Run resolves a Config (a profile, then the environment's TIERBENCH_DATA,
// TIERBENCH_THREADS, TIERBENCH_PASSES and TIERBENCH_CELL_SECONDS, then flags; a
// flag named in Config.Given keeps its explicit zero or is refused), and
// for a server at --server-addr proves its pid owns the listening socket,
// all before it creates any directory. It takes its data dirs
// (package safe): each must be new, empty or hold only tierbench's own
// files, and may not be /, the home or current directory, --out or a
// parent of them; each is flocked for the run's life and marked with the
// run's id, so a second run on it is refused naming the first, and a run
// deletes only what tierbench writes there. It then removes what earlier runs
// left behind, whatever its runtime (containers labelled tierbench.run
// whose owner process is gone, when an engine answers; children and pid
// files under Config.StateDir whose run no longer holds the file's flock,
// a child only when its environment names that run (package safe) — never
// those of a run still alive), runs the host preflight with the fio baseline, and then,
// per backend × pin row:
//
//  1. wipes the data dir and starts a fresh `tierbench server --storage-tier`;
//     the pinned row gets node 0 (the first half of the CPUs on a one-node
//     host, labelled so), the client node 1;
//  2. reads the server's effective placement from /proc/<pid>/status and
//     fails the row on a mismatch; runs the preflight where the server runs
//     (inside its container for Docker) and, for uring, requires its
//     io_uring check to pass there;
//  3. proves the server's pid owns its listening socket (and agrees with
//     INFO server's process_id), loads every key once with
//     `bench --runtime 0` while polling DBSIZE for progress, then verifies
//     the load: loader acknowledgements == dbsize and DBSIZE == dbsize
//     (with --skip-load, DBSIZE ≥ dbsize), for a tiered server
//     Log.HeadAddress ≥ 99 % of the log — or, for datasets of
//     20–100 × --memory, everything above HeadAddress no larger than
//     --memory + one page — and GETs a uniform sample of 20 000 keys (all,
//     when fewer), refusing the row on one miss or wrong-length value;
//  4. runs one unrecorded warm-up GET phase, then for each pass and thread
//     count one `bench -s` GET phase with the server's /proc/<pid>/io
//     read_bytes taken before and after; each pass is appended to
//     cells.jsonl and fsynced at once.
//
// A pass with any miss or error (more than Config.MaxMissRatio), or with
// fewer device bytes per GET than 90 % of a 512 B sector, is kept out of
// the table and marked; the table shows the median of each cell's passes,
// results.json keeps min and max. A row that fails (a server that stops
// answering is cut off after its phase plus 60 s) or is refused is
// recorded and the others still run. ExitCode maps Run's error to the
// exit status: 0 every planned cell shown, 1 a failure, 2 configuration,
// 3 some cells kept out, 4 none publishable or refused, 130/143 signals.
//
// Everything started carries the run id (container label tierbench.run,
// pid file) and is removed on success, error, SIGINT and SIGTERM; an
// interrupted run is completed with Config.Resume, which skips the passes
// cells.jsonl already holds.
//
// # Clusters
//
// A row's server may be a cluster (shards.go): the masters of an external
// cluster node, or the N shards --shards starts, each a tierbench server
// with --cluster-… flags over one node file (slots split as redis-cli
// does), its own data dir and CPU set, always as processes. Then the
// client runs with --cluster-bench; the load check requires every node's
// DBSIZE to be exactly the keys of 0..dbsize-1 its slots hold (computed
// from the key spelling) and the sum dbsize; the sampled GETs go to each
// key's node; device bytes and CPU are read per node pid and summed, and
// each pass keeps the per-node figures. In scenario 3 every shard is a
// localmemory tiered server and each shard's own INFO store device reads
// are judged: one shard under 0.9 per GET keeps the cell out even when
// the total passes. Every cell records the server's
// CPU time from /proc/<pid>/stat, so report.md gives CPU per GET.
//
// # Runtimes
//
// The Docker runtime builds tierbench:<hash of the binary> FROM scratch
// from an in-memory context (images.Dockerfile and the static binary; it
// never pulls), runs the server privileged on the host network with the
// data dir bind-mounted and --cpuset-cpus/--cpuset-mems, and the client as
// a container whose stdout (the JSON) is read from its logs. An engine that
// refuses privileged containers (one inside a sandbox lacking a capability)
// gets seccomp=unconfined, apparmor=unconfined and the engine's default
// capabilities plus serverCapabilities (IPC_LOCK), the same on every host,
// instead, and the bundle says so.
//
// The process runtime starts the same binary as children in their own
// process groups with Pdeathsig. Pinning is applied inside the child: the
// binary calls ExecPinnedChild first thing, which, when
// TIERBENCH_PIN_CPUS / TIERBENCH_PIN_MEMS are set, binds its thread with
// sched_setaffinity and set_mempolicy(MPOL_BIND) and re-executes itself, so
// every thread of the real process starts pinned (no numactl needed).
//
// # Targets, clients and the server's host
//
// Three seams keep the modes out of the run path; the runner asks each,
// never which implementation it holds, and each is picked once, from the
// flags, before the first row:
//
//   - targetSource (target.go) gives every row its target: ownServers
//     starts a fresh server, or the row's shards, on wiped data dirs;
//     externalTarget is the server at --server-addr, or the masters of
//     the cluster it is a node of, proven before anything is created.
//     A target is a list of nodes (a server is a target of one): the
//     owner proof, the load check (each node's DBSIZE exactly the keys its
//     slots hold, all keys for a server that is not a cluster node), the
//     sampled GETs, the device reads, CPU and placement around a pass all
//     walk the nodes alike (verify.go, nodes.go), each node reached
//     through its own serverProbe, where it runs. Only the client's
//     routing and the record's per-node figures depend on it being a
//     cluster.
//   - fleet.Fleet (package fleet) runs the clients and checks the
//     machines they run on: fleet.Local here, fleet.Hosts over
//     --client-hosts, each phase's connections split over them from one
//     shared start, with the network checked once per run and the
//     merged online phase.
//   - serverHost (package rig) is everything the run does or observes on the
//     machine its servers run on besides RESP: emptying the data dirs,
//     finding the disks below them and sampling their counters. The
//     server's own process (device reads, placement, CPU ticks and the
//     socket-owner proof) is reached through the serverProbe its handle
//     gives. Each has a local implementation and a remote one, hostprobe
//     in a container on that engine, so no step reads this machine's
//     /proc for a server elsewhere.
//
// # Servers side by side
//
// --server NAME[,NAME…] and --server-cmd TEMPLATE make the server a
// dimension of the table: one set of rows per server (results.Row.Server),
// each an entry of package sut's catalogue, which the run reads as data
// (servers.go): its flags for the row's scenario filled in, its program
// (PATH or --server-bin) for the process runtime, or --server-image with
// the entry's entrypoint for Docker (never pulled without --pull). Each
// is started as tierbench's own server is, on a wiped data dir (a
// foreign server in a marked directory of its own there, removed whole),
// pinned (a foreign program through the pinning tierbench binary, which
// runs it in its place), its listening process found below whatever
// launcher started it and proven, its whole process tree stopped
// (internal/procfs), its command as run and the INFO fields its entry
// names kept in the load record.
//
// # Scenarios and the ladder
//
// Each scenario is an entry of scenarioSpecs (scenario.go): its profiles,
// whether it has a backend of its own, its -b rows and the checks and
// evidence that judge it (in RAM, tiered, device reads counted, the
// ladder's top); its server's flags are the catalogue's, per scenario
// (package sut, tierbench's own entry for the run's own server). The run
// path asks the row's or the run's spec, never the scenario's name.
//
// Config.Scenario picks the reference's server set-up (scenario.go):
// storage (scenario 2, the matrix above), memory (scenario 1: the untiered
// server; a pass reading ≥ 1 % of a sector per GET is kept out), or
// localmemory (scenario 3: the tiered server on the in-RAM device, rows per
// -b; a pass is kept out below 0.9 device reads per GET by INFO store's
// Device.CompletedReads, or when it reads ≥ 1 % of a sector per GET through
// the kernel). Both RAM scenarios refuse a dataset larger than
// MemAvailable before anything starts. "all" runs the three into
// sub-bundles of one bundle, indexed by scenarios.json. Config.Ladder
// (package ladder, handed the run as a ladder.Env by ladder_env.go) then
// runs `tierbench device`, fio (ladder/fio.go) and
// `tierbench kv` in alternated rounds on the same data dir and shape and
// writes ladder.json with each layer's ops/s, share
// of the layer below and CPU µs per op, and the largest drop. The
// localmemory ladder's top is the untiered in-memory server (ladder/top.go)
// on the same dataset, at the best localmemory cell's thread count and -b;
// it is the ceiling, so its share reads localmemory RESP ÷ in-memory RESP.
//
// # Mixes and the memory-tier sweep
//
// --workload makes each measured cell a mix (bench --op-mix). Around every
// pass the run also reads the server's /proc/<pid>/io write_bytes and,
// where the server gives them (tierbench's own), INFO store's
// Log.TailAddress and Log.FlushedAddress and INFO stats' device_gets
// (mixes.go), so each pass records every operation's ops/sec, bytes
// written per SET, the log's growth and the share of GETs the store served
// from its device (results.MixEvidence). A mix that writes repeats the
// exact load check after the row's cells (DBSIZE exactly --dbsize, a fresh
// sample of values of the loaded length); a plan whose projected log
// growth exceeds the free space on --data is refused before anything
// starts (logspace.go).
//
// --memory with several sizes is a row dimension (package sweep,
// results.Row.Memory): each size a row, so a fresh server loaded with
// the same dataset (the store does not recover its index from its log).
// A sweep's rows skip the load's device-share rule and the 20 × rule,
// and their passes are never kept out as memory-served: the share of
// GETs read from the device is what they measure.
//
// # TLS
//
// --tls on|off|both is a row dimension too (package tlsrow, results.Row.TLS):
// both runs every row without and then with TLS, so report.md sets each
// cell's ops/sec and the server's CPU per GET side by side. A TLS row's
// server has a TLS port alone, with certificates a CA made for the run
// signed (the CA's certificate in the bundle, results.FileTLSCA; the
// keys in 0600 files of the run's state dir, or copied into containers
// as the password is, removed at the end); its clients take --tls and
// the run's probes dial it over TLS, here or through hostprobe
// --tls-dir. Across hosts beyond loopback TLS is on unless --tls off.
// --server-addr rediss://[user@]host:port measures a server
// over TLS (--cacert, --insecure); its password stays in memory and in a
// 0600 file its clients read.
//
// # Combinations
//
// Every combination of runtime, target, scenario and extra is either
// measured, and exercised end to end by the test named, or refused by
// Config validation (exit 2, nothing created) with a sentence that says
// why and what to do instead (TestCombinations holds each refusal):
//
//	runtime × target   own server          own shards (--shards N>1)    external server (--server-addr)            external cluster
//	process            TestRunProcess      TestShardsRun                TestRunExternalSkipLoadRefusesPartialLoad  TestRunAgainstRedisCluster
//	docker             TestRunDocker       refused (shards are          only the client runs, as a process,        as external server
//	                                       processes; auto picks        recorded so in the plan
//	                                       process and says so)
//	across hosts       TestRunAcrossHosts  refused                      refused                                    refused
//
//	scenario      process                                        docker              across hosts
//	storage       TestRunProcess                                 TestRunDocker       TestRunAcrossHosts
//	memory        TestRunScenarioMemory                          TestRunScenarioAll  refused (INFO store and MemAvailable read here)
//	localmemory   TestRunScenarioLocalMemory, TestShardsLocalMemory  TestRunScenarioAll  refused (the same)
//	all           TestRunScenarioAll runs its three under docker; --resume of an all bundle is refused (resume one scenario's)
//
//	server (--server, --server-cmd)   process                                         docker (--server-image)   across hosts
//	tierbench,redis (memory)          TestRunServersProcess (and a launcher's redis)  TestRunServersDocker      refused (tierbench's own only)
//	--server-cmd (storage)            TestRunServerCmdStorage                         as --server-image         refused
//	a server without a tier           refused for storage and localmemory with the catalogue's sentence
//	with --shards, --ladder or --server-addr: refused; the reference profile's ladder turns off and says so
//
//	--tls     process          docker                     across hosts
//	on, both  TestRunTLSBoth   as process (containers     TestRunAcrossHosts (on by default beyond
//	                           get the files copied in)   loopback; --tls off says it is in clear)
//	with --shards above 1, --server other than tierbench or --ladder: refused; the reference profile's ladder turns off and says so
//	--server-addr rediss://: TLS on its one row; --tls both refused (one port per server)
//
//	extra     process                          docker                          across hosts
//	ladder    TestRunScenarioLocalMemory,      TestRunLadderAndLatencyDocker   refused with --server-host (its layers
//	          TestRunLadder                                                    would run here); the reference
//	                                                                           profile's ladder turns off and is said
//	latency   TestResumeRunsMissingLatency     TestRunLadderAndLatencyDocker   TestRunAcrossHosts; with --shards above 1
//	                                                                           or against a cluster refused (the
//	                                                                           reference profile's: off, said)
//	slo       TestRunSLO,                      as latency (the same        as latency; with --shards above 1
//	          TestSLOSlowedServerFindsLess,    fixed-rate step)            or against a cluster refused
//	          TestResumeContinuesSLOSearch
//	resume    TestRunInterruptAndResume,       TestRunLadderAndLatencyDocker   TestRunAcrossHosts (a pass and the
//	          TestResumeRunsMissingLatency                                     merged latency phase completed)
//
// The latency steps and the cells across hosts offer each row's own -b
// (localmemory's 256 and 1024 rows), the -b the row records.
//
// # The bundle
//
// The bundle's format is package results: plan.json (what was asked;
// --resume reads it), fingerprint.json and preflight.json (hostcheck's
// documents), cells.jsonl (one line per load, per pass and per failed
// row), results.json (schema_version, medians, min/max, exclusions, fio
// share, and the sha256 of every other file), and with --latency or --slo
// latency.jsonl and latency/*.hlog (an --slo probe names its search and
// place in it; package latency). The run appends its records through
// results' writers; at the end it renders table.md, report.md and the SVG
// charts with package report (again after the ladder, so that
// results.json's checksums cover the ladder's files), and a --scenario all
// run writes a report.md at the top of its bundle (report.WriteIndex). The
// verdicts that turn passes into cells (results.JudgePass,
// results.Aggregate) live with the format, so every reader judges a
// bundle alike; `tierbench report` and `tierbench compare` read bundles
// through results and report and never import this package.
package orchestrator
