package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/size"
)

func init() {
	register(command{name: "preflight", summary: "check whether this host can give honest numbers, and fingerprint it", run: runPreflight})
}

// sizeFlag is a byte count written like Garnet's --index 8g.
type sizeFlag struct{ bytes *int64 }

func (s sizeFlag) String() string {
	if s.bytes == nil {
		return ""
	}
	n := *s.bytes
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{40, "t"}, {30, "g"}, {20, "m"}, {10, "k"}} {
		if n > 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s sizeFlag) Set(v string) error {
	n, err := size.Parse(v)
	if err != nil {
		return fmt.Errorf("%q is not a size like 512, 64m or 8g", v)
	}
	*s.bytes = n
	return nil
}

// intListFlag is a comma-separated list of counts, like --threads 8,32,48,64.
type intListFlag struct{ list *[]int }

func (l intListFlag) String() string {
	if l.list == nil {
		return ""
	}
	parts := make([]string, len(*l.list))
	for i, n := range *l.list {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (l intListFlag) Set(v string) error {
	var out []int
	for _, p := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return fmt.Errorf("%q is not a positive count", p)
		}
		out = append(out, n)
	}
	*l.list = out
	return nil
}

func runPreflight(args []string, stdout, stderr io.Writer) int {
	cfg := hostcheck.Config{
		Root:              "/",
		DataDir:           hostcheck.DefaultDataDir,
		Threads:           hostcheck.DefaultThreads,
		QueueDepth:        hostcheck.DefaultQueueDepth,
		DBSize:            hostcheck.DefaultDBSize,
		RecordBytes:       hostcheck.DefaultRecordBytes,
		IndexBytes:        hostcheck.DefaultIndexBytes,
		MemoryBytes:       hostcheck.DefaultMemoryBytes,
		FIOFileBytes:      hostcheck.DefaultFIOFileBytes,
		FIOFiles:          hostcheck.DefaultFIOFiles,
		FIORuntimeSeconds: hostcheck.DefaultFIORuntimeSeconds,
	}
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory the store's log will live in (created if missing); the O_DIRECT probe and fio run there")
	fs.Var(intListFlag{&cfg.Threads}, "threads", "client thread counts of the planned matrix, a comma-separated `list`")
	fs.IntVar(&cfg.QueueDepth, "queue-depth", cfg.QueueDepth, "device reads in flight per thread; fs.aio-max-nr must hold max(threads) × this")
	fs.Int64Var(&cfg.DBSize, "dbsize", cfg.DBSize, "records in the planned dataset")
	fs.IntVar(&cfg.RecordBytes, "record-bytes", cfg.RecordBytes, "bytes per record on the device, header included (rounded up to 8)")
	fs.Var(sizeFlag{&cfg.IndexBytes}, "index", "planned hash index memory, a `size` like 8g")
	fs.Var(sizeFlag{&cfg.MemoryBytes}, "memory", "planned in-memory log, a `size` like 16m")
	fs.BoolVar(&cfg.FIO, "fio", false, "run the fio random-read baseline: a depth sweep at 512 B whose highest IOPS is the ceiling, then 4 KiB at that depth (O_DIRECT, io_uring or libaio)")
	fs.Var(sizeFlag{&cfg.FIOFileBytes}, "fio-size", "`size` of each fio file, like 64m")
	fs.IntVar(&cfg.FIOFiles, "fio-files", cfg.FIOFiles, "number of fio files, shared by all jobs")
	fs.IntVar(&cfg.FIORuntimeSeconds, "fio-runtime", cfg.FIORuntimeSeconds, "seconds per fio step (each depth of the sweep, and the 4 KiB run)")
	fs.IntVar(&cfg.FIOMaxDepth, "fio-max-depth", device.DefaultThrottleLimit, "reads in flight the sweep must reach: the most the server keeps in flight (its --device-throttle-limit); the sweep goes 64, 128, 512, 2048, 4096, then doubles")
	fs.BoolVar(&cfg.FIOFullSweep, "fio-full-sweep", false, "measure every depth; without it the sweep stops once two steps in a row did not beat the best IOPS by more than 2 %")
	fs.StringVar(&cfg.FIOCPUs, "fio-cpus", "", "with --fio, sweep a second time with every fio job pinned to this CPU `list` (like 0 or 0-3), one job per CPU at most: the ceiling of a server pinned there, which tierbench run holds its pinned rows against (fio_pinned in the JSON)")
	fs.StringVar(&cfg.FIOMems, "fio-mems", "", "with --fio-cpus, bind fio's memory to these NUMA node(s) (fio --numa_mem_policy=bind:), as the pinned server's is")
	fs.BoolVar(&cfg.JSON, "json", false, "print one JSON document {checks, fingerprint, fio, fio_pinned} on stdout and nothing else")
	fs.StringVar(&cfg.Root, "root", cfg.Root, "directory /sys and /proc are read under (for a host's tree mounted elsewhere)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench preflight [flags]

Checks whether this host can give honest storage-bound numbers before you
spend an hour on it, and fingerprints it: NUMA topology, fs.aio-max-nr
against the planned threads × queue depth, a real O_DIRECT write and read
back in the data dir (and the disks below it), io_uring and libaio, free
disk and memory against the planned dataset, the Docker engine, and with
--fio the fio random-read ceiling: a sweep of reads in flight (jobs ×
iodepth, jobs capped by the CPUs) from 64 up to --fio-max-depth, whose
highest IOPS is the ceiling; the whole curve is in the JSON, each point with
fio's CPU per read and whether its jobs were CPU-bound (≥ 90 % of their
CPUs: then the point is fio's CPU, not the disk). With --fio-cpus the sweep
runs again pinned to those CPUs, the ceiling of a server given them alone.
On io_uring fio registers its files and buffers (--registerfiles
--fixedbufs), and it submits and reaps up to 32 reads per call
(--iodepth_batch_submit=32 --iodepth_batch_complete_min=1
--iodepth_batch_complete_max=32), the cheapest reads it offers: without the
bound on the reap, fio at an iodepth equal to its ring's size (64, 128, 256
...) makes about one system call per read and reads a third as fast on a
CPU-bound host. Prints a check | status | detail table and a "Host —"
paragraph. Exit status: 0 nothing failed, 1 a check failed, 2 usage error.

Example:
  tierbench preflight --data-dir /mnt/nvme/tb --fio
  tierbench preflight --data-dir /mnt/nvme/tb --threads 8,32,48,64 --dbsize 100000000 --index 8g --memory 16m --json

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "tierbench preflight: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Progress = stderr
	rep, err := hostcheck.Run(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench preflight: %v\n", err)
		if errors.Is(err, hostcheck.ErrConfig) {
			return 2
		}
		return 1
	}
	if rep.Failed() {
		return 1
	}
	return 0
}
