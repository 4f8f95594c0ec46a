// Package bench is the RESP load generator: offline pipelined throughput and
// online per-op latency against any RESP server (tierbench, Redis, Garnet,
// Dragonfly, KeyDB). It knows the RESP wire format and nothing else of the
// server.
//
// Keys are key indices 0..DBSize-1 in decimal, zero-padded to the key
// length: the spelling of package internal/keyspace, which `tierbench kv`
// shares, so both layers load and read the same keys. The value of a key is derived from its index (decimal digits of a
// hash, first digit non-zero), so --verify can check any GET reply without
// remembering what was written, and a value of up to 18 bytes is a valid
// INCR operand.
//
// The load writes every key exactly once with MSET: thread i of n writes
// [DBSize*i/n, DBSize*(i+1)/n), so an uneven split loses no key. An MSET
// of k keys answered +OK acknowledges k keys; the acknowledged count is
// what the orchestrator's load check reads.
//
// Offline, each thread owns one connection and a set of request batches
// built before the timed window from keys drawn in advance from
// Config.KeyDist (a keyspace.Dist: uniform, zipf, hotspot, latest,
// gaussian). A uniform cell cycles those keys; a skewed cell rewrites a
// batch's key digits (and SET's values) in place with fresh draws once its
// replies are in, so it draws from the whole distribution rather than from
// the few keys built in advance. With PipelineBatch (the
// default, the reference's LightClient) a connection sends a batch, reads
// all its replies, and cycles; with PipelineWindow it keeps Batch
// single-key requests in flight, sending those that replies freed once an
// eighth of the window is free. A thread is a connection, not an OS
// thread: the connections are driven by Config.Loops event loops (default
// one per CPU the process may run on, at most one per connection), spread
// round-robin, each a goroutine polling its connections with its own epoll
// and parked in Go's netpoller while none is ready; a wake-up reads each
// ready connection once, parses every reply complete in its buffer and
// writes at most once. When the window ends every connection finishes its
// batch (or drains its window), so ops == replies counted. Replies are
// parsed in place just enough to classify them: hits, misses (null
// replies, and DEL answering 0), error replies and, with verify,
// mismatched values. Nothing is allocated per op. The process's
// user+system CPU time is taken around each cell; a cell that used at
// least 90 % of the CPUs its loops could run on is marked
// client_saturated. The load, --online and --cluster-bench keep a
// goroutine (online: two) per connection doing blocking socket calls.
//
// Online, each connection has up to InFlight ops outstanding; latencies go
// into a per-connection HdrHistogram, merged and printed every
// ReportInterval. With a Rate, op k of connection i of T is due at start +
// (k + i/T)*interval and its latency runs from that due time, so a server
// stall is charged to every op it delayed (no coordinated omission). Over
// plain TCP the connections are driven by paced event loops, one per CPU
// as offline (pacedLoop: a timerfd and a short spin send each op within
// microseconds of its due time; the spin yields its CPU at every turn
// unless the client's CPUs are its own), over TLS by a sender and a receiver
// goroutine each; either way how late each op left is recorded (Pacing).
// Without a Rate, one goroutine per connection sends as replies arrive. An op due (or, without a Rate, sent) within
// the first Warmup is answered and counted apart but not recorded: every
// figure, the histogram and --hdr-out cover the Runtime after it.
//
// Every measured window, offline or online, also reads this host's
// /proc/stat before and after it (package internal/cpustat): the share of
// the CPU time the hypervisor took (steal) is the [Host] line and
// host_steal_share. On a virtual machine it is the first suspect of a
// latency tail or a late send, since a stolen slice stalls the client and
// the server alike; on a kernel that does not count it, it is left out.
// An online window also samples every CPU each millisecond with the
// kernel's cpu-clock event where perf events are allowed (package
// internal/freeze): gaps are time the host did not run this machine at
// all, which steal does not count (a CPU quota running out), reported as
// a second [Host] line and host_freezes. The samples are timer
// interrupts, a small but measurable part of a busy CPU's time on a virtual
// machine: Config.NoFreezeProbe (--no-freeze-probe) leaves them out.
//
// With Config.OpMix (--op-mix, --workload) an offline cell is a mix: each
// of a batch's Batch ops is drawn from the shares (GET, SET, INCR, DEL,
// MGET of ten keys, and RMW: a GET and a SET of one key back to back), the
// batches are pre-built and cycled (keys redrawn when skewed) as a single
// command's are, and every reply is tallied by its operation, with a
// latency from the batch's first write to the wake-up that read it, kept in
// each loop's HdrHistogram per operation. SET writes the key's own value,
// so a mix without INCR and DEL leaves the dataset exactly as loaded.
//
// With Config.Cluster (--cluster-bench) the server is a Redis Cluster: the
// slot map is read once from Host:Port (CLUSTER SHARDS, else CLUSTER
// SLOTS), each thread holds one connection to every master and pre-builds
// each master's batches apart from keys routed by slot (package
// internal/slots); a round sends one batch to every master, then reads
// them all. Each master gets the same number of keys per thread: draws
// whose master is full are skipped, so with --zipf every shard sees the
// skew restricted to its own keys. -MOVED refreshes the shared map, retries
// the key at the new owner and re-routes the thread's batches; -ASK sends
// ASKING and the key to the named node once. Redirections are counted per
// node and never as ops: the op counts once, where it was answered. The
// load still writes every key exactly once, each window of a thread's range
// sorted by slot so no MSET crosses slots. Multi-key cells (MGET, MSET) and
// --online are refused. Reports gain a per-node breakdown (ClusterResult).
//
// With Config.JSON, stdout carries one Report document and nothing else;
// its field names are a contract pinned by testdata/report.golden.json.
package bench
