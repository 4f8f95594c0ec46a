package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/internal/fio"
)

// FIOBaseline is the fio random-read ceiling: a depth sweep at 512 B whose
// highest IOPS is the ceiling, and one 4 KiB run at that depth. Jobs and
// IODepth are the best point's; Sweep keeps the whole curve.
type FIOBaseline struct {
	Version        string      `json:"version"`
	Engine         string      `json:"engine"`
	Jobs           int         `json:"jobs"`
	IODepth        int         `json:"iodepth"`
	Files          int         `json:"files"`
	FileBytes      int64       `json:"file_bytes"`
	RuntimeSeconds int         `json:"runtime_seconds"` // per step
	Results        []FIOResult `json:"results"`

	// MaxDepth is the depth the sweep had to reach: the reads in flight
	// the server keeps at most (its throttle limit).
	MaxDepth int `json:"max_depth"`
	// Sweep is the 512 B depth curve in the order measured.
	Sweep        []FIOPoint `json:"sweep"`
	StoppedEarly bool       `json:"stopped_early"`
	SweepNote    string     `json:"sweep_note,omitempty"`
	// Footprint says what fio read (FootprintFioFiles here) and
	// FootprintBytes how much: a ceiling measured on a smaller footprint
	// than the server reads is too high (caches), on a larger one too low.
	Footprint      string `json:"footprint"`
	FootprintBytes int64  `json:"footprint_bytes"`
	// StealShare is the share of the host's CPU time the hypervisor took
	// during the sweep (/proc/stat); nil where not counted.
	StealShare *float64 `json:"steal_share,omitempty"`
	// CPUs is the CPU list every job was pinned to and Mems the memory
	// nodes they were bound to ("" = free on the whole host: the host
	// ceiling); CPUCount is how many CPUs the jobs could run on, the
	// divisor of each point's CPU share (0 in bundles from before it:
	// one CPU per job).
	CPUs     string `json:"cpus,omitempty"`
	Mems     string `json:"mems,omitempty"`
	CPUCount int    `json:"cpu_count,omitempty"`
	// Registered: fio registered its files and buffers with the io_uring
	// ring (fio.Job.Registered), its cheapest reads.
	Registered bool `json:"registered,omitempty"`
	// Batched: fio submitted and reaped its reads in batches
	// (fio.Job.Batched), bounded both ways.
	Batched bool `json:"batched,omitempty"`
}

// ReadJob is a fio job that reads as the sweep did: through its engine, on
// its CPUs and memory nodes, with its files and buffers registered and its
// reads batched where the sweep's were. The caller names the files and the
// shape. A sweep from before Batched was recorded batched its submissions
// whenever it registered (though without an upper bound on the reap).
func (b *FIOBaseline) ReadJob() fio.Job {
	return fio.Job{Engine: b.Engine, CPUs: b.CPUs, Mems: b.Mems, Registered: b.Registered, Batched: b.Batched || b.Registered}
}

// Best is the sweep's highest point, the ceiling; false without a sweep.
func (b *FIOBaseline) Best() (FIOPoint, bool) {
	if b == nil || len(b.Sweep) == 0 {
		return FIOPoint{}, false
	}
	best := 0
	for i, p := range b.Sweep {
		if p.IOPS > b.Sweep[best].IOPS {
			best = i
		}
	}
	return b.Sweep[best], true
}

// PointCPU judges fio's CPU at one point from its usr and sys shares, so
// a bundle from before the CPU was recorded is judged as a new one.
func (b *FIOBaseline) PointCPU(p FIOPoint) fio.CPU {
	return fio.CPUOf(p.UsrCPU, p.SysCPU, p.Jobs, p.IOPS, b.CPUCount)
}

// FIOPoint is one depth of the sweep.
type FIOPoint struct {
	Depth   int `json:"depth"` // jobs × iodepth reads in flight
	Jobs    int `json:"jobs"`
	IODepth int `json:"iodepth"`
	FIOResult
	// DriverDepth is the reads the data disks' drivers held while the
	// step read (/sys/block/<disk>/inflight every driverSampleEvery, nine
	// samples of ten that found any at or below it: diskstats.DriverWatch):
	// below Depth, the rest waited in the kernel's queue. 0 where not read.
	DriverDepth int `json:"driver_depth,omitempty"`
}

// FootprintFioFiles: the baseline read fio's own files, sized by
// --fio-files × --fio-size (the orchestrator makes them as large as the
// dataset).
const FootprintFioFiles = "fio-files"

// Sweep stopping rule: a step must beat the best IOPS so far by more than
// sweepMinGrowth to count as growth, and sweepFlatSteps steps in a row
// without growth end the sweep (unless Config.FIOFullSweep).
const (
	sweepMinGrowth = 0.02
	sweepFlatSteps = 2
)

// SweepSteps is the fio runs of one preflight sweep that runs every step
// (--fio-full-sweep): the 512 B depth ladder up to maxDepth with at most
// cpus jobs (capped as runBaseline caps them), and the 4 KiB read at the
// best depth. A sweep that stops where IOPS stop growing runs fewer.
func SweepSteps(maxDepth, cpus int) int {
	return len(fio.DepthLadder(maxDepth, min(maxFIOJobs, cpus))) + 1
}

// PointOf turns one measured sweep step, its jobs on cpus CPUs (0: one
// each), into its preflight.json form.
func PointOf(p fio.Point, cpus int) FIOPoint {
	return FIOPoint{Depth: p.Depth(), Jobs: p.Jobs, IODepth: p.IODepth, FIOResult: resultOf(p.Result, cpus)}
}

func resultOf(r fio.Result, cpus int) FIOResult {
	fr := FIOResult{BlockBytes: r.BlockBytes, IOPS: r.IOPS, BandwidthKiBps: r.BandwidthKiBps, UsrCPU: r.UsrCPU, SysCPU: r.SysCPU, CPU: r.CPU(cpus)}
	fr.ClatUs.P50, fr.ClatUs.P99, fr.ClatUs.P999 = r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999
	return fr
}

// driverSampleEvery is how often a sweep step samples the disks' drivers:
// a read of one small sysfs file per disk, 200 of them in a 2 s step.
const driverSampleEvery = 10 * time.Millisecond

// driverSampler runs fio jobs through run while sampling the data disks'
// drivers (diskstats.WatchDriver), and keeps what each 512 B step saw for
// runBaseline's points. One sampler serves one sweep at a time.
//
// Why: a disk may take fewer requests at once than its tags say. The test
// VM's virtio disk has 128 tags, but its ring of 256 descriptors, without
// indirect ones, holds 85 reads of three descriptors each; fio's sweep
// there peaks near the tags, and deeper steps read less.
type driverSampler struct {
	root  string
	disks []string
	run   func(context.Context, fio.Job) (fio.Result, error)
	depth map[[2]int]int // jobs, iodepth of a 512 B step → DriverDepth
}

func newDriverSampler(root string, st Storage, run func(context.Context, fio.Job) (fio.Result, error)) *driverSampler {
	s := &driverSampler{root: root, run: run, depth: map[[2]int]int{}}
	for _, d := range st.Disks {
		s.disks = append(s.disks, d.Name)
	}
	return s
}

// Run runs job, sampling the drivers while it runs when it is a 512 B
// step and the disks are known.
func (s *driverSampler) Run(ctx context.Context, job fio.Job) (fio.Result, error) {
	if len(s.disks) == 0 || job.BlockBytes != 512 {
		return s.run(ctx, job)
	}
	w := diskstats.WatchDriver(s.root, s.disks, driverSampleEvery)
	r, err := s.run(ctx, job)
	if depth, ok := w.Stop(); ok && err == nil {
		s.depth[[2]int{job.Jobs, job.IODepth}] = depth
	}
	return r, err
}

// removeFioFiles removes the files fio laid out for job.
func removeFioFiles(job fio.Job) {
	for i := range job.Files {
		os.Remove(filepath.Join(job.Dir, fmt.Sprintf("tierbench-fio.%d", i)))
	}
}

// runBaseline sweeps depth at 512 B over job's files and measures 4 KiB at
// the best depth, with at most maxJobs jobs, each on a CPU of its own
// (job.CPUs, when set, holds maxJobs CPUs), fio run through sampler, which
// samples each step's disk driver. It leaves fio's files for a second
// sweep: the caller removes them.
func runBaseline(ctx context.Context, root string, sampler *driverSampler, job fio.Job, maxDepth, maxJobs int, full bool, progress io.Writer) (*FIOBaseline, error) {
	stolen := cpustat.StartWatch(root)
	defer clear(sampler.depth)
	sw := fio.Sweep{Job: job, Steps: fio.DepthLadder(maxDepth, maxJobs), MinGrowth: sweepMinGrowth, Run: sampler.Run}
	sw.Done = stepPrinter(progress, job, sw.Steps, time.Now())
	if !full {
		sw.FlatSteps = sweepFlatSteps
	}
	sw.Job.BlockBytes = 512
	sw.Job.Registered, sw.Job.Batched = true, true
	job.Registered, job.Batched = true, true
	res, err := sw.Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("fio %s random read at 512 B: %w", job.Engine, err)
	}
	best := res.BestPoint()
	base := &FIOBaseline{Version: best.Result.Version, Engine: job.Engine, Jobs: best.Jobs, IODepth: best.IODepth, Files: job.Files,
		FileBytes: job.FileBytes, RuntimeSeconds: job.RuntimeSeconds, MaxDepth: maxDepth,
		StoppedEarly: res.StoppedEarly, SweepNote: res.Note,
		Footprint: FootprintFioFiles, FootprintBytes: int64(job.Files) * job.FileBytes,
		CPUs: job.CPUs, Mems: job.Mems, CPUCount: maxJobs, Registered: job.Engine == "io_uring", Batched: true}
	for _, p := range res.Points {
		pt := PointOf(p, maxJobs)
		pt.BlockBytes = 512
		pt.DriverDepth = sampler.depth[[2]int{p.Jobs, p.IODepth}]
		base.Sweep = append(base.Sweep, pt)
	}
	r512 := resultOf(best.Result, maxJobs)
	r512.BlockBytes = 512
	job.BlockBytes, job.Jobs, job.IODepth = 4096, best.Jobs, best.IODepth
	r4k, err := sampler.Run(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("fio %s random read at 4096 B: %w", job.Engine, err)
	}
	fr := resultOf(r4k, maxJobs)
	fr.BlockBytes = 4096
	base.Results = []FIOResult{r512, fr}
	base.StealShare = stolen.StealShare()
	return base, nil
}

// pinnedBaseline runs the sweep again with every job pinned to
// cfg.FIOCPUs (and its memory bound to cfg.FIOMems), one job per CPU at
// most: the ceiling of a server pinned there. A failure is a warning,
// not a failed preflight: the pinned rows are then held against the host
// ceiling, and the report says so.
func pinnedBaseline(ctx context.Context, sampler *driverSampler, job fio.Job, cfg Config) (*FIOBaseline, Check) {
	cpus, err := cpulist.Parse(cfg.FIOCPUs)
	if err == nil && len(cpus) == 0 {
		err = errors.New("the list is empty")
	}
	if err != nil {
		return nil, Check{Name: CheckFIOPinned, Status: Warn, Detail: fmt.Sprintf("not run: --fio-cpus %q: %v", cfg.FIOCPUs, err)}
	}
	job.CPUs, job.Mems = cfg.FIOCPUs, cfg.FIOMems
	base, err := runBaseline(ctx, cfg.Root, sampler, job, cfg.FIOMaxDepth, min(maxFIOJobs, len(cpus)), cfg.FIOFullSweep, cfg.Progress)
	c := baselineCheck(base, err)
	c.Name = CheckFIOPinned
	if err != nil {
		c.Status = Warn
		return nil, c
	}
	return base, c
}

func baselineCheck(base *FIOBaseline, err error) Check {
	c := Check{Name: CheckFIO}
	if errors.Is(err, fio.ErrNotInstalled) {
		c.Status, c.Detail = Warn, "fio is not installed: apt-get install fio (or scripts/install-deps.sh); no random-read ceiling measured"
		return c
	}
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	var curve []string
	for _, p := range base.Sweep {
		pt := fmt.Sprintf("%d: %s", p.Depth, countLabel(p.IOPS))
		if p.DriverDepth > 0 && p.DriverDepth < p.Depth {
			pt += fmt.Sprintf(" (%d at the disk's driver)", p.DriverDepth)
		}
		if c := base.PointCPU(p); c.MicrosPerRead > 0 {
			pt += fmt.Sprintf(" at %.1f CPU µs/read", c.MicrosPerRead)
			if c.Bound {
				pt += fmt.Sprintf(", fio CPU-bound (%.0f %% of %d CPU)", 100*c.Share, min(p.Jobs, max(base.CPUCount, p.Jobs)))
			}
		}
		curve = append(curve, pt)
	}
	var parts []string
	for _, r := range base.Results {
		parts = append(parts, fmt.Sprintf("%s %s IOPS (%.0f KiB/s, clat p50 %.0f µs p99 %.0f µs p99.9 %.0f µs)",
			blockLabel(r.BlockBytes), countLabel(r.IOPS), r.BandwidthKiBps, r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999))
	}
	c.Status = Pass
	pinned := ""
	if base.CPUs != "" {
		pinned = fmt.Sprintf("pinned to CPUs %s", base.CPUs)
		if base.Mems != "" {
			pinned += " and memory node(s) " + base.Mems
		}
		pinned += ", "
	}
	c.Detail = pinned + fmt.Sprintf("%s, %s, %d files × %s, %d s per step; 512 B depth sweep (reads in flight: IOPS) %s; ceiling at %d jobs × QD%d: %s",
		base.Version, base.Engine, base.Files, humanBytes(base.FileBytes), base.RuntimeSeconds,
		strings.Join(curve, ", "), base.Jobs, base.IODepth, strings.Join(parts, "; "))
	if base.SweepNote != "" {
		c.Detail += "; " + base.SweepNote
	}
	if s := base.StealShare; s != nil {
		c.Detail += fmt.Sprintf("; the hypervisor took %.1f %% of this host's CPU time while it ran (steal)", 100**s)
		if *s >= cpustat.NoticeableSteal {
			c.Detail += ": stalls of a few ms are this host's, and they reach a latency p99"
		}
	}
	return c
}
