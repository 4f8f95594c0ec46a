package bench

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
)

// Config is one invocation of the load generator. The zero value is not
// usable; DefaultConfig returns the defaults of the command line, which
// follow Garnet's Resp.benchmark.
type Config struct {
	Host string // server address; default 127.0.0.1
	Port int    // default 6379
	Auth string // password sent with AUTH on every connection; empty: none
	User string // ACL user of AUTH (AUTH user password); empty: AUTH password
	// TLS, when set, makes every connection TLS (--tls and its flags).
	TLS *TLSOptions

	// Op is the command of offline mode: GET, SET, MSET, MGET, INCR, DEL or
	// PING. MGET and MSET send one command per batch carrying Batch keys;
	// the others send Batch commands per batch.
	Op          string
	DBSize      int64 // distinct keys: key indices 0..DBSize-1
	KeyLength   int   // key bytes: the index zero-padded; 0: the digits of DBSize-1
	ValueLength int   // value bytes written by the load, SET and MSET

	Threads  []int         // offline thread-count sweep: one cell per entry, one connection per thread
	Batch    int           // requests per pipelined batch (keys per MSET in the load)
	Runtime  time.Duration // per cell; 0: load only; negative (online only): until ctx ends
	SkipLoad bool          // run against a server loaded before
	// Pipeline is how offline mode keeps Batch requests going on each
	// connection: PipelineBatch (default, the reference's LightClient)
	// sends a batch and reads all its replies before the next;
	// PipelineWindow keeps Batch requests in flight, sending new ones as
	// replies arrive.
	Pipeline string

	LoadThreads int // load connections; 0: the largest of Threads

	// Loops is how many event-loop threads drive an offline cell's
	// connections, spread round-robin; 0: one per CPU the process may run
	// on. Never more than the cell's threads. --cluster-bench ignores it.
	Loops int
	// IdleNap is how an offline event loop with nothing to read waits:
	// IdleNapAuto (the default) sizes its naps from the waits it measures
	// and parks when a wait runs long; a duration naps on its own thread
	// (in 20 µs sleeps) that long before it parks until a reply wakes it;
	// 0 parks at once. See idleWait.
	IdleNap time.Duration
	// OwnCPUs says no server runs on the CPUs the client may run on
	// (tierbench run's pinned rows): a paced loop then spins through its
	// whole gap before a send, as it does when the loops leave a CPU
	// spare, since its spinning takes nothing the server could use, and
	// spins without yielding; without it a spin yields its CPU at every
	// turn (spinYields), since a server may be waiting for that CPU.
	OwnCPUs bool
	// NoFreezeProbe leaves an online run's host freezes unmeasured
	// (package freeze): the probe wakes every CPU each millisecond, a cost
	// a run that does not want the measurement need not pay.
	NoFreezeProbe bool

	// KeyDist is the distribution keys are drawn from (--key-dist); the
	// zero value is uniform. Offline, a skewed distribution's keys are
	// redrawn as each batch is answered (see plan.redraw).
	KeyDist   keyspace.Dist
	Zipf      bool    // the older spelling of KeyDist zipf:ZipfTheta (--zipf); not with a KeyDist
	ZipfTheta float64 // skew, 0 < theta < 1
	Seed      uint64  // seed of the key draws; equal seeds draw equal keys (see writeStream)

	// Cluster drives a Redis Cluster (--cluster-bench): the slot map is read
	// from Host:Port and every key goes to the master serving its slot.
	Cluster bool

	JSON   bool // one JSON document on stdout; the human lines go to stderr
	Verify bool // check every GET/MGET value against the loaded one

	Online         bool          // latency mode instead of offline throughput
	OpWorkload     []string      // online: the commands mixed
	OpPercent      []int         // online: each command's share, summing to 100
	InFlight       int           // online: ops in flight per connection (--itp)
	Rate           float64       // online: offered ops/sec over all connections; 0: closed loop
	HdrOut         string        // online: write the HdrHistogram interval log here
	ReportInterval time.Duration // online: period of the percentile rows; default 2 s
	// Warmup (online) is sent at the offered rate before the Runtime and
	// not recorded, so connection set-up and first touches stay out of the
	// latencies; 0: none.
	Warmup time.Duration

	// StartAt, when set, is a shared start time: the connections and
	// requests are made first, then the measurement waits for it and
	// covers exactly [StartAt, StartAt+Runtime], so that clients on
	// several hosts measure one window (offline: only batches answered
	// inside it count; Seconds is the window).
	StartAt time.Time

	// OpMix (--op-mix, --workload) makes the offline cells mixes: each op
	// of a batch is drawn from these shares (ParseOpMix), and --op is
	// unused. Empty: every op is Op.
	OpMix []MixShare

	// PrebuiltOpsPerThread is how many requests each offline thread builds
	// before the timed window and then cycles through; 0 picks a size that
	// keeps key draws varied and memory bounded.
	PrebuiltOpsPerThread int
}

// DefaultConfig returns the command line's defaults.
func DefaultConfig() Config {
	return Config{
		Host:           "127.0.0.1",
		Port:           6379,
		Op:             "GET",
		DBSize:         1024,
		ValueLength:    8,
		Threads:        []int{1, 2, 4, 8, 16, 32},
		Batch:          4096,
		Pipeline:       PipelineBatch,
		Runtime:        15 * time.Second,
		ZipfTheta:      0.99,
		Seed:           1,
		OpWorkload:     []string{"GET"},
		OpPercent:      []int{100},
		InFlight:       1,
		ReportInterval: 2 * time.Second,
		IdleNap:        IdleNapAuto,
	}
}

// ErrUsage is wrapped by every error that Validate returns: the
// configuration itself is wrong, not the server or the network.
var ErrUsage = errors.New("bench: bad configuration")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// plan is a validated Config with its derived values.
type plan struct {
	Config
	addr        string
	spec        dialSpec // AUTH and TLS of every connection
	op          opcode
	keyLength   int
	loadThreads int
	dist        keyspace.Dist    // KeyDist, or zipf:ZipfTheta with Zipf
	sampler     keyspace.Sampler // draws the key indices from dist
	// redraw: offline cells rewrite the keys of each batch (window: of each
	// request) with fresh draws once its replies are in, so a skewed cell
	// draws from the whole distribution, not from the few keys pre-built.
	// Uniform cells cycle their pre-built keys, as they always did.
	redraw   bool
	workload [100]opcode
	mix      []mixEntry // OpMix; nil: single-command cells
	mixTable [100]mixOp // OpMix drawn from: each op Percent times

	clusterOnce sync.Once
	cluster     *clusterState // --cluster-bench: the slot map, read on first use
	clusterErr  error
}

// Validate reports the first thing wrong with cfg, naming the flag.
func (cfg Config) Validate() error {
	_, err := cfg.plan()
	return err
}

func (cfg Config) plan() (*plan, error) {
	p := &plan{Config: cfg}
	if cfg.Host == "" {
		return nil, usagef("--host is empty")
	}
	if cfg.Port <= 0 || cfg.Port > 65535 {
		return nil, usagef("--port %d is not a TCP port (1..65535)", cfg.Port)
	}
	p.addr = net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	if cfg.User != "" && cfg.Auth == "" {
		return nil, usagef("--user %s needs --auth: the user's password (AUTH user password)", cfg.User)
	}
	p.spec = dialSpec{user: cfg.User, auth: cfg.Auth, tlsOpts: cfg.TLS, agreed: &agreedTLS{}}
	if cfg.TLS != nil {
		var err error
		if p.spec.tls, err = cfg.TLS.Build(); err != nil {
			return nil, err
		}
	}
	op, ok := parseOp(cfg.Op)
	if !ok {
		return nil, usagef("--op %q is not one of GET, SET, MSET, MGET, INCR, DEL, PING", cfg.Op)
	}
	p.op = op
	if cfg.DBSize < 1 {
		return nil, usagef("--dbsize %d: need at least 1 key", cfg.DBSize)
	}
	need := keyspace.Digits(uint64(cfg.DBSize - 1))
	p.keyLength = cfg.KeyLength
	switch {
	case cfg.KeyLength == 0:
		p.keyLength = need
	case cfg.KeyLength < 0:
		return nil, usagef("--keylength %d is negative", cfg.KeyLength)
	case cfg.KeyLength < need:
		return nil, usagef("--keylength %d is too short for --dbsize %d: key index %d needs %d digits", cfg.KeyLength, cfg.DBSize, cfg.DBSize-1, need)
	case cfg.KeyLength > 1<<20:
		return nil, usagef("--keylength %d is larger than 1 MiB", cfg.KeyLength)
	}
	if cfg.ValueLength < 1 || cfg.ValueLength > 64<<20 {
		return nil, usagef("--valuelength %d is outside 1..%d", cfg.ValueLength, 64<<20)
	}
	if cfg.Batch < 1 {
		return nil, usagef("-b %d: a batch needs at least 1 request", cfg.Batch)
	}
	if cfg.Batch > 1<<20 {
		return nil, usagef("-b %d is larger than %d", cfg.Batch, 1<<20)
	}
	if len(cfg.Threads) == 0 {
		return nil, usagef("-t is empty: give thread counts such as 1,2,4")
	}
	maxThreads := 0
	for _, t := range cfg.Threads {
		if t < 1 || t > 4096 {
			return nil, usagef("-t %d is outside 1..4096", t)
		}
		maxThreads = max(maxThreads, t)
	}
	p.loadThreads = cfg.LoadThreads
	if p.loadThreads == 0 {
		p.loadThreads = maxThreads
	}
	if p.loadThreads < 1 || p.loadThreads > 4096 {
		return nil, usagef("--load-threads %d is outside 1..4096", cfg.LoadThreads)
	}
	if cfg.Loops < 0 || cfg.Loops > 4096 {
		return nil, usagef("--loops %d is outside 0..4096", cfg.Loops)
	}
	if cfg.IdleNap != IdleNapAuto && (cfg.IdleNap < 0 || cfg.IdleNap > time.Second) {
		return nil, usagef("--idle-nap %v is outside 0..1s: give a duration such as 50us, 0 to park at once, or auto", cfg.IdleNap)
	}
	p.dist = cfg.KeyDist
	if err := p.dist.Validate(); err != nil {
		return nil, usagef("--key-dist: %v", err)
	}
	if cfg.Zipf {
		if p.dist.Skewed() {
			return nil, usagef("--zipf and --key-dist %s: give one (--zipf is --key-dist zipf:THETA)", p.dist)
		}
		if !(cfg.ZipfTheta > 0 && cfg.ZipfTheta < 1) {
			return nil, usagef("--zipf-theta %v is outside (0, 1)", cfg.ZipfTheta)
		}
		p.dist = keyspace.Dist{Kind: keyspace.Zipfian, Theta: cfg.ZipfTheta}
	}
	p.sampler = p.dist.Sampler(uint64(cfg.DBSize))
	p.redraw = p.dist.Skewed()
	if cfg.PrebuiltOpsPerThread < 0 || cfg.PrebuiltOpsPerThread > 1<<26 {
		return nil, usagef("--prebuilt-ops %d is outside 0..%d", cfg.PrebuiltOpsPerThread, 1<<26)
	}
	if cfg.Cluster {
		if err := p.planCluster(); err != nil {
			return nil, err
		}
	}
	if !cfg.StartAt.IsZero() && cfg.Runtime <= 0 {
		return nil, usagef("--start-at needs a --runtime of at least 1 s: it starts a window of that length")
	}
	if !cfg.StartAt.IsZero() && cfg.Pipeline == PipelineWindow {
		return nil, usagef("--start-at counts whole batches answered inside its window; --pipeline window has no batches to count")
	}
	if len(cfg.OpMix) > 0 {
		if err := p.planMix(); err != nil {
			return nil, err
		}
	}
	if cfg.Online {
		if err := p.planOnline(); err != nil {
			return nil, err
		}
	} else {
		if cfg.Runtime < 0 {
			return nil, usagef("--runtime %v: offline cells need a duration (-1 is for --online)", cfg.Runtime.Seconds())
		}
		if cfg.Rate != 0 || cfg.HdrOut != "" || cfg.Warmup != 0 {
			return nil, usagef("--rate, --hdr-out and --warmup-seconds need --online")
		}
		if cfg.Verify && op != opGet && op != opMGet && p.mix == nil {
			return nil, usagef("--verify checks GET and MGET values; --op %s returns none", op)
		}
	}
	switch cfg.Pipeline {
	case PipelineBatch, "":
		p.Pipeline = PipelineBatch
	case PipelineWindow:
		if cfg.Online {
			return nil, usagef("--pipeline window is an offline mode; --online keeps --itp ops in flight already")
		}
		if op.multiKey() {
			return nil, usagef("--pipeline window keeps -b single-key commands in flight; --op %s carries -b keys in one command, use --pipeline batch", op)
		}
		if cfg.Cluster {
			return nil, usagef("--pipeline window drives one server per connection; --cluster-bench routes batches by slot, use --pipeline batch")
		}
	default:
		return nil, usagef("--pipeline %q is not batch or window", cfg.Pipeline)
	}
	return p, nil
}

func (p *plan) planOnline() error {
	cfg := p.Config
	if cfg.Runtime == 0 {
		return usagef("--runtime 0 loads only, which --online does not do: give seconds, or -1 to run until interrupted")
	}
	if len(cfg.OpWorkload) == 0 || len(cfg.OpWorkload) != len(cfg.OpPercent) {
		return usagef("--op-workload has %d commands but --op-percent has %d shares", len(cfg.OpWorkload), len(cfg.OpPercent))
	}
	sum, at := 0, 0
	hasGet := false
	for i, name := range cfg.OpWorkload {
		op, ok := parseOp(name)
		if !ok || op.multiKey() {
			return usagef("--op-workload %q is not one of GET, SET, INCR, DEL, PING", name)
		}
		hasGet = hasGet || op == opGet
		pct := cfg.OpPercent[i]
		if pct < 0 {
			return usagef("--op-percent %d for %s is negative", pct, op)
		}
		sum += pct
		if sum > 100 {
			break
		}
		for range pct {
			p.workload[at] = op
			at++
		}
	}
	if sum != 100 {
		return usagef("--op-percent adds up to %d, not 100", sum)
	}
	if cfg.InFlight < 1 || cfg.InFlight > 1<<16 {
		return usagef("--itp %d is outside 1..65536", cfg.InFlight)
	}
	if cfg.Rate < 0 {
		return usagef("--rate %v is negative", cfg.Rate)
	}
	if cfg.Warmup < 0 {
		return usagef("--warmup-seconds %v is negative", cfg.Warmup.Seconds())
	}
	if cfg.ReportInterval <= 0 {
		return usagef("report interval %v is not positive", cfg.ReportInterval)
	}
	if cfg.Verify && !hasGet {
		return usagef("--verify checks GET values; --op-workload has no GET")
	}
	return nil
}
