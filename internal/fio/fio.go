package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/size"
)

// ErrNotInstalled is returned by Run when no fio executable is on the PATH.
var ErrNotInstalled = errors.New("fio: not installed (apt-get install fio)")

// Job describes one random-read fio run. Either Filenames lists the files
// explicitly, or Dir, Files and FileBytes name Files files called
// tierbench-fio.<i> in Dir. All jobs share the same files, so Files is the
// number of files in total, not per job.
type Job struct {
	Filenames      []string // explicit files (fio --filename=a:b:c); or Dir+Files+FileBytes
	Dir            string
	Files          int
	FileBytes      int64  // size of each file
	BlockBytes     int    // --bs
	Jobs           int    // --numjobs (with --group_reporting)
	IODepth        int    // --iodepth (64 default)
	Engine         string // "io_uring" | "libaio"
	RuntimeSeconds int
	// ReadOnly makes fio refuse to write (--readonly): for reading files
	// that belong to someone else, such as a server's segment files.
	ReadOnly bool
	// RateIOPS caps the job at this many reads per second (--rate_iops,
	// 0: as fast as it can): the disk at a server's offered rate. It also
	// asks for total-latency percentiles (--lat_percentiles), which
	// Result.LatUs carries.
	RateIOPS int
	// CPUs pins every job to these CPUs (fio --cpus_allowed, a list such
	// as "0" or "0-3,8"), Mems binds their memory to these NUMA nodes
	// (--numa_mem_policy=bind:): fio measured on the budget a pinned
	// server gets. "" leaves fio free.
	CPUs, Mems string
	// Registered, on io_uring, registers the files and the buffers with
	// the ring (--registerfiles --fixedbufs): no file table lookup or
	// page pinning per read; on this machine's virtio disk it cut fio's
	// CPU per 512 B read, on one CPU and with two jobs. Other engines
	// ignore it.
	Registered bool
	// Batched submits up to BatchReads reads per system call and reaps
	// between one and BatchReads per call (--iodepth_batch_submit,
	// --iodepth_batch_complete_min=1, --iodepth_batch_complete_max), on
	// any engine. The upper bound on the reap matters: without it fio at
	// an iodepth its io_uring ring size equals (a power of two: 64, 128,
	// 256, 512 ...) fell back to about one system call per read. Pinned
	// to one CPU of this machine, fio read several times the IOPS at a
	// fraction of the CPU per read with the bound (io_uring with
	// registered files) and batched (libaio)
	// (docs/notes/2026-12-07-comment-figures.md has the figures).
	Batched bool
}

// Result is one group-reported fio run.
type Result struct {
	Version                   string
	Engine                    string
	BlockBytes, Jobs, IODepth int
	IOPS                      float64
	BandwidthKiBps            float64
	ClatUs                    struct{ P50, P99, P999 float64 } // from clat_ns.percentile
	// LatUs is submission plus completion latency (lat_ns.percentile),
	// what a request waits from its issue to its completion; zero unless
	// the job set RateIOPS.
	LatUs struct{ P50, P99, P999 float64 }
	// UsrCPU and SysCPU are fio's usr_cpu and sys_cpu: percent of one CPU
	// per job, averaged over the jobs (CPU judges them).
	UsrCPU, SysCPU float64
}

// Defaults applied by Run to zero fields of a Job.
const (
	DefaultBlockBytes     = 4096
	DefaultIODepth        = 64
	DefaultEngine         = "io_uring"
	DefaultRuntimeSeconds = 5
	DefaultFiles          = 8
	DefaultFileBytes      = 64 << 20
	// BatchReads is the most reads a Batched job submits or reaps per
	// system call.
	BatchReads = 32
)

// Args returns the fio command-line arguments for job after defaults, or an
// error naming the field that cannot be expressed to fio.
func (job Job) Args() ([]string, error) {
	job = job.withDefaults()
	names := job.Filenames
	if len(names) == 0 {
		if job.Dir == "" {
			return nil, errors.New("fio: job has neither Filenames nor Dir")
		}
		for i := range job.Files {
			names = append(names, filepath.Join(job.Dir, fmt.Sprintf("tierbench-fio.%d", i)))
		}
	}
	for _, n := range names {
		// fio splits --filename on ':'; refusing is clearer than escaping.
		if strings.Contains(n, ":") {
			return nil, fmt.Errorf("fio: file name %q contains ':', which fio treats as a separator", n)
		}
	}
	switch {
	case job.BlockBytes < 0, job.Jobs < 0, job.IODepth < 0, job.RuntimeSeconds < 0, job.FileBytes < 0:
		return nil, fmt.Errorf("fio: negative field in job %+v", job)
	case job.FileBytes > 0 && job.FileBytes < int64(job.BlockBytes):
		return nil, fmt.Errorf("fio: file size %d B is smaller than the block size %d B", job.FileBytes, job.BlockBytes)
	}
	args := []string{
		"--name=tierbench-randread",
		"--rw=randread",
		"--direct=1",
		"--ioengine=" + job.Engine,
		"--bs=" + strconv.Itoa(job.BlockBytes),
		"--numjobs=" + strconv.Itoa(job.Jobs),
		"--iodepth=" + strconv.Itoa(job.IODepth),
		"--group_reporting",
		"--time_based",
		"--runtime=" + strconv.Itoa(job.RuntimeSeconds),
		"--filename=" + strings.Join(names, ":"),
		"--output-format=json",
	}
	if job.FileBytes > 0 {
		args = append(args, "--filesize="+strconv.FormatInt(job.FileBytes, 10))
	}
	if job.ReadOnly {
		args = append(args, "--readonly")
	}
	if job.RateIOPS < 0 {
		return nil, fmt.Errorf("fio: negative rate %d IOPS", job.RateIOPS)
	}
	if job.RateIOPS > 0 {
		args = append(args, "--rate_iops="+strconv.Itoa(job.RateIOPS), "--lat_percentiles=1")
	}
	if job.Registered && job.Engine == "io_uring" {
		args = append(args, "--registerfiles", "--fixedbufs")
	}
	if job.Batched {
		batch := strconv.Itoa(min(BatchReads, job.IODepth))
		args = append(args, "--iodepth_batch_submit="+batch, "--iodepth_batch_complete_min=1", "--iodepth_batch_complete_max="+batch)
	}
	for _, l := range []struct{ name, list, flag string }{{"CPUs", job.CPUs, "--cpus_allowed="}, {"Mems", job.Mems, "--numa_mem_policy=bind:"}} {
		if l.list == "" {
			continue
		}
		if strings.Trim(l.list, "0123456789,-") != "" {
			return nil, fmt.Errorf("fio: job %s %q is not a list such as 0-3,8", l.name, l.list)
		}
		args = append(args, l.flag+l.list)
	}
	return args, nil
}

func (job Job) withDefaults() Job {
	if job.BlockBytes == 0 {
		job.BlockBytes = DefaultBlockBytes
	}
	if job.Jobs == 0 {
		job.Jobs = 1
	}
	if job.IODepth == 0 {
		job.IODepth = DefaultIODepth
	}
	if job.Engine == "" {
		job.Engine = DefaultEngine
	}
	if job.RuntimeSeconds == 0 {
		job.RuntimeSeconds = DefaultRuntimeSeconds
	}
	if len(job.Filenames) == 0 {
		if job.Files == 0 {
			job.Files = DefaultFiles
		}
		if job.FileBytes == 0 {
			job.FileBytes = DefaultFileBytes
		}
	}
	return job
}

// Run runs the real fio (rw=randread, direct=1, group reporting, JSON
// output) and parses its result. A missing fio gives ErrNotInstalled; fio
// exiting non-zero gives an error quoting what it printed.
func Run(ctx context.Context, job Job) (Result, error) {
	args, err := job.Args()
	if err != nil {
		return Result{}, err
	}
	bin, err := exec.LookPath("fio")
	if err != nil {
		return Result{}, ErrNotInstalled
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("fio: %w", ctx.Err())
		}
		return Result{}, fmt.Errorf("fio %s: %w: %s", strings.Join(args, " "), err, snippet(stderr.Bytes(), stdout.Bytes()))
	}
	res, err := Parse(stdout.Bytes())
	if err != nil {
		if stderr.Len() > 0 {
			return Result{}, fmt.Errorf("%w (fio stderr: %s)", err, snippet(stderr.Bytes()))
		}
		return Result{}, err
	}
	return res, nil
}

// snippet joins what a program printed, trimmed to a length that fits in an
// error message.
func snippet(parts ...[]byte) string {
	const max = 800
	s := strings.TrimSpace(string(bytes.Join(parts, []byte("\n"))))
	if s == "" {
		return "(no output)"
	}
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// report is the part of fio's JSON output that Parse reads.
type report struct {
	Version       string            `json:"fio version"`
	GlobalOptions map[string]string `json:"global options"`
	Jobs          []struct {
		Name       string            `json:"jobname"`
		Error      int               `json:"error"`
		JobOptions map[string]string `json:"job options"`
		Read       struct {
			IOPS   float64 `json:"iops"`
			BWKiBs float64 `json:"bw"`
			IOs    int64   `json:"total_ios"`
			ClatNs struct {
				Percentile map[string]float64 `json:"percentile"`
			} `json:"clat_ns"`
			LatNs struct {
				Percentile map[string]float64 `json:"percentile"`
			} `json:"lat_ns"`
		} `json:"read"`
		UsrCPU float64 `json:"usr_cpu"`
		SysCPU float64 `json:"sys_cpu"`
		// RuntimeMs is the entry's jobs' summed runtime, the divisor of
		// its usr_cpu and sys_cpu.
		RuntimeMs float64 `json:"job_runtime"`
	} `json:"jobs"`
}

// Parse reads fio's --output-format=json output. It skips anything before
// the first '{' (fio prints error lines into the same stream), sums IOPS and
// bandwidth over the job entries (one with --group_reporting), averages
// their CPU shares weighted by runtime, and takes the completion-latency
// percentiles of the first entry.
func Parse(jsonOutput []byte) (Result, error) {
	start := bytes.IndexByte(jsonOutput, '{')
	if start < 0 {
		return Result{}, fmt.Errorf("fio: output has no JSON document: %s", snippet(jsonOutput))
	}
	var rep report
	dec := json.NewDecoder(bytes.NewReader(jsonOutput[start:]))
	if err := dec.Decode(&rep); err != nil {
		return Result{}, fmt.Errorf("fio: parse JSON output: %v: %s", err, snippet(jsonOutput))
	}
	if len(rep.Jobs) == 0 {
		return Result{}, fmt.Errorf("fio: JSON output has no jobs: %s", snippet(jsonOutput))
	}
	res := Result{Version: rep.Version}
	var cpuWeight float64
	for _, j := range rep.Jobs {
		if j.Error != 0 {
			return Result{}, fmt.Errorf("fio: job %q ended with error %d", j.Name, j.Error)
		}
		if bad(j.Read.IOPS) || bad(j.Read.BWKiBs) {
			return Result{}, fmt.Errorf("fio: job %q reports invalid read iops %v or bw %v", j.Name, j.Read.IOPS, j.Read.BWKiBs)
		}
		res.IOPS += j.Read.IOPS
		res.BandwidthKiBps += j.Read.BWKiBs
		// Each entry's shares are per job: weighting them by runtime keeps
		// the total a per-job average however fio grouped the jobs.
		w := 1.0
		if j.RuntimeMs > 0 && !bad(j.RuntimeMs) {
			w = j.RuntimeMs
		}
		res.UsrCPU += w * j.UsrCPU
		res.SysCPU += w * j.SysCPU
		cpuWeight += w
	}
	res.UsrCPU /= cpuWeight
	res.SysCPU /= cpuWeight
	first := rep.Jobs[0]
	if first.Read.IOs == 0 && first.Read.IOPS == 0 {
		return Result{}, fmt.Errorf("fio: job %q did no reads (is rw=randread?)", first.Name)
	}
	opt := func(key string) string {
		if v, ok := first.JobOptions[key]; ok {
			return v
		}
		return rep.GlobalOptions[key]
	}
	res.Engine = opt("ioengine")
	var err error
	if res.BlockBytes, err = optionInt(opt, "bs", 0); err != nil {
		return Result{}, err
	}
	if res.Jobs, err = optionInt(opt, "numjobs", 1); err != nil {
		return Result{}, err
	}
	if res.IODepth, err = optionInt(opt, "iodepth", 1); err != nil {
		return Result{}, err
	}
	if err := percentiles(first.Name, "clat_ns", first.Read.ClatNs.Percentile, &res.ClatUs.P50, &res.ClatUs.P99, &res.ClatUs.P999); err != nil {
		return Result{}, err
	}
	if lat := first.Read.LatNs.Percentile; len(lat) > 0 {
		if err := percentiles(first.Name, "lat_ns", lat, &res.LatUs.P50, &res.LatUs.P99, &res.LatUs.P999); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// percentiles reads p50, p99 and p99.9 of one of fio's percentile maps
// (nanoseconds) into microseconds.
func percentiles(job, name string, pct map[string]float64, p50, p99, p999 *float64) error {
	for _, p := range []struct {
		key string
		dst *float64
	}{{"50.000000", p50}, {"99.000000", p99}, {"99.900000", p999}} {
		ns, ok := pct[p.key]
		if !ok {
			return fmt.Errorf("fio: job %q has no %s percentile %s", job, name, p.key)
		}
		if bad(ns) {
			return fmt.Errorf("fio: job %q has invalid %s percentile %s = %v", job, name, p.key, ns)
		}
		*p.dst = ns / 1000
	}
	return nil
}

func bad(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }

// optionInt reads a numeric fio option such as bs=4k; an absent option
// gives def.
func optionInt(opt func(string) string, key string, def int) (int, error) {
	v := strings.TrimSpace(opt(key))
	if v == "" {
		return def, nil
	}
	n, err := size.Parse(v)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("fio: option %s=%q is not a size", key, v)
	}
	return int(n), nil
}
