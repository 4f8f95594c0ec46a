package device

import (
	"errors"
	"fmt"
	"io"
)

// What the raw random-read benchmark is asked to run (BenchConfig) and
// what it reports (BenchResult).

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

	// CPUProfile, when set, receives a pprof CPU profile of the timed
	// passes only (the file set's preparation is left out).
	CPUProfile io.Writer
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
	// StealShare is BenchResult's, over fio's run.
	StealShare *float64 `json:"steal_share,omitempty"`
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
	CPUMicrosPerOp float64 `json:"cpu_us_per_op"`
	// StealShare is the share of the host's CPU time the hypervisor took
	// during the timed window (/proc/stat steal); nil where not counted.
	// Passes that ran while the host was not quiet read low.
	StealShare   *float64     `json:"steal_share,omitempty"`
	Passes       []PassResult `json:"passes"` // every pass; the fields above are the median pass
	Fio          *FioResult   `json:"fio,omitempty"`
	FioAlongside bool         `json:"fio_alongside,omitempty"` // fio ran at the same time, sharing the disk
	RatioToFio   float64      `json:"ratio_to_fio,omitempty"`
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

// PassResult is one pass of a multi-pass run.
type PassResult struct {
	IOPS    float64 `json:"iops"`
	FioIOPS float64 `json:"fio_iops,omitempty"`
	Ratio   float64 `json:"ratio_to_fio,omitempty"`
	// StealShare and FioStealShare are the host's steal during the pass's
	// two runs: a ratio from a pass where one side ran on a host that was
	// not quiet says more about the host than about the device layer.
	StealShare    *float64 `json:"steal_share,omitempty"`
	FioStealShare *float64 `json:"fio_steal_share,omitempty"`
}
