package plan

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/bench"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
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
// profile's value, then the environment overrides (EnvVars:
// TIERBENCH_DATA, TIERBENCH_THREADS, TIERBENCH_PASSES,
// TIERBENCH_CELL_SECONDS), then explicit fields.
// A field whose flag name is in Given was set on purpose: its zero is kept
// (--warmup-seconds 0 means no warm-up) or refused with the flag's name
// (--passes 0), never replaced by the profile's value.
type Config struct {
	// Workload is everything the bundle's plan.json records of the run:
	// Record returns it as it is, and ConfigOf takes it back for
	// --resume, so a field added there is recorded and resumed alike.
	results.Workload

	// ServerPassword is --server-addr's password, read from --auth-file
	// or --auth-env; never recorded.
	ServerPassword string
	// FromEnv lists the environment variables resolve used, as
	// "TIERBENCH_DATA=/mnt/x (--data)": the run says each, since a
	// variable set long ago changes what it measures (and names the
	// directory it empties).
	FromEnv []string
	// Notes are what resolve decided that the user did not ask for (a
	// profile's default turned off for a combination that cannot have
	// it); the run prints them first.
	Notes []string
}

// Explicit reports whether the flag name was set explicitly.
func (c Config) Explicit(name string) bool { return slices.Contains(c.Given, name) }

// OpMix is the mix the measured cells run, spelled as bench --op-mix
// takes it: Workload's preset resolved, or Workload itself; "" for GETs.
func (c Config) OpMix() (string, error) {
	if c.Mix == "" {
		return "", nil
	}
	if mix, ok := bench.Workloads[strings.ToLower(c.Mix)]; ok {
		return mix, nil
	}
	mix, err := bench.ParseOpMix(c.Mix)
	if err != nil {
		return "", fmt.Errorf("%q is neither a preset (ycsb-a, ycsb-b, ycsb-c, ycsb-f) nor a mix: %w", c.Mix, err)
	}
	return bench.MixString(mix), nil
}

// Profiles holds the defaults of each profile. The quick profile keeps the
// reference's shape (16/96-byte records, four thread columns, median of
// passes) at a size a 2-CPU machine finishes in minutes, with the dataset
// still ≥ 20× the server's in-memory log so reads hit the device. Its -b is
// 256, not the reference's 1024 (so since the first quick profile): on a
// pinned CPU the two read the same share of its fio ceiling within a run's
// noise (docs/notes/2026-12-07-quick-batch.md).
var Profiles = map[string]Config{
	ProfileReference: {
		Workload: results.Workload{
			DBSize:      100_000_000,
			KeyLength:   16,
			ValueLength: 96,
			Threads:     []int{8, 32, 48, 64},
			Batch:       1024,
			CellSeconds: 12,
			Passes:      3,
			Memory:      "16m",
			Page:        "4m",
			Segment:     "1g",
			Index:       "8g",
			LoadThreads: 32,
			LoadBatch:   4096,
			Latency:     true,
		},
	},
	ProfileQuick: {
		Workload: results.Workload{
			DBSize:        2_700_000,
			KeyLength:     16,
			ValueLength:   96,
			Threads:       []int{8, 32, 48, 64},
			Batch:         256,
			CellSeconds:   2,
			Passes:        2,
			Memory:        "16m",
			Page:          "4m",
			Segment:       "1g",
			Index:         "256m",
			LoadThreads:   8,
			LoadBatch:     4096,
			WarmupSeconds: 1,
			FioSeconds:    2,
		},
	},
}

// Resolve fills zero fields from the profile and the environment and
// checks the result against every part; getenv is os.Getenv outside
// tests.
func (c Config) Resolve(getenv func(string) string, parts []Part) (Config, error) {
	if c.Profile == "" {
		c.Profile = ProfileQuick
	}
	if err := c.parseServerAddr(); err != nil {
		return c, err
	}
	if err := c.readServerAuth(); err != nil {
		return c, err
	}
	if err := c.resolveScenario(); err != nil {
		return c, err
	}
	p, ok := profileFor(c.ScenarioName(), c.Profile)
	if !ok {
		return c, fmt.Errorf("%w: unknown --profile %q (want quick or reference)", fault.ErrConfig, c.Profile)
	}
	if err := c.resolveEnv(getenv); err != nil {
		return c, err
	}
	orProfile := func(dst *int, flagName string, v int) {
		if *dst == 0 && !c.Explicit(flagName) {
			*dst = v
		}
	}
	if c.Profile == ProfileReference && !c.Explicit("ladder") {
		c.Ladder = true
	}
	if c.DBSize == 0 && !c.Explicit("dbsize") {
		c.DBSize = p.DBSize
	}
	orProfile(&c.KeyLength, "keylength", p.KeyLength)
	orProfile(&c.ValueLength, "valuelength", p.ValueLength)
	orProfile(&c.Batch, "batch", p.Batch)
	orProfile(&c.CellSeconds, "cell-seconds", p.CellSeconds)
	orProfile(&c.Passes, "passes", p.Passes)
	orProfile(&c.LoadThreads, "load-threads", p.LoadThreads)
	orProfile(&c.LoadBatch, "load-batch", p.LoadBatch)
	orProfile(&c.FioSeconds, "fio-seconds", p.FioSeconds)
	// The warm-up defaults to the profile's, else to one cell.
	orProfile(&c.WarmupSeconds, "warmup-seconds", cmp.Or(p.WarmupSeconds, c.CellSeconds))
	if len(c.Threads) == 0 && !c.Explicit("threads") {
		c.Threads = slices.Clone(p.Threads)
	}
	if !c.Explicit("latency") {
		c.Latency = c.Latency || p.Latency
	}
	if s, err := results.ParseSLO(c.SLO); err == nil {
		c.SLO = s.String() // validate refuses what does not parse
	}
	for _, p := range parts {
		if a, ok := p.(Adjuster); ok {
			a.Adjust(&c)
		}
	}
	c.setRunDefaults()
	if err := c.resolveShards(); err != nil {
		return c, err
	}
	if err := c.absDataDirs(); err != nil {
		return c, err
	}
	if c.ServerAddr != "" {
		// Nothing of tierbench's own server applies to a server the run
		// does not start: validate refuses those flags, and the plan and
		// results.json record only the one external row that runs.
		return c, c.validate(parts)
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
		if c.HostsMode() {
			c.Pins = []string{PinNone}
		}
	}
	return c, c.validate(parts)
}

// DefaultOutParent is the directory, below the current one, of the
// bundles of runs not given --out: not results/, which in the source
// tree is a Go package.
const DefaultOutParent = "tierbench-results"

// setRunDefaults fills the fields every run has, whatever its server.
func (c *Config) setRunDefaults() {
	setString(&c.Runtime, RuntimeAuto)
	setString(&c.DataDir, safe.DefaultDataDir)
	setString(&c.StateDir, defaultStateDir(os.Getenv))
}

// absDataDirs makes the data dirs absolute where the run uses them on this
// machine, so that Docker bind-mounts the directory meant rather than
// creating a named volume; on a server host elsewhere a relative path means
// nothing, and is refused.
func (c *Config) absDataDirs() error {
	remote := c.HostsMode() && !c.ServerHostLocal()
	dirs := append([]*string{&c.DataDir}, pointers(c.DataDirs)...)
	for _, d := range dirs {
		if *d == "" || filepath.IsAbs(*d) {
			*d = filepath.Clean(*d)
			continue
		}
		if remote {
			return fmt.Errorf("%w: --data %s: across hosts --data names a directory on the server host; give an absolute path", fault.ErrConfig, *d)
		}
		abs, err := filepath.Abs(*d)
		if err != nil {
			return fmt.Errorf("%w: --data %s: %v", fault.ErrConfig, *d, err)
		}
		*d = abs
	}
	return nil
}

func pointers(s []string) []*string {
	out := make([]*string, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// ServerHostLocal says the server runs on this machine: no --server-host.
func (c Config) ServerHostLocal() bool { return c.ServerHost == "" }

func setString(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

// ParseInts parses a list like "8,32,48,64" or "8 32 48 64" (the
// reference generator's THREADS, and TIERBENCH_THREADS). An empty item ("8,,32", a trailing
// comma) is refused rather than dropped; errors name the bad item.
func ParseInts(s string) ([]int, error) {
	items, err := SplitList(s)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(items))
	for _, f := range items {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// SplitList splits a list written with commas or blanks ("libaio,uring",
// "8 32"); an empty item between two commas, or at either end, is an
// error, since it is most likely a typo for a value the user meant.
func SplitList(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty list")
	}
	var out []string
	for i, part := range strings.Split(s, ",") {
		fields := strings.Fields(part)
		if len(fields) == 0 {
			return nil, fmt.Errorf("item %d of %q is empty", i+1, s)
		}
		out = append(out, fields...)
	}
	return out, nil
}

// EnvVar is an environment variable `tierbench run` reads in place of a
// flag that was not given. Old is the reference generator's name for it,
// which run refuses: unprefixed, it is too often set for something else
// (a shell's THREADS would change a run unseen).
type EnvVar struct{ Name, Old, Flag string }

// EnvVars are the environment variables `tierbench run` reads; every
// other setting is a flag.
var EnvVars = []EnvVar{
	{Name: "TIERBENCH_DATA", Old: "DATA", Flag: "data"},
	{Name: "TIERBENCH_THREADS", Old: "THREADS", Flag: "threads"},
	{Name: "TIERBENCH_PASSES", Old: "PASSES", Flag: "passes"},
	{Name: "TIERBENCH_CELL_SECONDS", Old: "RUNTIME", Flag: "cell-seconds"},
}

// resolveEnv refuses the old unprefixed names, then takes each EnvVars
// variable that is set and whose flag was not given, noting it in
// fromEnv for the run to say.
func (c *Config) resolveEnv(getenv func(string) string) error {
	for _, e := range EnvVars {
		if v := getenv(e.Old); v != "" {
			return fmt.Errorf("%w: the environment sets %s=%q, which tierbench no longer reads: set %s (or give --%s) instead, and unset %s if it is there for something else",
				fault.ErrConfig, e.Old, v, e.Name, e.Flag, e.Old)
		}
	}
	for _, e := range EnvVars {
		v := strings.TrimSpace(getenv(e.Name))
		if v == "" || c.Explicit(e.Flag) {
			continue
		}
		switch e.Flag {
		case "data":
			if c.DataDir != "" {
				continue
			}
			c.DataDir = v
			c.Given = append(c.Given, "data") // named by the user, as --data would be
		case "threads":
			if len(c.Threads) != 0 {
				continue
			}
			t, err := ParseInts(v)
			if err != nil {
				return fmt.Errorf("%w: environment %s=%q: %w", fault.ErrConfig, e.Name, v, err)
			}
			c.Threads = t
		case "passes", "cell-seconds":
			dst := &c.Passes
			if e.Flag == "cell-seconds" {
				dst = &c.CellSeconds
			}
			if *dst != 0 {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%w: environment %s=%q: want a positive integer, as --%s takes", fault.ErrConfig, e.Name, v, e.Flag)
			}
			*dst = n
		}
		c.FromEnv = append(c.FromEnv, fmt.Sprintf("%s=%s (--%s)", e.Name, v, e.Flag))
	}
	return nil
}

// MemorySweep is the sizes of a sweep, in the order given; nil when
// --memory names one size (or none).
func (c Config) MemorySweep() []string {
	if !strings.ContainsAny(strings.TrimSpace(c.Memory), ", \t") {
		return nil
	}
	sizes, err := SplitList(c.Memory)
	if err != nil {
		return []string{c.Memory} // validateSweep says what is wrong
	}
	return sizes
}

// memorySizes is every --memory size the run's servers take.
func (c Config) memorySizes() []string {
	if s := c.MemorySweep(); s != nil {
		return s
	}
	return []string{c.Memory}
}

// LargestMemory is the largest --memory a server of the run takes: what
// the preflight's memory check plans for.
func (c Config) LargestMemory() string {
	best, bestBytes := c.Memory, int64(-1)
	for _, s := range c.memorySizes() {
		if n, err := size.Parse(s); err == nil && n > bestBytes {
			best, bestBytes = s, n
		}
	}
	return best
}

// HostsMode reports whether the run drives hosts through their engines.
func (c Config) HostsMode() bool { return c.ServerHost != "" || c.ClientHosts != "" }

// defaultStateDir is /run/tierbench for root, else $XDG_RUNTIME_DIR's
// tierbench (a directory only this user may write), else one of the
// user's own under the temporary directory.
func defaultStateDir(getenv func(string) string) string {
	if os.Geteuid() == 0 {
		return "/run/tierbench"
	}
	if d := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "tierbench")
	}
	return filepath.Join(os.TempDir(), "tierbench-"+strconv.Itoa(os.Geteuid()))
}
