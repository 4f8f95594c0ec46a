package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/size"
)

func init() {
	register(command{name: "device", summary: "raw random-read IOPS of the device layer, optionally beside fio", run: runDevice})
}

func runDevice(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("device", flag.ContinueOnError)
	var cfg device.BenchConfig
	var fileSize string
	fs.StringVar(&cfg.Dir, "dir", "", "directory of the file set (segment.<N>); created and filled on first use, reused after (required for libaio and uring)")
	fs.StringVar(&cfg.Backend, "backend", device.BackendUring, "device backend: libaio, uring or localmemory")
	fs.StringVar(&fileSize, "file-size", "1g", "size of each file (suffix k, m, g)")
	fs.IntVar(&cfg.Files, "files", 1, "number of files in the set")
	fs.IntVar(&cfg.BlockBytes, "block", 512, "bytes per read (a multiple of the sector size)")
	fs.IntVar(&cfg.Threads, "threads", 1, "workers, each keeping --qd reads in flight (fio --numjobs)")
	fs.IntVar(&cfg.QueueDepth, "qd", 64, "reads in flight per worker (fio --iodepth)")
	fs.IntVar(&cfg.RuntimeSeconds, "runtime", 10, "seconds of timed random reads")
	fs.BoolVar(&cfg.Verify, "verify", false, "check the pattern of every read")
	fs.BoolVar(&cfg.JSON, "json", false, "print one JSON document instead of the human lines")
	fs.BoolVar(&cfg.CompareFio, "compare-fio", false, "then run the real fio at the same shape on the same files and print the ratio tierbench/fio")
	fs.BoolVar(&cfg.FioAlongside, "fio-alongside", false, "with --compare-fio, run fio at the same time as each pass instead of after it: both meet the same load from others on a shared disk and the same host cache (ratio 1.0 = equally efficient); meaningful while threads × qd × 2 stays within the disk's queue (/sys/block/<dev>/queue/nr_requests), beyond it the ratio measures the kernel's tag-wait fairness")
	fs.IntVar(&cfg.Passes, "passes", 1, "timed passes, each followed by its fio pass with --compare-fio; the medians are reported")
	fs.IntVar(&cfg.IOContexts, "device-io-contexts", 0, "libaio contexts or io_uring rings (0: libaio = completion threads, uring = max(completion threads, min(2 × CPUs, 64)))")
	fs.IntVar(&cfg.ThrottleLimit, "device-throttle-limit", device.DefaultThrottleLimit, "most requests in flight on the device")
	fs.IntVar(&cfg.CompletionThreads, "device-completion-threads", 0, completionThreadsUsage)
	fs.BoolVar(&cfg.InlineCompletion, "device-inline-completion", false, "localmemory: each worker's reads are copied and completed inside its own Submit and resubmitted by its loop, with no completion goroutine (the native backends complete on their reapers either way)")
	fs.IntVar(&cfg.SectorSize, "device-sector-size", 0, "alignment unit in bytes (0: logical_block_size of the disk under --dir)")
	profile := fs.String("cpuprofile", "", "write a pprof CPU profile of the timed passes to this `file` (go tool pprof -top tierbench file)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tierbench device [flags]

Measures the raw random-read IOPS of tierbench's device layer (the
reference's Device.benchmark). It prepares, or reuses, a set of --files files
of --file-size in --dir, each 512-byte unit stamped with a pattern derived
from its offset and written with O_DIRECT, then --threads workers each keep
--qd random reads of --block bytes in flight for --runtime seconds. Only
successful completions count; --verify also checks every read's bytes.
It prints IOPS, MB/s and completion latency (min, p50, p99, p99.9); with
--compare-fio it then runs the real fio with the same shape on the same files
(engine io_uring for uring, libaio for libaio; up to 32 reads submitted and
reaped per call, files and buffers registered on io_uring: fio's cheapest
reads) and prints the ratio.
With --passes N the two alternate (odd passes run fio first, since a virtual
disk's host cache favours whichever reads second) and medians are reported;
use a file set much larger than the host's cache (--files 8) for less bias.

Example:
  tierbench device --dir /var/tmp/tb --backend uring --file-size 1g --block 512 \
      --threads 1 --qd 64 --runtime 10 --compare-fio

Flags:
`)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	n, err := size.Parse(fileSize)
	if err != nil {
		fmt.Fprintf(stderr, "tierbench device: --file-size: %v\n", err)
		return 2
	}
	cfg.FileBytes = n
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "tierbench device: --cpuprofile: %v\n", err)
			return 1
		}
		defer f.Close()
		cfg.CPUProfile = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := device.RunBench(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tierbench device: %v\n", err)
		if errors.Is(err, device.ErrBenchConfig) {
			return 2
		}
		return 1
	}
	return 0
}
