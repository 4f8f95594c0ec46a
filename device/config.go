package device

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Backend names accepted by Config.Backend.
const (
	BackendLibaio      = "libaio"
	BackendUring       = "uring"
	BackendLocalMemory = "localmemory"
)

// Defaults, named after the reference's knobs.
const (
	// DefaultThrottleLimit is the in-flight cap (--device-throttle-limit).
	DefaultThrottleLimit = 4096
	// DefaultCompletionThreads is the reference's number of completion
	// goroutines (--device-completion-threads); a Config with
	// CompletionThreads == 0 gets it capped at the CPUs the process may
	// use (CompletionThreadsFor).
	DefaultCompletionThreads = 4
	// maxSegmentFiles bounds the segment number so that a wild offset
	// cannot make the device grow a file table of billions of entries.
	maxSegmentFiles = 1 << 20
)

// Config describes one device. The zero values of the optional fields pick
// the reference's defaults.
type Config struct {
	Backend           string         // "libaio" | "uring" | "localmemory"
	Dir               string         // segment files live here: <Dir>/segment.<N> (localmemory: unused)
	SegmentBytes      uint64         // size of one segment file; Offset/SegmentBytes picks the file
	SectorSize        int            // 0 = logical_block_size of the backing device (512 typical)
	ThrottleLimit     int            // max requests in flight (default 4096 like Garnet's --device-throttle-limit)
	CompletionThreads int            // reaping goroutines (default CompletionThreadsFor(GOMAXPROCS): 4, at most one per CPU)
	IOContexts        int            // libaio contexts / io_uring rings (uring default max(CompletionThreads, min(2*CPUs,64)); libaio default = CompletionThreads)
	OnComplete        CompletionFunc // required
	// Warm, when set, is called on the reaper for each request of a batch
	// it has just taken from the kernel, before the first OnComplete of
	// that batch, with the request's UserData. It must only start loading
	// what OnComplete will touch (a prefetch) and return: the misses of a
	// whole batch then overlap, where OnComplete alone would stall on each
	// request's state in turn.
	Warm func(userData uint64)
	// AfterGroup, when set, is called on a reaper after each group of
	// completions it delivered (every reapSubmitLimit of them on the file
	// backends, and at the end of every batch), before it hands the kernel
	// what completion functions submitted. A caller that resubmits from
	// OnComplete can gather its requests and Submit them here in one call:
	// a file backend recognises a Submit from its own reaper with a system
	// call (gettid), once per call, which at one resubmit per completion
	// was a tenth of the device bench's CPU samples.
	AfterGroup func()
	// InlineCompletion (--device-inline-completion) lets the caller take
	// its completions: on localmemory, Submit copies each request and calls
	// OnComplete on the submitting goroutine before it returns, with no
	// completion goroutine, queue or throttle slot in between. OnComplete
	// must then not call Submit (it would recurse); a caller that keeps a
	// queue depth resubmits from its own loop. The file backends complete
	// on their reapers either way: there the flag changes nothing.
	InlineCompletion bool
}

// Describer is implemented by every backend: a one-line account of the
// resources it really got (contexts, rings, depths, sector size), which may
// differ from what was asked when the kernel's limits forced a reduction.
type Describer interface {
	Describe() string
}

// CompletionThreadsFor is the number of completion goroutines a Config
// with CompletionThreads == 0 gets on a process that may run on procs CPUs
// (GOMAXPROCS, which follows the affinity mask and the cgroup's CPU limit):
// the reference's 4, but never more than procs. A completion goroutine
// beyond the CPUs adds nothing but hand-offs: it can only run by taking a
// CPU from the submitters or from another completion goroutine.
func CompletionThreadsFor(procs int) int {
	return max(1, min(DefaultCompletionThreads, procs))
}

// DefaultIOContexts is the number of libaio contexts or io_uring rings a
// Config with IOContexts == 0 gets: for io_uring the reference's
// max(completion threads, min(2 × CPUs, 64)), for libaio one context per
// completion thread.
func DefaultIOContexts(backend string, completionThreads int) int {
	if completionThreads <= 0 {
		completionThreads = CompletionThreadsFor(runtime.GOMAXPROCS(0))
	}
	switch backend {
	case BackendUring:
		return max(completionThreads, min(2*runtime.NumCPU(), 64))
	default:
		return completionThreads
	}
}

// withDefaults returns cfg with its zero fields filled in, or an error naming
// the first field that is wrong.
func (cfg Config) withDefaults() (Config, error) {
	switch cfg.Backend {
	case BackendLibaio, BackendUring, BackendLocalMemory:
	case "":
		return cfg, errors.New("device: Config.Backend is empty, want libaio, uring or localmemory")
	default:
		return cfg, fmt.Errorf("device: unknown backend %q, want libaio, uring or localmemory", cfg.Backend)
	}
	if cfg.OnComplete == nil {
		return cfg, errors.New("device: Config.OnComplete is nil")
	}
	if cfg.Backend != BackendLocalMemory && cfg.Dir == "" {
		return cfg, fmt.Errorf("device: Config.Dir is empty; the %s backend keeps its segment files there", cfg.Backend)
	}
	if cfg.ThrottleLimit < 0 || cfg.CompletionThreads < 0 || cfg.IOContexts < 0 || cfg.SectorSize < 0 {
		return cfg, fmt.Errorf("device: negative knob (throttle limit %d, completion threads %d, io contexts %d, sector size %d)",
			cfg.ThrottleLimit, cfg.CompletionThreads, cfg.IOContexts, cfg.SectorSize)
	}
	if cfg.ThrottleLimit == 0 {
		cfg.ThrottleLimit = DefaultThrottleLimit
	}
	if cfg.ThrottleLimit > 1<<20 {
		return cfg, fmt.Errorf("device: throttle limit %d above the maximum %d", cfg.ThrottleLimit, 1<<20)
	}
	if cfg.CompletionThreads == 0 {
		cfg.CompletionThreads = CompletionThreadsFor(runtime.GOMAXPROCS(0))
	}
	if cfg.CompletionThreads > 1024 {
		return cfg, fmt.Errorf("device: %d completion threads, want at most 1024", cfg.CompletionThreads)
	}
	if cfg.IOContexts == 0 {
		cfg.IOContexts = DefaultIOContexts(cfg.Backend, cfg.CompletionThreads)
	}
	if cfg.IOContexts > 1024 {
		return cfg, fmt.Errorf("device: %d io contexts, want at most 1024", cfg.IOContexts)
	}
	if cfg.SectorSize == 0 {
		if cfg.Backend == BackendLocalMemory && cfg.Dir == "" {
			cfg.SectorSize = 512
		} else {
			if err := mkdirAll(cfg.Dir); err != nil {
				return cfg, err
			}
			cfg.SectorSize = SectorSizeOf(cfg.Dir)
		}
	}
	if cfg.SectorSize&(cfg.SectorSize-1) != 0 || cfg.SectorSize < 512 || cfg.SectorSize > 64<<10 {
		return cfg, fmt.Errorf("device: sector size %d, want a power of two from 512 to 65536", cfg.SectorSize)
	}
	if cfg.SegmentBytes == 0 || cfg.SegmentBytes%uint64(cfg.SectorSize) != 0 {
		return cfg, fmt.Errorf("device: segment size %d bytes, want a positive multiple of the sector size %d",
			cfg.SegmentBytes, cfg.SectorSize)
	}
	return cfg, nil
}

// Open validates cfg and opens the device. For the file backends it creates
// Dir if needed and opens the segment files already there; missing segment
// files are created by the first write that reaches them.
func Open(cfg Config) (Device, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	switch cfg.Backend {
	case BackendLocalMemory:
		return openLocalMemory(cfg)
	case BackendLibaio:
		return openLibaio(cfg)
	default:
		return openUring(cfg)
	}
}

// SectorSizeOf returns the logical block size of the block device holding
// path, read from sysfs, or 512 when it cannot be found (a filesystem with
// no backing block device, such as tmpfs or overlay, which O_DIRECT will
// refuse anyway).
func SectorSizeOf(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 512
	}
	n, err := LogicalBlockSize("/sys", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err != nil {
		return 512
	}
	return n
}

// LogicalBlockSize reads queue/logical_block_size of the block device
// major:minor under sysRoot (normally "/sys"). A partition has no queue
// directory of its own, so for one the parent disk's is read.
func LogicalBlockSize(sysRoot string, major, minor uint32) (int, error) {
	dev := filepath.Join(sysRoot, "dev", "block", fmt.Sprintf("%d:%d", major, minor))
	p := filepath.Join(dev, "queue", "logical_block_size")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		real, rerr := filepath.EvalSymlinks(dev)
		if rerr != nil {
			return 0, fmt.Errorf("device: block device %d:%d: %w", major, minor, rerr)
		}
		p = filepath.Join(filepath.Dir(real), "queue", "logical_block_size")
		b, err = os.ReadFile(p)
	}
	if err != nil {
		return 0, fmt.Errorf("device: logical block size of %d:%d: %w", major, minor, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 512 || n&(n-1) != 0 {
		return 0, fmt.Errorf("device: %s holds %q, want a power of two ≥ 512", p, strings.TrimSpace(string(b)))
	}
	return n, nil
}

// segmentPath is the file of segment n.
func segmentPath(dir string, n uint64) string {
	return filepath.Join(dir, "segment."+strconv.FormatUint(n, 10))
}

// ErrKernelRefused wraps the errno of a setup syscall (io_setup,
// io_uring_setup) that says the backend is not available on this host:
// ENOSYS (a kernel built without it, or a seccomp filter answering so),
// EPERM (kernel.io_uring_disabled, Docker's default seccomp profile) and,
// for io_setup only, EAGAIN (fs.aio-max-nr exhausted host-wide). Any other
// errno (EINVAL for a setup struct or flag this kernel does not take,
// ENOMEM, EFAULT) is a plain error: a bug or a misconfiguration here, never
// a reason to fall back to another backend or to skip a test.
var ErrKernelRefused = errors.New("device: the kernel refused the backend")

// setupError is the error of setup syscall call (with its arguments, as
// "io_uring_setup(64 entries)") that failed with errno e: ErrKernelRefused
// when e is one of unavailable, a plain error otherwise.
func setupError(call string, e unix.Errno, unavailable ...unix.Errno) error {
	if slices.Contains(unavailable, e) {
		return fmt.Errorf("%w: %s: %w", ErrKernelRefused, call, e)
	}
	return fmt.Errorf("device: %s: %w", call, e)
}
