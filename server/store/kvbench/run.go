package kvbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/server/store"
)

// Result is the JSON document of one invocation.
type Result struct {
	Load LoadResult `json:"load"`
	// Settle is the wait after the load (Config.Settle); nil without it.
	Settle *SettleResult `json:"settle,omitempty"`
	Runs   []RunResult   `json:"runs"`
	Store  StoreResult   `json:"store"`
}

// LoadResult is the load phase: every key written once.
type LoadResult struct {
	Keys      int64   `json:"keys"`
	Threads   int     `json:"threads"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// RSSBytes is the process's resident set right after the load.
	RSSBytes int64 `json:"rss_bytes"`
}

// RunResult is one timed run at one thread count. Ops counts every
// operation completed inside the window, misses included (NotFound says how
// many reads missed).
type RunResult struct {
	Threads     int     `json:"threads"`
	Seconds     float64 `json:"seconds"`
	Ops         int64   `json:"ops"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	DeviceReads int64   `json:"device_reads"`
	// CPUMicrosPerOp is the process's CPU time (user + system) over the
	// window per op: beside the rate, the figure that hardly depends on
	// what else shares the machine.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op"`
	// StealShare is the share of the host's CPU time the hypervisor took
	// during the window (/proc/stat steal); nil where not counted.
	StealShare *float64 `json:"steal_share,omitempty"`
	// PassesOpsPerSec lists every pass; the fields above are the median one.
	PassesOpsPerSec []float64 `json:"passes_ops_per_sec"`
	// FioIOPS is the median of the fio passes alternated with this run's
	// (with --compare-fio), and FioRatio is OpsPerSec / FioIOPS.
	FioIOPS   float64   `json:"fio_iops,omitempty"`
	FioRatio  float64   `json:"fio_ratio,omitempty"`
	FioPasses []float64 `json:"fio_passes_iops,omitempty"`
	Reads     int64     `json:"reads"`
	NotFound  int64     `json:"not_found"`
	Upserts   int64     `json:"upserts"`
	RMWs      int64     `json:"rmws"`
	Deletes   int64     `json:"deletes"`
}

// StoreResult is the store's state after the last run.
type StoreResult struct {
	BeginAddress    uint64 `json:"begin_address"`
	HeadAddress     uint64 `json:"head_address"`
	TailAddress     uint64 `json:"tail_address"`
	Keys            int64  `json:"keys"`
	IndexBuckets    int64  `json:"index_buckets"`
	OverflowBuckets int64  `json:"overflow_buckets"`
	SectorSize      int    `json:"sector_size"`
	Backend         string `json:"backend"`
	DeviceType      string `json:"device_type"`
	// ReadCache is the read cache's counters since the store opened
	// (zero when --readcache-memory is 0).
	ReadCache store.ReadCacheStats `json:"read_cache"`
}

// Run opens the store, loads it, runs the mix for each thread count and
// prints the results: human lines to stdout (stderr with JSON), and with
// JSON one document on stdout.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	human := stdout
	if cfg.JSON {
		human = stderr
	}
	st, err := store.Open(cfg.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	res := Result{Runs: []RunResult{}}
	if res.Load, err = load(ctx, st, cfg); err != nil {
		return err
	}
	fmt.Fprintf(human, "[Load] %d keys of %d+%d B with %d threads in %.3f s: %.0f ops/sec\n",
		res.Load.Keys, cfg.KeyLength, cfg.ValueLength, res.Load.Threads, res.Load.Seconds, res.Load.OpsPerSec)
	s := st.Stats()
	fmt.Fprintf(human, "[Store] keys %d, begin %d, head %d, tail %d (%.1f%% of the log on the device), index %d buckets + %d overflow, RSS %.1f MiB\n",
		s.Keys, s.BeginAddress, s.HeadAddress, s.TailAddress, onDevice(s), s.IndexBuckets, s.OverflowBuckets, float64(res.Load.RSSBytes)/(1<<20))
	if cfg.Runtime > 0 && cfg.Settle {
		if res.Settle, err = awaitDisk(ctx, st, cfg, human); err != nil {
			return err
		}
	}
	if cfg.Runtime > 0 && cfg.CPUProfile != nil {
		if err := pprof.StartCPUProfile(cfg.CPUProfile); err != nil {
			return fmt.Errorf("kvbench: start the CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.Runtime > 0 {
		for _, threads := range cfg.Threads {
			if ctx.Err() != nil {
				break
			}
			r, err := runPasses(ctx, st, cfg, threads, human)
			if err != nil {
				return err
			}
			res.Runs = append(res.Runs, r)
			fmt.Fprintf(human, "-t %d: [Total time]: %.2f ms for %d ops\n", r.Threads, r.Seconds*1e3, r.Ops)
			fmt.Fprintf(human, "-t %d: [Throughput]: %.0f ops/sec (%d device reads, %.2f per op; %d reads missed; %.3f CPU µs per op)\n",
				r.Threads, r.OpsPerSec, r.DeviceReads, float64(r.DeviceReads)/max(float64(r.Ops), 1), r.NotFound, r.CPUMicrosPerOp)
			if rc := st.Stats().ReadCache; rc.Bytes > 0 {
				fmt.Fprintf(human, "-t %d: [ReadCache]: %d records (%d B of records in %d B), since open: %d hits, %d misses (%.1f %% hits), %d admissions, %d evictions, %d invalidations, %d refusals\n",
					r.Threads, rc.Records, rc.RecordBytes, rc.Bytes, rc.Hits, rc.Misses, 100*float64(rc.Hits)/max(float64(rc.Hits+rc.Misses), 1),
					rc.Admissions, rc.Evictions, rc.Invalidations, rc.Refusals)
			}
			if s := r.StealShare; s != nil && *s >= cpustat.NoticeableSteal {
				fmt.Fprintf(human, "-t %d: [Host]: the hypervisor took %.1f %% of this host's CPU time (steal) during the window\n", r.Threads, 100**s)
			}
			if cfg.CompareFio {
				fmt.Fprintf(human, "-t %d: [fio]: %.0f IOPS (io_uring, %d B, 1 job, iodepth %d; median of %d); kv/fio %.3f\n",
					r.Threads, r.FioIOPS, cfg.FioBlockBytes, cfg.FioDepth, len(r.FioPasses), r.FioRatio)
			}
		}
	}
	if cfg.CompareFio {
		os.Remove(fioFile(cfg))
	}
	s = st.Stats()
	res.Store = StoreResult{
		BeginAddress: s.BeginAddress, HeadAddress: s.HeadAddress, TailAddress: s.TailAddress, Keys: s.Keys,
		IndexBuckets: s.IndexBuckets, OverflowBuckets: s.OverflowBuckets, SectorSize: s.SectorSize,
		Backend: s.Backend, DeviceType: s.DeviceType, ReadCache: s.ReadCache,
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("kvbench: write the JSON result: %w", err)
		}
	}
	return ctx.Err()
}

func onDevice(s store.Stats) float64 {
	if s.TailAddress <= s.BeginAddress {
		return 0
	}
	return 100 * float64(s.HeadAddress-s.BeginAddress) / float64(s.TailAddress-s.BeginAddress)
}

// load writes keys 0..DBSize-1 exactly once, split into contiguous ranges
// over LoadThreads sessions, and checks the store counts them all.
func load(ctx context.Context, st *store.Store, cfg Config) (LoadResult, error) {
	threads := int(min(int64(cfg.LoadThreads), cfg.DBSize))
	errs := make([]error, threads)
	var wg sync.WaitGroup
	start := time.Now()
	for t := range threads {
		lo, hi := keyspace.Split(cfg.DBSize, threads, t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := st.NewSession()
			defer sess.Close()
			key := make([]byte, 0, cfg.KeyLength)
			val := make([]byte, cfg.ValueLength)
			for k := lo; k < hi; k++ {
				if k%4096 == 0 && ctx.Err() != nil {
					errs[t] = ctx.Err()
					return
				}
				key = keyspace.AppendKey(key[:0], uint64(k), cfg.KeyLength)
				fillValue(val, uint64(k))
				if err := sess.Upsert(key, val); err != nil {
					errs[t] = fmt.Errorf("kvbench: load key %d: %w", k, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	for _, err := range errs {
		if err != nil {
			return LoadResult{}, err
		}
	}
	if got := st.Stats().Keys; got != cfg.DBSize {
		return LoadResult{}, fmt.Errorf("kvbench: after loading %d keys the store counts %d", cfg.DBSize, got)
	}
	return LoadResult{Keys: cfg.DBSize, Threads: threads, Seconds: secs, OpsPerSec: float64(cfg.DBSize) / secs, RSSBytes: rssBytes()}, nil
}

// rssBytes reads VmRSS from /proc/self/status (0 when it cannot).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// worker is one thread of a run, with its own session and buffers.
type worker struct {
	cfg    *Config
	sess   *store.Session
	rng    *rand.Rand // draws the keys (with keys) and the ops of the mix
	keys   keyspace.Sampler
	stop   *atomic.Bool
	counts RunResult
	// counting is false while draining after the window closed.
	counting bool
	key      []byte
	val      []byte
	dst      []byte
	want     []byte
	err      error
}

// delivered takes the result of one read (token = key index).
func (w *worker) delivered(k uint64, v []byte, st store.Status, err error) {
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("kvbench: read key %d: %w", k, err)
		}
		return
	}
	if w.cfg.Verify && st == store.Found {
		fillValue(w.want, k)
		if !bytes.Equal(v, w.want) && w.err == nil {
			w.err = fmt.Errorf("kvbench: key %d read back %q, want %q", k, v, w.want)
		}
	}
	if !w.counting {
		return
	}
	w.counts.Ops++
	w.counts.Reads++
	if st == store.NotFound {
		w.counts.NotFound++
	}
}

// bump is the RMW of the mix: the value with its last byte advanced, or the
// loaded value when the key was deleted.
func (w *worker) bump(k uint64) func(old []byte, exists bool, dst []byte) ([]byte, error) {
	return func(old []byte, exists bool, dst []byte) ([]byte, error) {
		if !exists {
			dst = append(dst, w.val...)
			fillValue(dst, k)
			return dst, nil
		}
		dst = append(dst, old...)
		if n := len(dst); n > 0 {
			dst[n-1] = 'a' + (dst[n-1]-'a'+1)%26
		}
		return dst, nil
	}
}

func (w *worker) run() {
	r := w.cfg.RUMD
	fn := w.delivered
	for !w.stop.Load() && w.err == nil {
		for w.sess.Pending() < w.cfg.InFlight && !w.stop.Load() {
			k := w.keys.Next(w.rng)
			w.key = keyspace.AppendKey(w.key[:0], k, w.cfg.KeyLength)
			op := int(w.rng.Uint32N(100))
			var err error
			switch {
			case op < r[0]:
				var v []byte
				var st store.Status
				v, st, err = w.sess.Read(w.key, w.dst[:0], k)
				if err == nil && st != store.Pending {
					fn(k, v, st, nil)
				}
			case op < r[0]+r[1]:
				fillValue(w.val, k)
				if err = w.sess.Upsert(w.key, w.val); err == nil {
					w.counts.Ops++
					w.counts.Upserts++
				}
			case op < r[0]+r[1]+r[2]:
				if _, err = w.sess.RMW(w.key, w.bump(k)); err == nil {
					w.counts.Ops++
					w.counts.RMWs++
				}
			default:
				if _, err = w.sess.Delete(w.key); err == nil {
					w.counts.Ops++
					w.counts.Deletes++
				}
			}
			if err != nil {
				w.err = fmt.Errorf("kvbench: operation on key %d: %w", k, err)
				return
			}
		}
		if err := w.sess.CompleteAtLeast(1, fn); err != nil {
			w.err = err
			return
		}
	}
}

func fioFile(cfg Config) string { return filepath.Join(cfg.Store.LogDir, "tierbench-fio.0") }

// runPasses runs Passes passes at one thread count, alternating with fio
// when asked (odd passes run fio first, so that a drift in what others do
// to the disk does not always favour one side), and returns the median pass.
func runPasses(ctx context.Context, st *store.Store, cfg Config, threads int, human io.Writer) (RunResult, error) {
	var passes []RunResult
	var fios []float64
	runFio := func() error {
		f, err := fio.Run(ctx, fio.Job{Filenames: []string{fioFile(cfg)}, FileBytes: cfg.FioFileBytes, BlockBytes: cfg.FioBlockBytes,
			Jobs: 1, IODepth: cfg.FioDepth, Engine: "io_uring", RuntimeSeconds: int(cfg.Runtime / time.Second), Registered: true, Batched: true})
		if err != nil {
			return fmt.Errorf("kvbench: --compare-fio: %w", err)
		}
		fios = append(fios, f.IOPS)
		return nil
	}
	for p := range cfg.Passes {
		fioFirst := cfg.CompareFio && p%2 == 1
		if fioFirst {
			if err := runFio(); err != nil {
				return RunResult{}, err
			}
		}
		r, err := runMix(ctx, st, cfg, threads)
		if err != nil {
			return RunResult{}, err
		}
		if cfg.Passes > 1 {
			fmt.Fprintf(human, "-t %d: pass %d: %.0f ops/sec\n", threads, p+1, r.OpsPerSec)
		}
		passes = append(passes, r)
		if cfg.CompareFio && !fioFirst {
			if err := runFio(); err != nil {
				return RunResult{}, err
			}
		}
	}
	all := make([]float64, len(passes))
	for i, r := range passes {
		all[i] = r.OpsPerSec
	}
	slices.SortFunc(passes, func(a, b RunResult) int {
		switch {
		case a.OpsPerSec < b.OpsPerSec:
			return -1
		case a.OpsPerSec > b.OpsPerSec:
			return 1
		}
		return 0
	})
	med := passes[len(passes)/2]
	med.PassesOpsPerSec = all
	if len(fios) > 0 {
		med.FioPasses = slices.Clone(fios)
		slices.Sort(fios)
		med.FioIOPS = fios[len(fios)/2]
		if med.FioIOPS > 0 {
			med.FioRatio = med.OpsPerSec / med.FioIOPS
		}
	}
	return med, nil
}

// runMix runs the mix with threads workers for Runtime and counts what
// completed inside the window.
func runMix(ctx context.Context, st *store.Store, cfg Config, threads int) (RunResult, error) {
	theta := 0.0 // uniform
	if cfg.Zipf {
		theta = cfg.Theta
	}
	keys := keyspace.NewSampler(uint64(cfg.DBSize), theta)
	var stop atomic.Bool
	workers := make([]*worker, threads)
	for i := range workers {
		workers[i] = &worker{
			cfg:      &cfg,
			sess:     st.NewSession(),
			rng:      rand.New(rand.NewPCG(cfg.Seed, uint64(threads)<<32|uint64(i))),
			keys:     keys,
			stop:     &stop,
			counting: true,
			key:      make([]byte, 0, cfg.KeyLength),
			val:      make([]byte, cfg.ValueLength),
			dst:      make([]byte, 0, cfg.ValueLength),
			want:     make([]byte, cfg.ValueLength),
		}
	}
	before := st.Stats()
	cpu0 := processCPUSeconds()
	stolen := cpustat.StartWatch("/")
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	timer := time.NewTimer(cfg.Runtime)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	stop.Store(true)
	// The window closes here: the workers see stop within one op.
	secs := time.Since(start).Seconds()
	cpu := processCPUSeconds() - cpu0
	steal := stolen.StealShare()
	after := st.Stats()
	wg.Wait()
	res := RunResult{Threads: threads, Seconds: secs, DeviceReads: after.CompletedReads - before.CompletedReads, StealShare: steal}
	var firstErr error
	for _, w := range workers {
		// Reads still in flight finish uncounted.
		w.counting = false
		if err := w.sess.CompletePending(true, w.delivered); err != nil && firstErr == nil {
			firstErr = err
		}
		w.sess.Close()
		if w.err != nil && firstErr == nil {
			firstErr = w.err
		}
		c := w.counts
		res.Ops += c.Ops
		res.Reads += c.Reads
		res.NotFound += c.NotFound
		res.Upserts += c.Upserts
		res.RMWs += c.RMWs
		res.Deletes += c.Deletes
	}
	if firstErr != nil {
		return res, firstErr
	}
	res.OpsPerSec = float64(res.Ops) / secs
	if res.Ops > 0 {
		res.CPUMicrosPerOp = cpu / float64(res.Ops) * 1e6
	}
	return res, nil
}

// processCPUSeconds is the user + system CPU time of this process so far.
func processCPUSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
