package device

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/fio"
)

// BenchConfig is the shape of one raw random-read benchmark (the
// reference's Device.benchmark): Threads workers each keep QueueDepth reads
// of BlockBytes in flight for RuntimeSeconds, over Files files of
// FileBytes in Dir.
type BenchConfig struct {
	Backend        string // libaio | uring | localmemory
	Dir            string // the file set: <Dir>/segment.<N>
	FileBytes      int64
	Files          int
	BlockBytes     int
	Threads        int
	QueueDepth     int
	RuntimeSeconds int
	Verify         bool // check the pattern of every read
	JSON           bool // RunBench prints one JSON document instead of text
	CompareFio     bool // run the real fio with the same shape on the same files after each pass
	Passes         int  // timed passes (each followed by its fio pass); results are the medians; 0 = 1
	// FioAlongside runs each fio pass at the same time as the tierbench
	// pass instead of after it: on a disk others also use, both then meet
	// the same load, and the ratio says which path wins more of the device
	// (1.0 = equally efficient) rather than comparing two different moments.
	FioAlongside bool

	// Device knobs, passed to Config; zero picks the device defaults.
	SectorSize        int
	ThrottleLimit     int
	CompletionThreads int
	IOContexts        int
	// InlineCompletion passes Config.InlineCompletion: on localmemory each
	// worker then runs its own loop, resubmitting the reads that completed
	// during its last Submit as one batch.
	InlineCompletion bool
}

// LatencyMicros are completion latencies in microseconds.
type LatencyMicros struct {
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// FioResult is the fio side of a --compare-fio run.
type FioResult struct {
	Version    string  `json:"version"`
	Engine     string  `json:"engine"`
	IOPS       float64 `json:"iops"`
	MBPerSec   float64 `json:"mb_per_sec"`
	ClatP50Us  float64 `json:"clat_p50_us"`
	ClatP99Us  float64 `json:"clat_p99_us"`
	ClatP999Us float64 `json:"clat_p999_us"`
	UsrCPU     float64 `json:"usr_cpu"`
	SysCPU     float64 `json:"sys_cpu"`
	// CPUMicrosPerOp is fio's (usr_cpu + sys_cpu) × jobs per op,
	// comparable to BenchResult.CPUMicrosPerOp.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op"`
}

// BenchResult is what Bench measured. Only successful (and, with Verify,
// verified) completions inside the timed window count as ops.
type BenchResult struct {
	Backend        string        `json:"backend"`
	Device         string        `json:"device"` // what the device really set up (Describe)
	Block          int           `json:"block"`
	Threads        int           `json:"threads"`
	QD             int           `json:"qd"`
	Files          int           `json:"files"`
	FileBytes      int64         `json:"file_bytes"`
	Seconds        float64       `json:"seconds"`
	Ops            int64         `json:"ops"`
	Errors         int64         `json:"errors"`
	Verify         bool          `json:"verify"`
	VerifyFailures int64         `json:"verify_failures"`
	FirstError     string        `json:"first_error,omitempty"`
	IOPS           float64       `json:"iops"`
	MBPerSec       float64       `json:"mb_per_sec"` // 10^6 bytes per second
	LatencyUs      LatencyMicros `json:"latency_us"`
	MaxInFlight    int64         `json:"max_in_flight"`
	UsrCPU         float64       `json:"usr_cpu"` // percent of one CPU, this process, during the timed window
	SysCPU         float64       `json:"sys_cpu"`
	// CPUMicrosPerOp is CPU time (user + system) per completed op: unlike
	// IOPS it hardly depends on what else shares the disk.
	CPUMicrosPerOp float64      `json:"cpu_us_per_op"`
	Passes         []PassResult `json:"passes"` // every pass; the fields above are the median pass
	Fio            *FioResult   `json:"fio,omitempty"`
	FioAlongside   bool         `json:"fio_alongside,omitempty"` // fio ran at the same time, sharing the disk
	RatioToFio     float64      `json:"ratio_to_fio,omitempty"`
}

// ErrBenchConfig wraps every refusal of a BenchConfig (a usage error).
var ErrBenchConfig = errors.New("device bench: bad configuration")

func (cfg BenchConfig) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBenchConfig, fmt.Sprintf(format, a...))
	}
	switch {
	case cfg.Backend != BackendLibaio && cfg.Backend != BackendUring && cfg.Backend != BackendLocalMemory:
		return bad("backend %q, want libaio, uring or localmemory", cfg.Backend)
	case cfg.Backend != BackendLocalMemory && cfg.Dir == "":
		return bad("--dir is required for the %s backend", cfg.Backend)
	case cfg.BlockBytes <= 0 || cfg.BlockBytes%512 != 0:
		return bad("block %d bytes, want a positive multiple of 512", cfg.BlockBytes)
	case cfg.FileBytes <= 0 || cfg.FileBytes%int64(cfg.BlockBytes) != 0:
		return bad("file size %d bytes, want a positive multiple of the block size %d", cfg.FileBytes, cfg.BlockBytes)
	case cfg.Files <= 0 || cfg.Files > 4096:
		return bad("%d files, want 1 to 4096", cfg.Files)
	case cfg.Threads <= 0 || cfg.Threads > 4096:
		return bad("%d threads, want 1 to 4096", cfg.Threads)
	case cfg.QueueDepth <= 0 || cfg.QueueDepth > 65536:
		return bad("queue depth %d, want 1 to 65536", cfg.QueueDepth)
	case cfg.Passes < 0 || cfg.Passes > 100:
		return bad("%d passes, want 1 to 100", cfg.Passes)
	case cfg.RuntimeSeconds <= 0:
		return bad("runtime %d s, want at least 1", cfg.RuntimeSeconds)
	case cfg.FioAlongside && !cfg.CompareFio:
		return bad("--fio-alongside needs --compare-fio")
	case cfg.CompareFio && cfg.Backend == BackendLocalMemory:
		return bad("--compare-fio needs a file backend (libaio or uring); fio cannot read the localmemory device")
	}
	return nil
}

// benchPrepareBit marks the user data of the file-set writes, which the
// benchmark's completion function routes to the preparation phase.
const benchPrepareBit = 1 << 63

// prepareCompletion is the completion of one preparation IO: which of the
// preparation buffers is free again.
type prepareCompletion struct {
	buf int
	err error
}

// benchWorker is one of the Threads workers: QueueDepth slots, each with its
// own buffer and a one-request slice reused for every resubmission.
type benchWorker struct {
	bufs    []byte // QueueDepth × BlockBytes, from AlignedBuffer
	reqs    [][1]Request
	startNs []int64 // submit time of each slot, on the bench clock

	mu             sync.Mutex // guards everything below: completions of one worker arrive on several reapers
	rng            *rand.Rand
	hist           *hdrhistogram.Histogram
	ops, errs      int64
	verifyFailures int64
	firstErr       error
	inFlight       int

	// ready holds the slots completed inline during the worker's current
	// Submit, for its loop to resubmit (InlineCompletion on localmemory
	// only; touched by the worker's goroutine alone).
	ready []uint32
}

// bench is one run of the benchmark.
type bench struct {
	cfg         BenchConfig
	dev         Device
	workers     []*benchWorker
	blocks      uint64 // block-sized slots in the whole file set
	clock       time.Time
	deadlineNs  atomic.Int64 // completions at or after it are not counted and not resubmitted
	inline      bool         // the device completes on the submitter: workers loop (runInline)
	prepareDone chan prepareCompletion
	outstanding sync.WaitGroup
}

func (b *bench) nowNs() int64 { return int64(time.Since(b.clock)) }

// onComplete is the device's completion function. For the timed phase it
// records the read and immediately resubmits the slot from the completion
// goroutine, as fio does from its reaping loop: no handoff to another
// goroutine per request. The submit cannot wait on the throttle because
// Threads × QueueDepth is checked against it.
func (b *bench) onComplete(ud uint64, n int, err error) {
	if ud&benchPrepareBit != 0 {
		b.prepareDone <- prepareCompletion{buf: int(ud &^ benchPrepareBit), err: err}
		return
	}
	now := b.nowNs()
	w := b.workers[ud>>32]
	slot := ud & 0xffffffff
	r := &w.reqs[slot][0]
	bad := false
	if err == nil && b.cfg.Verify {
		bad = !patternOK(r.Buf, r.Offset)
	}
	counted := now < b.deadlineNs.Load()
	w.mu.Lock()
	if counted {
		switch {
		case err != nil:
			w.errs++
			if w.firstErr == nil {
				w.firstErr = err
			}
		case bad:
			w.verifyFailures++
			w.errs++
			if w.firstErr == nil {
				w.firstErr = fmt.Errorf("device bench: read of %d bytes at offset %d does not hold the pattern written there", len(r.Buf), r.Offset)
			}
		default:
			w.ops++
			w.hist.RecordValue(max(now-w.startNs[slot], 1))
		}
	}
	resubmit := counted
	if b.inline {
		// The worker's own goroutine, inside its Submit: its loop sends
		// the slot again.
		if resubmit {
			r.Offset = w.rng.Uint64N(b.blocks) * uint64(b.cfg.BlockBytes)
			w.startNs[slot] = now
			w.ready = append(w.ready, uint32(slot))
		} else {
			w.inFlight--
			b.outstanding.Done()
		}
		w.mu.Unlock()
		return
	}
	if resubmit {
		r.Offset = w.rng.Uint64N(b.blocks) * uint64(b.cfg.BlockBytes)
		w.startNs[slot] = now // the same clock read: one nanotime per completion
	} else {
		w.inFlight--
	}
	w.mu.Unlock()
	if !resubmit {
		b.outstanding.Done()
		return
	}
	if _, err := b.dev.Submit(w.reqs[slot][:]); err != nil {
		w.mu.Lock()
		w.errs++
		if w.firstErr == nil {
			w.firstErr = err
		}
		w.inFlight--
		w.mu.Unlock()
		b.outstanding.Done()
	}
}

// Bench prepares or reuses the file set, runs the timed random reads, and,
// with CompareFio, the real fio at the same shape on the same files.
// Progress lines go to progress.
func Bench(ctx context.Context, cfg BenchConfig, progress io.Writer) (BenchResult, error) {
	if cfg.Passes == 0 {
		cfg.Passes = 1
	}
	if err := cfg.check(); err != nil {
		return BenchResult{}, err
	}
	b := &bench{cfg: cfg, clock: time.Now(), prepareDone: make(chan prepareCompletion, 64)}
	b.blocks = uint64(cfg.FileBytes) / uint64(cfg.BlockBytes) * uint64(cfg.Files)
	b.deadlineNs.Store(1<<63 - 1)
	dev, err := Open(Config{
		Backend: cfg.Backend, Dir: cfg.Dir, SegmentBytes: uint64(cfg.FileBytes), SectorSize: cfg.SectorSize,
		ThrottleLimit: cfg.ThrottleLimit, CompletionThreads: cfg.CompletionThreads, IOContexts: cfg.IOContexts,
		InlineCompletion: cfg.InlineCompletion, OnComplete: b.onComplete,
	})
	if err != nil {
		return BenchResult{}, err
	}
	b.dev = dev
	b.inline = cfg.InlineCompletion && cfg.Backend == BackendLocalMemory
	defer dev.Close()
	if cfg.Backend == BackendLocalMemory {
		// The localmemory file set lives in RAM: refuse one that cannot fit
		// rather than let the kernel kill the run halfway.
		total := uint64(cfg.FileBytes) * uint64(cfg.Files)
		if avail, err := memAvailableBytes("/proc/meminfo"); err == nil && total > avail/10*9 {
			return BenchResult{}, fmt.Errorf("%w: the localmemory file set needs %d MiB of RAM, %d MiB are available",
				ErrBenchConfig, total>>20, avail>>20)
		}
	}
	if limit := dev.(interface{ throttleLimit() int }).throttleLimit(); cfg.Threads*cfg.QueueDepth > limit {
		return BenchResult{}, fmt.Errorf("%w: threads × qd = %d exceeds the device's throttle limit %d; raise --device-throttle-limit",
			ErrBenchConfig, cfg.Threads*cfg.QueueDepth, limit)
	}
	if cfg.BlockBytes%dev.SectorSize() != 0 {
		return BenchResult{}, fmt.Errorf("%w: block %d bytes is not a multiple of the device's sector size %d",
			ErrBenchConfig, cfg.BlockBytes, dev.SectorSize())
	}
	if err := b.prepare(ctx, progress); err != nil {
		return BenchResult{}, err
	}
	engine := "io_uring"
	if cfg.Backend == BackendLibaio {
		engine = "libaio"
	}
	names := make([]string, cfg.Files)
	for i := range names {
		names[i] = segmentPath(cfg.Dir, uint64(i))
	}
	// Passes alternate tierbench and fio, so that a change in the load
	// others put on the disk hits both sides alike; each side reports its
	// median pass.
	var runs []BenchResult
	var fios []FioResult
	runFio := func() (FioResult, error) {
		f, err := fio.Run(ctx, fio.Job{Filenames: names, FileBytes: cfg.FileBytes, BlockBytes: cfg.BlockBytes,
			Jobs: cfg.Threads, IODepth: cfg.QueueDepth, Engine: engine, RuntimeSeconds: cfg.RuntimeSeconds})
		if err != nil {
			return FioResult{}, fmt.Errorf("device bench: --compare-fio (fio %s, bs %d, %d jobs, iodepth %d): %w",
				engine, cfg.BlockBytes, cfg.Threads, cfg.QueueDepth, err)
		}
		return FioResult{Version: f.Version, Engine: f.Engine, IOPS: f.IOPS, MBPerSec: f.BandwidthKiBps * 1024 / 1e6,
			ClatP50Us: f.ClatUs.P50, ClatP99Us: f.ClatUs.P99, ClatP999Us: f.ClatUs.P999, UsrCPU: f.UsrCPU, SysCPU: f.SysCPU,
			// fio's group-reported CPU is the average per job (its times
			// and runtimes are both summed over the jobs).
			CPUMicrosPerOp: cpuMicrosPerOp((f.UsrCPU+f.SysCPU)*float64(cfg.Threads), f.IOPS)}, nil
	}
	for p := range cfg.Passes {
		// Odd passes run fio first, so that neither side always follows
		// the other (a drift in the disk's load would favour one).
		fioFirst := cfg.CompareFio && !cfg.FioAlongside && p%2 == 1
		var f FioResult
		var err error
		if fioFirst {
			if f, err = runFio(); err != nil {
				return b.summary(runs, fios), err
			}
		}
		type fioOutcome struct {
			res FioResult
			err error
		}
		var alongside chan fioOutcome
		if cfg.FioAlongside {
			alongside = make(chan fioOutcome, 1)
			go func() {
				r, err := runFio()
				alongside <- fioOutcome{r, err}
			}()
		}
		res, err := b.run(ctx)
		if alongside != nil {
			o := <-alongside
			if err == nil && o.err != nil {
				return b.summary(runs, fios), o.err
			}
			f = o.res
		}
		if err != nil {
			if res.Seconds > 0 { // interrupted: keep what the pass measured
				runs = append(runs, res)
			}
			return b.summary(runs, fios), err
		}
		runs = append(runs, res)
		if cfg.CompareFio && !fioFirst && !cfg.FioAlongside {
			if f, err = runFio(); err != nil {
				return b.summary(runs, fios), err
			}
		}
		line := fmt.Sprintf("pass %d/%d: tierbench %s %s IOPS", p+1, cfg.Passes, cfg.Backend, groupThousands(res.IOPS))
		if cfg.CompareFio {
			fios = append(fios, f)
			order := "tierbench first"
			switch {
			case cfg.FioAlongside:
				order = "at the same time"
			case fioFirst:
				order = "fio first"
			}
			line += fmt.Sprintf(", fio %s %s IOPS (%s)", engine, groupThousands(f.IOPS), order)
		}
		fmt.Fprintln(progress, line)
	}
	return b.summary(runs, fios), nil
}

// summary is the median pass of runs, with every pass listed and the
// median fio pass beside it.
func (b *bench) summary(runs []BenchResult, fios []FioResult) BenchResult {
	if len(runs) == 0 {
		return BenchResult{}
	}
	res := medianBy(runs, func(r BenchResult) float64 { return r.IOPS })
	res.Device = b.dev.(Describer).Describe()
	res.FioAlongside = b.cfg.FioAlongside && len(fios) > 0
	for i, r := range runs {
		pr := PassResult{IOPS: r.IOPS}
		if i < len(fios) {
			pr.FioIOPS = fios[i].IOPS
			if pr.FioIOPS > 0 {
				pr.Ratio = r.IOPS / pr.FioIOPS
			}
		}
		res.Passes = append(res.Passes, pr)
	}
	if len(fios) > 0 {
		f := medianBy(fios, func(f FioResult) float64 { return f.IOPS })
		res.Fio = &f
		if f.IOPS > 0 {
			res.RatioToFio = res.IOPS / f.IOPS
		}
	}
	return res
}

// PassResult is one pass of a multi-pass run.
type PassResult struct {
	IOPS    float64 `json:"iops"`
	FioIOPS float64 `json:"fio_iops,omitempty"`
	Ratio   float64 `json:"ratio_to_fio,omitempty"`
}

// medianBy returns the element of xs with the median key (the lower middle
// one for an even count).
func medianBy[T any](xs []T, key func(T) float64) T {
	sorted := slices.Clone(xs)
	slices.SortFunc(sorted, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return sorted[(len(sorted)-1)/2]
}

// throttleLimit is the in-flight cap the device really applies.
func (c *core) throttleLimit() int { return len(c.slots) }

// prepare makes sure every file of the set holds the pattern: a file of the
// right size whose first and last blocks verify is reused; any other is
// rewritten through the device with O_DIRECT writes.
func (b *bench) prepare(ctx context.Context, progress io.Writer) error {
	cfg := b.cfg
	const chunkBytes = 1 << 20
	chunk := min(int64(chunkBytes), cfg.FileBytes)
	for chunk%int64(cfg.BlockBytes) != 0 || cfg.FileBytes%chunk != 0 {
		chunk -= int64(b.dev.SectorSize())
	}
	const depth = 8
	buf, err := AlignedBuffer(int(chunk) * depth)
	if err != nil {
		return err
	}
	defer FreeBuffer(buf)
	var todo []int
	for i := range cfg.Files {
		if cfg.Backend != BackendLocalMemory && b.fileVerifies(i, buf[:cfg.BlockBytes]) {
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		fmt.Fprintf(progress, "reusing the file set in %s (%d × %d bytes, pattern checked)\n", cfg.Dir, cfg.Files, cfg.FileBytes)
		return nil
	}
	if cfg.Backend != BackendLocalMemory {
		// A leftover file of another size would otherwise keep its old
		// length (O_DIRECT writes never shrink a file) and fail the reuse
		// check forever.
		for _, f := range todo {
			if err := os.Truncate(segmentPath(cfg.Dir, uint64(f)), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("device bench: truncate %s: %w", segmentPath(cfg.Dir, uint64(f)), err)
			}
		}
	}
	total := int64(len(todo)) * cfg.FileBytes
	fmt.Fprintf(progress, "preparing %d of %d files (%d MiB) with the verifiable pattern\n", len(todo), cfg.Files, total>>20)
	var written int64
	lastReport := time.Now()
	start := time.Now()
	// Completions arrive in any order, so a buffer is reused only once its
	// own write has completed.
	free := make([]int, 0, depth)
	for i := range depth {
		free = append(free, i)
	}
	wait := func() error {
		c := <-b.prepareDone
		free = append(free, c.buf)
		return c.err
	}
	drain := func() error {
		var first error
		for len(free) < depth {
			if err := wait(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	for _, f := range todo {
		for off := int64(0); off < cfg.FileBytes; off += chunk {
			if err := ctx.Err(); err != nil {
				drain()
				return err
			}
			if len(free) == 0 {
				if err := wait(); err != nil {
					drain()
					return fmt.Errorf("device bench: prepare: %w", err)
				}
			}
			i := free[len(free)-1]
			free = free[:len(free)-1]
			p := buf[i*int(chunk) : (i+1)*int(chunk)]
			devOff := uint64(f)*uint64(cfg.FileBytes) + uint64(off)
			stampPattern(p, devOff)
			if _, err := b.dev.Submit([]Request{{Op: OpWrite, Offset: devOff, Buf: p, UserData: benchPrepareBit | uint64(i)}}); err != nil {
				free = append(free, i)
				drain()
				return fmt.Errorf("device bench: prepare: %w", err)
			}
			written += chunk
			if time.Since(lastReport) >= time.Second {
				lastReport = time.Now()
				fmt.Fprintf(progress, "  prepared %d of %d MiB (%.0f%%, %.0f MB/s)\n", written>>20, total>>20,
					100*float64(written)/float64(total), float64(written)/1e6/time.Since(start).Seconds())
			}
		}
	}
	if err := drain(); err != nil {
		return fmt.Errorf("device bench: prepare: %w", err)
	}
	fmt.Fprintf(progress, "  prepared %d MiB in %.1f s\n", total>>20, time.Since(start).Seconds())
	return nil
}

// fileVerifies reports whether file i has the right size and its first and
// last blocks hold the pattern.
func (b *bench) fileVerifies(i int, buf []byte) bool {
	st, err := os.Stat(segmentPath(b.cfg.Dir, uint64(i)))
	if err != nil || st.Size() != b.cfg.FileBytes {
		return false
	}
	base := uint64(i) * uint64(b.cfg.FileBytes)
	for _, off := range []uint64{base, base + uint64(b.cfg.FileBytes) - uint64(len(buf))} {
		if _, err := b.dev.Submit([]Request{{Op: OpRead, Offset: off, Buf: buf, UserData: benchPrepareBit}}); err != nil {
			return false
		}
		if c := <-b.prepareDone; c.err != nil || !patternOK(buf, off) {
			return false
		}
	}
	return true
}

// run is the timed phase.
func (b *bench) run(ctx context.Context) (BenchResult, error) {
	cfg := b.cfg
	res := BenchResult{Backend: cfg.Backend, Block: cfg.BlockBytes, Threads: cfg.Threads, QD: cfg.QueueDepth,
		Files: cfg.Files, FileBytes: cfg.FileBytes, Verify: cfg.Verify}
	// The previous pass has fully drained (outstanding.Wait), so no
	// completion can still look up one of its workers.
	b.workers = b.workers[:0]
	for i := range cfg.Threads {
		buf, err := AlignedBuffer(cfg.QueueDepth * cfg.BlockBytes)
		if err != nil {
			return res, err
		}
		defer FreeBuffer(buf)
		w := &benchWorker{bufs: buf, reqs: make([][1]Request, cfg.QueueDepth), startNs: make([]int64, cfg.QueueDepth),
			rng:  rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano()))),
			hist: hdrhistogram.New(1, int64(time.Minute), 3)}
		for s := range w.reqs {
			w.reqs[s][0] = Request{Op: OpRead, Buf: buf[s*cfg.BlockBytes : (s+1)*cfg.BlockBytes], UserData: uint64(i)<<32 | uint64(s)}
		}
		b.workers = append(b.workers, w)
	}
	var ruBefore, ruAfter unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ruBefore)
	startNs := b.nowNs()
	b.deadlineNs.Store(startNs + int64(cfg.RuntimeSeconds)*int64(time.Second))
	// Each worker fills its queue with one batched Submit; after that its
	// slots are resubmitted by the completion path until the deadline, or,
	// on an inline device, by the worker's own loop.
	var wg sync.WaitGroup
	for _, w := range b.workers {
		b.outstanding.Add(cfg.QueueDepth)
		w.inFlight = cfg.QueueDepth
		wg.Add(1)
		go func() {
			defer wg.Done()
			reqs := make([]Request, cfg.QueueDepth)
			w.ready = make([]uint32, 0, cfg.QueueDepth)
			w.mu.Lock()
			for s := range reqs {
				w.reqs[s][0].Offset = w.rng.Uint64N(b.blocks) * uint64(cfg.BlockBytes)
				w.startNs[s] = b.nowNs()
				reqs[s] = w.reqs[s][0]
			}
			w.mu.Unlock()
			n, err := b.dev.Submit(reqs)
			for err == nil && b.inline && len(w.ready) > 0 {
				// Completions ran inside that Submit and left their
				// slots in ready: send them again as one batch.
				reqs = reqs[:0]
				for _, s := range w.ready {
					reqs = append(reqs, w.reqs[s][0])
				}
				w.ready = w.ready[:0]
				n, err = b.dev.Submit(reqs)
			}
			if err != nil {
				w.mu.Lock()
				w.errs++
				if w.firstErr == nil {
					w.firstErr = err
				}
				w.inFlight -= len(reqs) - n
				w.mu.Unlock()
				for range len(reqs) - n {
					b.outstanding.Done()
				}
			}
		}()
	}
	// The workers of an inline device run until the deadline; the others
	// return once their queues are full.
	if !b.inline {
		wg.Wait()
	}
	select {
	case <-ctx.Done():
		b.deadlineNs.Store(b.nowNs())
	case <-time.After(time.Duration(b.deadlineNs.Load() - b.nowNs())):
	}
	wg.Wait()
	endNs := b.deadlineNs.Load()
	unix.Getrusage(unix.RUSAGE_SELF, &ruAfter)
	b.outstanding.Wait()

	hist := hdrhistogram.New(1, int64(time.Minute), 3)
	for _, w := range b.workers {
		w.mu.Lock()
		res.Ops += w.ops
		res.Errors += w.errs
		res.VerifyFailures += w.verifyFailures
		if w.firstErr != nil && res.FirstError == "" {
			res.FirstError = w.firstErr.Error()
		}
		hist.Merge(w.hist)
		w.mu.Unlock()
	}
	res.Seconds = float64(endNs-startNs) / 1e9
	res.IOPS = float64(res.Ops) / res.Seconds
	res.MBPerSec = res.IOPS * float64(cfg.BlockBytes) / 1e6
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	res.LatencyUs = LatencyMicros{Min: us(hist.Min()), P50: us(hist.ValueAtQuantile(50)), P99: us(hist.ValueAtQuantile(99)),
		P999: us(hist.ValueAtQuantile(99.9)), Max: us(hist.Max())}
	res.MaxInFlight = b.dev.(interface{ maxInFlightSeen() int64 }).maxInFlightSeen()
	cpu := func(tv unix.Timeval) float64 { return float64(tv.Nano()) }
	res.UsrCPU = 100 * (cpu(ruAfter.Utime) - cpu(ruBefore.Utime)) / float64(endNs-startNs)
	res.SysCPU = 100 * (cpu(ruAfter.Stime) - cpu(ruBefore.Stime)) / float64(endNs-startNs)
	res.CPUMicrosPerOp = cpuMicrosPerOp(res.UsrCPU+res.SysCPU, res.IOPS)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// cpuMicrosPerOp turns a CPU percentage (of one CPU) at a rate of ops per
// second into CPU microseconds per op.
func cpuMicrosPerOp(cpuPercent, opsPerSec float64) float64 {
	if opsPerSec <= 0 {
		return 0
	}
	return cpuPercent / 100 / opsPerSec * 1e6
}

// The pattern: every 512-byte unit at device offset off holds 64 words
// patternBase(off)+j. A read of any aligned block is checked without knowing
// anything but its offset, and a block read from the wrong place, a stale
// buffer or zeros all fail.
func patternBase(off uint64) uint64 {
	z := off + 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// stampPattern fills p, which sits at device offset off, with the pattern.
func stampPattern(p []byte, off uint64) {
	for u := 0; u+512 <= len(p); u += 512 {
		base := patternBase(off + uint64(u))
		for j := 0; j < 64; j++ {
			binary.LittleEndian.PutUint64(p[u+8*j:], base+uint64(j))
		}
	}
}

// patternOK reports whether p, read from device offset off, holds the
// pattern.
func patternOK(p []byte, off uint64) bool {
	for u := 0; u+512 <= len(p); u += 512 {
		base := patternBase(off + uint64(u))
		for j := 0; j < 64; j++ {
			if binary.LittleEndian.Uint64(p[u+8*j:]) != base+uint64(j) {
				return false
			}
		}
	}
	return true
}

// RunBench runs Bench and prints its result on stdout: the human lines, or
// with cfg.JSON one JSON document. Progress goes to stderr.
func RunBench(ctx context.Context, cfg BenchConfig, stdout, stderr io.Writer) error {
	res, err := Bench(ctx, cfg, stderr)
	if err != nil && len(res.Passes) == 0 {
		return err
	}
	// A failure after a pass (fio missing, interrupted) still prints what
	// was measured, then reports the failure.
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return jerr
		}
	} else {
		res.WriteText(stdout)
	}
	return err
}

// WriteText prints the result as the familiar human lines.
func (r BenchResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "[Device]: %s\n", r.Device)
	fmt.Fprintf(w, "[Shape]: %d B random reads, %d threads × QD %d, %d files × %d MiB\n", r.Block, r.Threads, r.QD, r.Files, r.FileBytes>>20)
	fmt.Fprintf(w, "[Total time]: %.2f s for %d ops (%d errors", r.Seconds, r.Ops, r.Errors)
	if r.Verify {
		fmt.Fprintf(w, ", %d failed verification", r.VerifyFailures)
	}
	fmt.Fprintln(w, ")")
	if r.FirstError != "" {
		fmt.Fprintf(w, "[First error]: %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "[Throughput]: %s IOPS, %.1f MB/s (CPU usr %.0f%% sys %.0f%%, %.2f CPU µs per op, max in flight %d)\n",
		groupThousands(r.IOPS), r.MBPerSec, r.UsrCPU, r.SysCPU, r.CPUMicrosPerOp, r.MaxInFlight)
	fmt.Fprintf(w, "[Latency µs]: min %.1f  p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
		r.LatencyUs.Min, r.LatencyUs.P50, r.LatencyUs.P99, r.LatencyUs.P999, r.LatencyUs.Max)
	if len(r.Passes) > 1 {
		fmt.Fprintf(w, "[Passes]: %d, median shown; IOPS per pass:", len(r.Passes))
		for _, p := range r.Passes {
			fmt.Fprintf(w, " %s", groupThousands(p.IOPS))
			if p.FioIOPS > 0 {
				fmt.Fprintf(w, " (fio %s, %.3f)", groupThousands(p.FioIOPS), p.Ratio)
			}
		}
		fmt.Fprintln(w)
	}
	if r.Fio != nil {
		fmt.Fprintf(w, "[fio %s %s]: %s IOPS, %.1f MB/s (CPU usr %.0f%% sys %.0f%%, %.2f CPU µs per op), clat µs p50 %.1f  p99 %.1f  p99.9 %.1f\n",
			r.Fio.Version, r.Fio.Engine, groupThousands(r.Fio.IOPS), r.Fio.MBPerSec, r.Fio.UsrCPU, r.Fio.SysCPU, r.Fio.CPUMicrosPerOp,
			r.Fio.ClatP50Us, r.Fio.ClatP99Us, r.Fio.ClatP999Us)
		if r.FioAlongside {
			fmt.Fprintf(w, "[Ratio tierbench/fio]: %.3f (run at the same time on the same disk: 1.0 means both paths won an equal share)\n", r.RatioToFio)
		} else {
			fmt.Fprintf(w, "[Ratio tierbench/fio]: %.3f\n", r.RatioToFio)
		}
	}
}

// groupThousands formats a rate with thousands separators: 123,456.
func groupThousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteRune(c)
	}
	return out.String()
}

// memAvailableBytes reads MemAvailable from a /proc/meminfo file.
func memAvailableBytes(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || kb > 1<<50 {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("device bench: no MemAvailable line in %s", path)
}
