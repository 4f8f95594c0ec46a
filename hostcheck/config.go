package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/fio"
)

// Config is what preflight checks and plans for. The zero values of the
// planning fields take the reference run's figures (see Defaults).
type Config struct {
	// Root is the directory every /sys and /proc read goes through; "" means
	// "/". Tests point it at a fake tree under testdata.
	Root string
	// DataDir is where the store's log will live; the O_DIRECT probe, the
	// free-space check and the fio baseline run there. It is created when
	// missing and removed again afterwards if preflight created it.
	DataDir string

	Threads     []int // client thread counts of the planned matrix
	QueueDepth  int   // device reads in flight per thread
	DBSize      int64 // records in the planned dataset
	RecordBytes int   // bytes per record on the device, header included
	IndexBytes  int64 // hash index memory (Garnet --index)
	MemoryBytes int64 // in-memory log size (Garnet --memory)

	FIO               bool  // run the fio baseline
	FIOFileBytes      int64 // size of each of the fio files
	FIOFiles          int   // number of fio files, shared by all jobs
	FIORuntimeSeconds int   // per step of the depth sweep
	// FIOMaxDepth is the depth the sweep must reach: the reads in flight
	// the server keeps at most (0: device.DefaultThrottleLimit).
	FIOMaxDepth int
	// FIOFullSweep runs every depth even when IOPS stopped growing.
	FIOFullSweep bool
	// Progress, when set, gets one line per fio sweep step as it finishes
	// (sweepprogress.go); the sweep is otherwise silent for minutes.
	Progress io.Writer
	// FIOCPUs, when set, runs the sweep a second time with fio pinned to
	// these CPUs (a list such as 0 or 0-3) and FIOMems (NUMA nodes, ""
	// leaves memory free): the ceiling of a server pinned there
	// (Report.FIOPinned).
	FIOCPUs, FIOMems string

	JSON bool // one JSON document on the output instead of the table

	// Probes replace the kernel and engine probes that a fake tree cannot
	// fake; nil fields use the real ones. The O_DIRECT probe is never
	// replaced: it always really writes and reads the data dir.
	Probes Probes
	// Now gives the fingerprint's time; nil means time.Now.
	Now func() time.Time
}

// Probes are the checks that talk to the running kernel or to other
// programs rather than to files under Root.
type Probes struct {
	IOUring func() error                                               // io_uring_setup and close
	LibAIO  func() error                                               // io_setup and io_destroy
	Docker  func(ctx context.Context) (DockerInfo, error)              // engine facts
	FIO     func(ctx context.Context, job fio.Job) (fio.Result, error) // one fio run
}

// Defaults of the planning fields: the reference's matrix and dataset
// (100 M × 128 B records, --index 8g --memory 16m, threads 8..64).
const (
	DefaultQueueDepth        = 64
	DefaultDBSize            = 100_000_000
	DefaultRecordBytes       = 128
	DefaultIndexBytes        = 8 << 30
	DefaultMemoryBytes       = 16 << 20
	DefaultFIOFileBytes      = 64 << 20
	DefaultFIOFiles          = 8
	DefaultFIORuntimeSeconds = 5
)

// DefaultDataDir is the probes' directory when none is given: in a
// directory of this user's (made 0700 with it), on the disk below
// /var/tmp rather than a tmpfs, so that no other user can have made it
// first or put a link in it.
var DefaultDataDir = filepath.Join("/var/tmp", "tierbench-"+strconv.Itoa(os.Geteuid()), "preflight")

// DefaultThreads is the reference matrix's thread sweep.
var DefaultThreads = []int{8, 32, 48, 64}

// ErrConfig marks a Config that cannot be run; the command maps it to a
// usage error.
var ErrConfig = errors.New("hostcheck: invalid configuration")

func (c Config) withDefaults() Config {
	if c.Root == "" {
		c.Root = "/"
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if len(c.Threads) == 0 {
		c.Threads = DefaultThreads
	}
	if c.QueueDepth == 0 {
		c.QueueDepth = DefaultQueueDepth
	}
	if c.DBSize == 0 {
		c.DBSize = DefaultDBSize
	}
	if c.RecordBytes == 0 {
		c.RecordBytes = DefaultRecordBytes
	}
	if c.IndexBytes == 0 {
		c.IndexBytes = DefaultIndexBytes
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	if c.FIOFileBytes == 0 {
		c.FIOFileBytes = DefaultFIOFileBytes
	}
	if c.FIOFiles == 0 {
		c.FIOFiles = DefaultFIOFiles
	}
	if c.FIORuntimeSeconds == 0 {
		c.FIORuntimeSeconds = DefaultFIORuntimeSeconds
	}
	if c.FIOMaxDepth == 0 {
		c.FIOMaxDepth = device.DefaultThrottleLimit
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports the first field that cannot be planned with, wrapped in
// ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	for _, t := range c.Threads {
		if t <= 0 {
			return fmt.Errorf("%w: thread count %d is not positive", ErrConfig, t)
		}
	}
	switch {
	case c.QueueDepth < 0:
		return fmt.Errorf("%w: queue depth %d is negative", ErrConfig, c.QueueDepth)
	case c.DBSize < 0:
		return fmt.Errorf("%w: dbsize %d is negative", ErrConfig, c.DBSize)
	case c.RecordBytes < 0:
		return fmt.Errorf("%w: record size %d B is negative", ErrConfig, c.RecordBytes)
	case c.IndexBytes < 0, c.MemoryBytes < 0:
		return fmt.Errorf("%w: index %d B or memory %d B is negative", ErrConfig, c.IndexBytes, c.MemoryBytes)
	case c.FIOFileBytes < 4096:
		return fmt.Errorf("%w: fio file size %d B is below one 4 KiB block", ErrConfig, c.FIOFileBytes)
	case c.FIOMaxDepth < 0:
		return fmt.Errorf("%w: fio sweep depth %d is negative", ErrConfig, c.FIOMaxDepth)
	case c.FIOFiles < 0, c.FIORuntimeSeconds < 0:
		return fmt.Errorf("%w: fio files %d or runtime %d s is negative", ErrConfig, c.FIOFiles, c.FIORuntimeSeconds)
	case c.FIOMems != "" && c.FIOCPUs == "":
		return fmt.Errorf("%w: fio memory nodes %q without fio CPUs (--fio-mems needs --fio-cpus)", ErrConfig, c.FIOMems)
	}
	for _, l := range []struct{ what, list string }{{"CPUs", c.FIOCPUs}, {"memory nodes", c.FIOMems}} {
		if _, err := cpulist.Parse(l.list); l.list != "" && err != nil {
			return fmt.Errorf("%w: fio %s %q: %v", ErrConfig, l.what, l.list, err)
		}
	}
	return nil
}
