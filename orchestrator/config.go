package orchestrator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/size"
)

// Profiles a run can start from; every field of a profile can be overridden.
const (
	ProfileQuick     = "quick"
	ProfileReference = "reference"
)

// Runtimes that start the server and the client.
const (
	RuntimeAuto    = "auto"
	RuntimeDocker  = "docker"
	RuntimeProcess = "process"
)

// Pin modes: PinPinned puts the server on node 0 and the client on node 1
// (disjoint CPU halves on a one-node host); PinNone leaves both free.
const (
	PinPinned = "pinned"
	PinNone   = "none"
)

// Config is everything one `tierbench run` needs. Zero fields take the
// profile's value, then the environment overrides (DATA, THREADS, PASSES,
// RUNTIME, as the reference generator accepts them), then explicit fields.
type Config struct {
	Profile string // quick | reference (default quick)

	DBSize      int64 // keys loaded and read (--dbsize)
	KeyLength   int   // bytes per key (--keylength)
	ValueLength int   // bytes per value (--valuelength)
	Threads     []int // client connections per cell, one table column each (-t)
	Batch       int   // GETs per pipelined batch (-b)
	CellSeconds int   // seconds per measured GET phase (bench --runtime)
	Passes      int   // passes per cell; the table shows their median

	WarmupSeconds int // seconds of the unrecorded first GET phase (default CellSeconds)
	LoadThreads   int // loader connections (default 8)
	LoadBatch     int // keys per loader MSET batch (default 4096 as in the reference)

	// Server sizing, passed to `tierbench server` as Garnet writes it.
	Memory, Page, Segment, Index string

	Backends []string // libaio, uring
	Pins     []string // pinned, none

	DataDir string // the server's --logdir; wiped before each row
	OutDir  string // the results bundle; created
	Resume  string // a bundle to complete: its cells already done are skipped

	Runtime string // docker | process | auto
	Binary  string // the static tierbench binary to run (default: this executable)

	ServerAddr string // HOST:PORT of a server already running: measure it instead of starting one
	ServerPID  int    // its pid on this host, for /proc/<pid>/io
	SkipLoad   bool   // do not load; still verify the key count

	Force      bool // measure even when a preflight check failed
	NoFio      bool // skip the fio baseline (the report then has no ceiling)
	FioSeconds int  // seconds per step of the fio depth sweep (0 = preflight's default)
	Silent     bool // no progress lines on stderr

	// StateDir keeps pid files of running children so a later run can
	// remove what an interrupted one left; default $TMPDIR/tierbench-state.
	StateDir string
}

// profiles holds the defaults of each profile. The quick profile keeps the
// reference's shape (16/96-byte records, four thread columns, -b 1024,
// median of passes) at a size a 2-CPU machine finishes in minutes, with the
// dataset still ≥ 20× the server's in-memory log so reads hit the device.
var profiles = map[string]Config{
	ProfileReference: {
		DBSize: 100_000_000, KeyLength: 16, ValueLength: 96,
		Threads: []int{8, 32, 48, 64}, Batch: 1024, CellSeconds: 12, Passes: 3,
		Memory: "16m", Page: "4m", Segment: "1g", Index: "8g",
		LoadThreads: 32, LoadBatch: 4096,
	},
	ProfileQuick: {
		DBSize: 2_700_000, KeyLength: 16, ValueLength: 96,
		Threads: []int{8, 32, 48, 64}, Batch: 256, CellSeconds: 2, Passes: 2,
		Memory: "16m", Page: "4m", Segment: "1g", Index: "256m",
		LoadThreads: 8, LoadBatch: 4096, WarmupSeconds: 1, FioSeconds: 2,
	},
}

// recordOverheadBytes is the store's per-record header, used only to
// estimate the dataset's size on the device for the ≥ 20 × memory rule.
const recordOverheadBytes = 16

// minDeviceToMemory is how many times the in-memory log the dataset must
// exceed, so that at most 1/20 of the keys can be answered from memory.
const minDeviceToMemory = 20

// resolve fills zero fields from the profile and the environment and
// checks the result; getenv is os.Getenv outside tests.
func (c Config) resolve(getenv func(string) string) (Config, error) {
	if c.Profile == "" {
		c.Profile = ProfileQuick
	}
	p, ok := profiles[c.Profile]
	if !ok {
		return c, fmt.Errorf("%w: unknown --profile %q (want quick or reference)", ErrConfig, c.Profile)
	}
	if v := getenv("DATA"); v != "" && c.DataDir == "" {
		c.DataDir = v
	}
	if v := getenv("THREADS"); v != "" && len(c.Threads) == 0 {
		t, err := ParseInts(v)
		if err != nil {
			return c, fmt.Errorf("%w: environment THREADS=%q: %w", ErrConfig, v, err)
		}
		c.Threads = t
	}
	if v := getenv("PASSES"); v != "" && c.Passes == 0 {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return c, fmt.Errorf("%w: environment PASSES=%q: want a positive integer", ErrConfig, v)
		}
		c.Passes = n
	}
	// RUNTIME is the reference generator's seconds per cell (its
	// Resp.benchmark --runtime), not this tool's --runtime.
	if v := getenv("RUNTIME"); v != "" && c.CellSeconds == 0 {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return c, fmt.Errorf("%w: environment RUNTIME=%q: want seconds per cell, a positive integer", ErrConfig, v)
		}
		c.CellSeconds = n
	}
	setInt64(&c.DBSize, p.DBSize)
	setInt(&c.KeyLength, p.KeyLength)
	setInt(&c.ValueLength, p.ValueLength)
	setInt(&c.Batch, p.Batch)
	setInt(&c.CellSeconds, p.CellSeconds)
	setInt(&c.Passes, p.Passes)
	setInt(&c.LoadThreads, p.LoadThreads)
	setInt(&c.LoadBatch, p.LoadBatch)
	setInt(&c.WarmupSeconds, p.WarmupSeconds)
	setInt(&c.FioSeconds, p.FioSeconds)
	setInt(&c.WarmupSeconds, c.CellSeconds)
	if len(c.Threads) == 0 {
		c.Threads = slices.Clone(p.Threads)
	}
	setString(&c.Memory, p.Memory)
	setString(&c.Page, p.Page)
	setString(&c.Segment, p.Segment)
	setString(&c.Index, p.Index)
	if len(c.Backends) == 0 {
		c.Backends = []string{"libaio", "uring"}
	}
	if len(c.Pins) == 0 {
		c.Pins = []string{PinPinned, PinNone}
	}
	setString(&c.Runtime, RuntimeAuto)
	setString(&c.DataDir, "/var/tmp/tierbench-data")
	setString(&c.StateDir, filepath.Join(os.TempDir(), "tierbench-state"))
	return c, c.validate()
}

func (c Config) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.DBSize < 1 {
		bad("--dbsize %d: want at least 1 key", c.DBSize)
	}
	if c.KeyLength < 1 || c.ValueLength < 1 {
		bad("--keylength %d / --valuelength %d: want positive lengths", c.KeyLength, c.ValueLength)
	}
	if c.Batch < 1 || c.CellSeconds < 1 || c.Passes < 1 || c.WarmupSeconds < 0 || c.LoadThreads < 1 || c.LoadBatch < 1 {
		bad("--batch %d, --cell-seconds %d, --passes %d, load threads %d: want positive values", c.Batch, c.CellSeconds, c.Passes, c.LoadThreads)
	}
	for _, t := range c.Threads {
		if t < 1 {
			bad("--threads %v: want positive thread counts", c.Threads)
			break
		}
	}
	for _, b := range c.Backends {
		if b != "libaio" && b != "uring" {
			bad("--backends: unknown backend %q (want libaio, uring)", b)
		}
	}
	for _, p := range c.Pins {
		if p != PinPinned && p != PinNone {
			bad("--pin: unknown pin mode %q (want pinned, none)", p)
		}
	}
	switch c.Runtime {
	case RuntimeAuto, RuntimeDocker, RuntimeProcess:
	default:
		bad("--runtime %q: want docker, process or auto", c.Runtime)
	}
	if c.ServerAddr == "" && c.SkipLoad {
		bad("--skip-load needs --server-addr: a server this run starts is always empty")
	}
	if c.ServerAddr == "" {
		mem, err1 := size.Parse(c.Memory)
		for _, s := range []string{c.Memory, c.Page, c.Segment, c.Index} {
			if _, err := size.Parse(s); err != nil {
				bad("server size: %v", err)
			}
		}
		if err1 == nil && !c.Force {
			data := c.DBSize * int64(recordBytes(c.KeyLength, c.ValueLength))
			if data < minDeviceToMemory*mem {
				bad("dataset %d keys × %d B = %s is less than %d × --memory %s: reads would be served from memory; raise --dbsize or lower --memory (--force measures anyway, and the device-hit check then marks the cells)",
					c.DBSize, recordBytes(c.KeyLength, c.ValueLength), humanBytes(data), minDeviceToMemory, c.Memory)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	return nil
}

// ErrConfig wraps every error of a configuration that cannot run: the
// command line maps it to a usage error.
var ErrConfig = errors.New("orchestrator: bad configuration")

// recordBytes estimates one record's bytes on the log: header, key and
// value rounded up to 8 bytes (16 + 16 + 96 = 128 for the reference).
func recordBytes(keyLength, valueLength int) int {
	return (recordOverheadBytes + keyLength + valueLength + 7) &^ 7
}

func setInt(dst *int, v int) {
	if *dst == 0 {
		*dst = v
	}
}

func setInt64(dst *int64, v int64) {
	if *dst == 0 {
		*dst = v
	}
}

func setString(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// ParseInts parses a list like "8,32,48,64" or "8 32 48 64" (the
// reference generator's THREADS); errors name the bad element.
func ParseInts(s string) ([]int, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
