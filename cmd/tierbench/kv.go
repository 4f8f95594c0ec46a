package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/server/store/kvbench"
)

func init() {
	register(command{name: "kv", summary: "in-process benchmark of the tiered store (the KV layer)", run: runKV})
}

const kvUsage = `Usage: tierbench kv [flags]

kv measures the tiered store in-process, without RESP (the role of Garnet's
KV.benchmark): it opens a store with the server's store flags, loads keys
0..dbsize-1 exactly once with --load-threads (a key is its index in decimal,
zero-padded to --keylength), then for each thread count of -t runs a random
mix of reads, upserts, read-modify-writes and deletes (--rumd, in percent)
for --runtime seconds, each thread keeping --itp reads in flight on the
device. It prints load and run throughput, the device reads per op, and the
store's addresses; --json prints one JSON document on stdout.

Example: 2.5 M 128 B records, 16 MB in memory and the rest on the disk, 100 % GET:
  tierbench kv --storage-tier --logdir /var/tmp/kv --memory 16m --index 64m \
      --device-io-backend uring --dbsize 2500000 --keylength 16 --valuelength 96 \
      -t 1,2 --rumd 100,0,0,0 --runtime 10
and the same beside fio on the same disk, median of 3 alternating passes:
  tierbench kv --storage-tier --logdir /var/tmp/kv --memory 16m --index 64m \
      --device-io-backend uring --dbsize 2500000 -t 2 --passes 3 --compare-fio
and, after a load large enough to leave the disk writing back, the runs
wait until the store reads at 90 % of fio's 70 K IOPS again:
  tierbench kv ... --settle --settle-target 70000

Flags:
`

func runKV(args []string, stdout, stderr io.Writer) int {
	cfg := kvbench.DefaultConfig()
	fs := flag.NewFlagSet("tierbench kv", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), kvUsage)
		fs.PrintDefaults()
	}
	storeConfig := bindStoreFlags(fs)
	fs.Int64Var(&cfg.DBSize, "dbsize", cfg.DBSize, "distinct `keys`: indices 0..dbsize-1, each loaded once")
	fs.IntVar(&cfg.KeyLength, "keylength", cfg.KeyLength, "key `bytes`: the index zero-padded")
	fs.IntVar(&cfg.ValueLength, "valuelength", cfg.ValueLength, "value `bytes`")
	fs.IntVar(&cfg.LoadThreads, "load-threads", cfg.LoadThreads, "load `goroutines`, each with its own session")
	threads := fs.String("t", "1,2", "thread-count `sweep`, comma-separated: one run per count")
	rumd := fs.String("rumd", "100,0,0,0", "`mix` of reads, upserts, read-modify-writes, deletes in percent")
	fs.BoolVar(&cfg.Zipf, "zipf", false, "zipf-distributed keys (lowest indices hottest) instead of uniform")
	fs.Float64Var(&cfg.Theta, "zipf-theta", cfg.Theta, "zipf skew `theta`, between 0 and 1")
	runtime := fs.Int("runtime", int(cfg.Runtime/time.Second), "`seconds` per run; 0 loads only")
	fs.IntVar(&cfg.InFlight, "itp", cfg.InFlight, "`reads` each thread keeps queued or in flight")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "`seed` of the key draws")
	fs.BoolVar(&cfg.Verify, "verify", false, "check every value read against the loaded one (mixes without RMW and deletes)")
	fs.BoolVar(&cfg.JSON, "json", false, "print one JSON document on stdout; human lines go to stderr")
	fs.IntVar(&cfg.Passes, "passes", cfg.Passes, "timed `runs` per thread count; the median one is reported")
	fs.BoolVar(&cfg.CompareFio, "compare-fio", false, "alternate every pass with the real fio (io_uring random reads, registered, up to 32 submitted and reaped per call) on a file in --logdir and print the ratio kv/fio")
	fs.IntVar(&cfg.FioDepth, "fio-depth", cfg.FioDepth, "--compare-fio: fio `iodepth` (one job)")
	fs.IntVar(&cfg.FioBlockBytes, "fio-block", cfg.FioBlockBytes, "--compare-fio: fio block `bytes`")
	fioFile := fs.String("fio-file-size", size.Format(cfg.FioFileBytes), "--compare-fio: `size` of the fio file")
	fs.BoolVar(&cfg.Settle, "settle", false, "after the load, probe with 2 s read-only rounds until the disk reads at its ceiling again (90 % of --settle-target, or no faster 3 probes in a row; at most 3 min): a load leaves the disk writing back for seconds to minutes")
	fs.Float64Var(&cfg.SettleTargetOpsPerSec, "settle-target", 0, "--settle: the `ops/s` the disk is held against, say fio's ceiling; 0 waits for a plateau")
	profile := fs.String("cpuprofile", "", "write a pprof CPU profile of the timed runs to this `file` (go tool pprof -top tierbench file)")
	if status, ok := parseArgs(fs, args, 0, stdout, stderr); !ok {
		return status
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "tierbench kv: "+format+"\n\n", a...)
		fs.Usage()
		return 2
	}
	var err error
	if cfg.Store, err = storeConfig(); err != nil {
		return usageErr("%v", err)
	}
	if cfg.Threads, err = parseInts(*threads); err != nil {
		return usageErr("-t: %v", err)
	}
	mix, err := parseInts(*rumd)
	if err != nil || len(mix) != 4 {
		return usageErr("--rumd %q: want four comma-separated percentages, like 100,0,0,0", *rumd)
	}
	copy(cfg.RUMD[:], mix)
	if cfg.FioFileBytes, err = size.Parse(*fioFile); err != nil {
		return usageErr("--fio-file-size: %v", err)
	}
	if *runtime < 0 {
		return usageErr("--runtime %d: want 0 (load only) or more seconds", *runtime)
	}
	cfg.Runtime = time.Duration(*runtime) * time.Second
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", strings.TrimPrefix(err.Error(), kvbench.ErrUsage.Error()+": "))
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "tierbench kv: --cpuprofile: %v\n", err)
			return 1
		}
		defer f.Close()
		cfg.CPUProfile = f
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := kvbench.Run(ctx, cfg, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "tierbench kv: %v\n", err)
		return 1
	}
	return 0
}
