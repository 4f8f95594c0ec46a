package device

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
)

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
	// gathered holds the slots completed on a reaper and due again, until
	// the reaper's next Config.AfterGroup sends them in one Submit from
	// batch (its scratch).
	gathered []uint32
	batch    []Request
}

// bench is one run of the benchmark.
type bench struct {
	cfg     BenchConfig
	dev     Device
	workers []*benchWorker
	// active is workers while a pass's requests may be in flight, nil
	// otherwise: afterGroup runs after every group a reaper delivers, the
	// prepare phase's included, and must not read workers while run
	// rebuilds it.
	active     atomic.Pointer[[]*benchWorker]
	blocks     uint64 // block-sized slots in the whole file set
	clock      time.Time
	deadlineNs atomic.Int64 // completions at or after it are not counted and not resubmitted
	inline     bool         // the device completes on the submitter: workers loop (runInline)
	// gather: completions leave their slots for afterGroup to resubmit in
	// one Submit per group (the file backends, where a Submit from a
	// reaper costs a gettid); otherwise each is resubmitted at once.
	gather      bool
	prepareDone chan prepareCompletion
	outstanding sync.WaitGroup
}

func (b *bench) nowNs() int64 { return int64(time.Since(b.clock)) }

// onComplete is the device's completion function. For the timed phase it
// records the read and resubmits the slot from the same completion
// goroutine, no handoff to another goroutine per request: on the file
// backends through afterGroup once the group is delivered, as fio reaps a
// batch and then submits one; on localmemory, where a Submit from a
// completion is a push onto a lock-free stack, at once (gathering there
// left the completion goroutines idle while a batch was delivered, and
// read fewer IOPS).
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
		if b.gather {
			w.gathered = append(w.gathered, uint32(slot))
		}
	} else {
		w.inFlight--
	}
	w.mu.Unlock()
	switch {
	case !resubmit:
		b.outstanding.Done()
	case !b.gather:
		if _, err := b.dev.Submit(w.reqs[slot][:]); err != nil {
			w.mu.Lock()
			b.unsent(w, 1, err)
			w.mu.Unlock()
		}
	}
}

// unsent accounts for n requests of w that a Submit refused with err: an
// error, and no longer in flight. The caller holds w.mu.
func (b *bench) unsent(w *benchWorker, n int, err error) {
	w.errs++
	if w.firstErr == nil {
		w.firstErr = err
	}
	w.inFlight -= n
	for range n {
		b.outstanding.Done()
	}
}

// afterGroup is the device's Config.AfterGroup: on the reaper that just
// delivered a group of completions, it sends each worker's gathered slots
// in one Submit, which the reaper then hands to the kernel with its other
// deferred submissions. Reapers may run it at once; a worker's lock makes
// each gathered slot go exactly once. The Submit cannot wait on the
// throttle because Threads × QueueDepth is checked against it, and no
// completion runs inside it, so holding the lock across it is safe.
func (b *bench) afterGroup() {
	workers := b.active.Load()
	if workers == nil {
		return
	}
	for _, w := range *workers {
		w.mu.Lock()
		if len(w.gathered) == 0 {
			w.mu.Unlock()
			continue
		}
		w.batch = w.batch[:0]
		for _, s := range w.gathered {
			w.batch = append(w.batch, w.reqs[s][0])
		}
		w.gathered = w.gathered[:0]
		if n, err := b.dev.Submit(w.batch); err != nil {
			b.unsent(w, len(w.batch)-n, err)
		}
		w.mu.Unlock()
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
	b.gather = cfg.Backend != BackendLocalMemory
	devCfg := Config{
		Backend: cfg.Backend, Dir: cfg.Dir, SegmentBytes: uint64(cfg.FileBytes), SectorSize: cfg.SectorSize,
		ThrottleLimit: cfg.ThrottleLimit, CompletionThreads: cfg.CompletionThreads, IOContexts: cfg.IOContexts,
		InlineCompletion: cfg.InlineCompletion, OnComplete: b.onComplete,
	}
	if b.gather {
		devCfg.AfterGroup = b.afterGroup
	}
	dev, err := Open(devCfg)
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
		stolen := cpustat.StartWatch("/")
		f, err := fio.Run(ctx, fio.Job{Filenames: names, FileBytes: cfg.FileBytes, BlockBytes: cfg.BlockBytes,
			Jobs: cfg.Threads, IODepth: cfg.QueueDepth, Engine: engine, RuntimeSeconds: cfg.RuntimeSeconds,
			Registered: engine == "io_uring", Batched: true})
		if err != nil {
			return FioResult{}, fmt.Errorf("device bench: --compare-fio (fio %s, bs %d, %d jobs, iodepth %d): %w",
				engine, cfg.BlockBytes, cfg.Threads, cfg.QueueDepth, err)
		}
		return FioResult{Version: f.Version, Engine: f.Engine, IOPS: f.IOPS, MBPerSec: f.BandwidthKiBps * 1024 / 1e6,
			ClatP50Us: f.ClatUs.P50, ClatP99Us: f.ClatUs.P99, ClatP999Us: f.ClatUs.P999, UsrCPU: f.UsrCPU, SysCPU: f.SysCPU,
			// fio's group-reported CPU is the average per job (its times
			// and runtimes are both summed over the jobs).
			CPUMicrosPerOp: cpuMicrosPerOp((f.UsrCPU+f.SysCPU)*float64(cfg.Threads), f.IOPS), StealShare: stolen.StealShare()}, nil
	}
	if cfg.CPUProfile != nil {
		if err := pprof.StartCPUProfile(cfg.CPUProfile); err != nil {
			return BenchResult{}, fmt.Errorf("device bench: start the CPU profile: %w", err)
		}
		defer pprof.StopCPUProfile()
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
		stolen := cpustat.StartWatch("/")
		res, err := b.run(ctx)
		res.StealShare = stolen.StealShare()
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
		line := fmt.Sprintf("pass %d/%d: tierbench %s %s IOPS%s", p+1, cfg.Passes, cfg.Backend, groupThousands(res.IOPS), stealNote(res.StealShare))
		if cfg.CompareFio {
			fios = append(fios, f)
			order := "tierbench first"
			switch {
			case cfg.FioAlongside:
				order = "at the same time"
			case fioFirst:
				order = "fio first"
			}
			line += fmt.Sprintf(", fio %s %s IOPS%s (%s)", engine, groupThousands(f.IOPS), stealNote(f.StealShare), order)
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
		pr := PassResult{IOPS: r.IOPS, StealShare: r.StealShare}
		if i < len(fios) {
			pr.FioIOPS, pr.FioStealShare = fios[i].IOPS, fios[i].StealShare
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

// medianBy returns the element of xs with the median key (the lower middle
// one for an even count).
func medianBy[T any](xs []T, key func(T) float64) T {
	sorted := slices.Clone(xs)
	slices.SortFunc(sorted, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return sorted[(len(sorted)-1)/2]
}

// throttleLimit is the in-flight cap the device really applies.
func (c *core) throttleLimit() int { return len(c.slots) }

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
			gathered: make([]uint32, 0, cfg.QueueDepth), batch: make([]Request, 0, cfg.QueueDepth),
			rng:  rand.New(rand.NewPCG(uint64(i)+1, uint64(time.Now().UnixNano()))),
			hist: hdrhistogram.New(1, int64(time.Minute), 3)}
		for s := range w.reqs {
			w.reqs[s][0] = Request{Op: OpRead, Buf: buf[s*cfg.BlockBytes : (s+1)*cfg.BlockBytes], UserData: uint64(i)<<32 | uint64(s)}
		}
		b.workers = append(b.workers, w)
	}
	workers := b.workers
	b.active.Store(&workers)
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
				b.unsent(w, len(reqs)-n, err)
				w.mu.Unlock()
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
	b.active.Store(nil)

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
