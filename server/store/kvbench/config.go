package kvbench

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/server/store"
)

// Config is one invocation of the benchmark.
type Config struct {
	Store store.Config

	DBSize      int64 // keys 0..DBSize-1, each loaded exactly once
	KeyLength   int   // key bytes: the index in decimal, zero-padded
	ValueLength int   // value bytes
	LoadThreads int   // load goroutines

	Threads  []int         // one run per entry
	RUMD     [4]int        // percent of reads, upserts, read-modify-writes, deletes
	Zipf     bool          // zipf-distributed keys (lowest indices hottest) instead of uniform
	Theta    float64       // zipf skew, 0 < Theta < 1
	Runtime  time.Duration // per run; 0 loads only
	InFlight int           // reads a worker keeps queued or in flight
	Seed     uint64        // seed of the key draws
	Verify   bool          // check every value read against the loaded one
	JSON     bool          // one JSON document on stdout; human lines to stderr

	// Passes is the number of timed runs per thread count; the result is
	// the median pass.
	Passes int
	// CompareFio alternates each pass with a real fio run on the same disk
	// (a file in Store.LogDir): random reads of FioBlockBytes, one job at
	// FioDepth, io_uring, as long as a pass; each run reports its ratio to
	// the median fio IOPS.
	CompareFio    bool
	FioDepth      int
	FioBlockBytes int
	FioFileBytes  int64

	// Settle waits between the load and the runs for the disk to read at
	// its ceiling again (package settle's rule): read-only rounds of the
	// store at the largest thread count until one reads settle.Share of
	// SettleTargetOpsPerSec, or, with no target, until they stop getting
	// faster. The load has just written the whole dataset; without the
	// wait the runs can measure the disk's write-back.
	Settle                bool
	SettleTargetOpsPerSec float64

	// CPUProfile, when set, receives a pprof CPU profile of the timed runs
	// only (the load is left out).
	CPUProfile io.Writer
}

// DefaultConfig returns the defaults of the command line: the reference's
// record shape (16 B keys, 96 B values: 128 B records), 100 % reads.
func DefaultConfig() Config {
	return Config{
		DBSize:      1 << 20,
		KeyLength:   16,
		ValueLength: 96,
		LoadThreads: 2,
		Threads:     []int{1, 2},
		RUMD:        [4]int{100, 0, 0, 0},
		Theta:       0.99,
		Runtime:     10 * time.Second,
		InFlight:    128,
		Seed:        1,
		Passes:      1,

		FioDepth:      64,
		FioBlockBytes: 512,
		FioFileBytes:  1 << 30,
	}
}

// ErrUsage is wrapped by Validate's errors: the configuration is wrong.
var ErrUsage = errors.New("kvbench: bad configuration")

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Validate checks the benchmark's own settings; the store checks its own.
func (c Config) Validate() error {
	switch {
	case c.DBSize < 1:
		return usagef("--dbsize %d: want at least 1 key", c.DBSize)
	case c.KeyLength < keyspace.Digits(uint64(c.DBSize-1)):
		return usagef("--keylength %d: keys up to %d need %d digits", c.KeyLength, c.DBSize-1, keyspace.Digits(uint64(c.DBSize-1)))
	case c.ValueLength < 0:
		return usagef("--valuelength %d: want 0 or more", c.ValueLength)
	case c.LoadThreads < 1:
		return usagef("--load-threads %d: want at least 1", c.LoadThreads)
	case len(c.Threads) == 0:
		return usagef("-t: want at least one thread count")
	case c.Runtime < 0:
		return usagef("--runtime %v: want 0 (load only) or more", c.Runtime)
	case c.InFlight < 1:
		return usagef("--itp %d: want at least 1 read in flight per thread", c.InFlight)
	case c.Passes < 1:
		return usagef("--passes %d: want at least 1", c.Passes)
	case c.CompareFio && (!c.Store.StorageTier || c.Store.DeviceType == "localmemory" || c.Store.LogDir == ""):
		return usagef("--compare-fio needs --storage-tier with the native device and a --logdir on the disk to measure")
	case c.CompareFio && c.Runtime < time.Second:
		return usagef("--compare-fio needs --runtime of at least 1 second")
	case c.CompareFio && (c.FioDepth < 1 || c.FioBlockBytes < 512 || c.FioFileBytes < int64(c.FioBlockBytes)):
		return usagef("--fio-depth %d, --fio-block %d, --fio-file-size %d: want a depth of at least 1, a block of at least 512 B and a file of at least a block",
			c.FioDepth, c.FioBlockBytes, c.FioFileBytes)
	case c.SettleTargetOpsPerSec < 0:
		return usagef("--settle-target %v: want 0 (none) or more ops/s", c.SettleTargetOpsPerSec)
	case c.SettleTargetOpsPerSec > 0 && !c.Settle:
		return usagef("--settle-target needs --settle")
	case c.Zipf && (c.Theta <= 0 || c.Theta >= 1):
		return usagef("--zipf-theta %v: want between 0 and 1", c.Theta)
	}
	for _, t := range c.Threads {
		if t < 1 {
			return usagef("-t %d: want thread counts of at least 1", t)
		}
	}
	sum := 0
	for _, p := range c.RUMD {
		if p < 0 {
			return usagef("--rumd %v: shares must not be negative", c.RUMD)
		}
		sum += p
	}
	if sum != 100 {
		return usagef("--rumd %d,%d,%d,%d: shares add up to %d, want 100", c.RUMD[0], c.RUMD[1], c.RUMD[2], c.RUMD[3], sum)
	}
	if c.Verify && (c.RUMD[2] != 0 || c.RUMD[3] != 0) {
		return usagef("--verify needs a mix without RMW and deletes (--rumd %d,%d,%d,%d): they change values", c.RUMD[0], c.RUMD[1], c.RUMD[2], c.RUMD[3])
	}
	return nil
}
