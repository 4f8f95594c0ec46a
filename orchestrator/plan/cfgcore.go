package plan

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

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

// ScenarioSpec is one of the reference's server set-ups as data: what a
// run of it starts, how it plans its rows, which evidence judges a pass
// and which checks apply. A new scenario is a new entry of scenarioSpecs;
// the run path asks the spec, never the scenario's name.
type ScenarioSpec struct {
	// profiles are its quick and reference shapes; nil: the storage
	// profiles.
	profiles map[string]Config
	// OwnBackend: its rows have the one backend named after it (the
	// server set-up), so --backends does not apply.
	OwnBackend bool
	// pins are its default pin modes; nil: pinned and none.
	pins []string
	// Shards says whether --shards applies.
	Shards bool
	// Batches are its rows' -b values (one row each); nil: --batch.
	Batches []int
	// InRAM: the dataset lives in RAM, so the free-memory check applies,
	// there are no disk counters and no fio ceiling, and both are read on
	// the server's machine (so not across hosts, see validate).
	InRAM bool
	// ShardMemory: each shard also holds its in-memory log and index,
	// which the free-memory check counts.
	ShardMemory bool
	// Tiered: the server tiers its log, so the dataset must exceed
	// results.MinDeviceToMemory × --memory and the load's HeadAddress is checked.
	Tiered bool
	// DeviceReads: each pass counts INFO store's Device.CompletedReads of
	// every server and keeps it out below 0.9 per GET.
	DeviceReads bool
	// LadderTop: the ladder's top is the untiered in-memory server on the
	// same dataset (package ladder), the ceiling of this scenario's RESP.
	LadderTop bool
}

// ScenarioSpecs are the reference's three set-ups.
var ScenarioSpecs = map[string]ScenarioSpec{
	results.ScenarioStorage: {
		Shards: true, Tiered: true,
	},
	results.ScenarioMemory: {
		OwnBackend: true, InRAM: true,
		// Sizes the untiered server does not use are kept valid so the
		// shared validation holds.
		profiles: map[string]Config{
			ProfileReference: {
				DBSize: 16_777_216, KeyLength: 16, ValueLength: 100,
				Threads: []int{1, 2, 4, 8, 16, 32}, Batch: 1024, CellSeconds: 12, Passes: 3,
				Memory: "16m", Page: "4m", Segment: "1g", Index: "2g",
				LoadThreads: 32, LoadBatch: 4096,
			},
			ProfileQuick: {
				DBSize: 500_000, KeyLength: 16, ValueLength: 100,
				Threads: []int{1, 2, 4, 8, 16, 32}, Batch: 1024, CellSeconds: 1, Passes: 1,
				Memory: "16m", Page: "4m", Segment: "1g", Index: "64m",
				LoadThreads: 8, LoadBatch: 4096, WarmupSeconds: 1, FioSeconds: 1,
			},
		},
	},
	results.ScenarioLocalMemory: {
		OwnBackend: true, InRAM: true, Shards: true, ShardMemory: true, Tiered: true, DeviceReads: true, LadderTop: true,
		pins:    []string{PinNone},
		Batches: []int{1024, 256},
		profiles: map[string]Config{
			ProfileReference: {
				DBSize: 10_000_000, KeyLength: 16, ValueLength: 100,
				Threads: []int{1, 2, 4, 8, 16}, Batch: 1024, CellSeconds: 12, Passes: 3,
				Memory: "16m", Page: "4m", Segment: "1g", Index: "2g",
				LoadThreads: 32, LoadBatch: 4096,
			},
			ProfileQuick: {
				DBSize: 700_000, KeyLength: 16, ValueLength: 100,
				Threads: []int{1, 2, 4, 8, 16}, Batch: 1024, CellSeconds: 1, Passes: 1,
				Memory: "4m", Page: "1m", Segment: "1g", Index: "64m",
				LoadThreads: 8, LoadBatch: 4096, WarmupSeconds: 1, FioSeconds: 1,
			},
		},
	},
}

// Spec is the run's scenario's spec (storage for "all", whose parts each
// run with their own).
func (c Config) Spec() ScenarioSpec { return SpecOf(c.ScenarioName()) }

// SpecOf is a scenario's spec; storage for a name without one.
func SpecOf(name string) ScenarioSpec {
	if s, ok := ScenarioSpecs[name]; ok {
		return s
	}
	return ScenarioSpecs[results.ScenarioStorage]
}

// RowSpec is the spec a row runs under: its backend names its scenario
// when the scenario has a backend of its own.
func RowSpec(row results.Row) ScenarioSpec {
	if s, ok := ScenarioSpecs[row.Backend]; ok && s.OwnBackend {
		return s
	}
	return ScenarioSpecs[results.ScenarioStorage]
}

// profileFor returns the defaults of a scenario's profile.
func profileFor(scenario, profile string) (Config, bool) {
	if m := SpecOf(scenario).profiles; m != nil {
		p, ok := m[profile]
		return p, ok
	}
	p, ok := Profiles[profile]
	return p, ok
}

// ScenarioName is the run's scenario, storage when none was named.
func (c Config) ScenarioName() string { return cmp.Or(c.Scenario, results.ScenarioStorage) }

// resolveScenario checks --scenario and sets the backend dimension of
// the scenarios that have none.
func (c *Config) resolveScenario() error {
	s := c.ScenarioName()
	if !slices.Contains(results.Scenarios, s) && s != results.ScenarioAll {
		return fmt.Errorf("%w: unknown --scenario %q (want %s or %s)", fault.ErrConfig, s, strings.Join(results.Scenarios, ", "), results.ScenarioAll)
	}
	spec := c.Spec()
	if s == results.ScenarioAll || !spec.OwnBackend {
		return nil
	}
	if c.ServerAddr != "" {
		// An external server is judged by the scenario's check: an
		// untiered Redis as scenario 1, a tierbench server as scenario 3.
		return nil
	}
	if c.Explicit("backends") || len(c.Backends) > 0 && !slices.Equal(c.Backends, []string{s}) {
		return fmt.Errorf("%w: --backends applies to --scenario storage; --scenario %s has one server set-up", fault.ErrConfig, s)
	}
	if !spec.Shards && (c.Explicit("shards") || len(c.Shards) > 0) {
		return fmt.Errorf("%w: --shards applies to --scenario storage and localmemory; --scenario %s is one untiered server", fault.ErrConfig, s)
	}
	c.Backends = []string{s}
	if len(c.Pins) == 0 && spec.pins != nil {
		c.Pins = slices.Clone(spec.pins)
	}
	return nil
}

// Systems are the run's servers: --server's in order, then --server-cmd's;
// tierbench's own alone when neither is given.
func (c Config) Systems() ([]sut.Server, error) {
	var out []sut.Server
	if len(c.Servers) > 0 {
		s, err := sut.LookupList(strings.Join(c.Servers, ","))
		if err != nil {
			return nil, err
		}
		out = s
	}
	if c.ServerCmd != "" {
		s, err := sut.Custom(c.ServerCmd)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		own, _ := sut.Lookup(results.OwnServer)
		out = []sut.Server{own}
	}
	return out, nil
}

// NamesServers says whether the run names its servers (--server or
// --server-cmd), so its rows carry the server's name.
func (c Config) NamesServers() bool { return len(c.Servers) > 0 || c.ServerCmd != "" }

// ForeignServers says whether the run starts a server besides tierbench's
// own.
func (c Config) ForeignServers() bool {
	servers, err := c.Systems()
	return err == nil && len(Foreign(servers)) > 0
}

// ShardCounts is --shards with its default.
func (c Config) ShardCounts() []int {
	if len(c.Shards) == 0 {
		return []int{1}
	}
	return c.Shards
}

func (c Config) MaxShards() int { return slices.Max(c.ShardCounts()) }

// resolveShards checks --shards and splits a --data list, one directory
// per shard.
func (c *Config) resolveShards() error {
	for _, n := range c.Shards {
		if n < 1 || n > maxShards {
			return fmt.Errorf("%w: --shards %d is outside 1..%d", fault.ErrConfig, n, maxShards)
		}
	}
	if len(c.Shards) > 0 && c.ServerAddr != "" {
		return fmt.Errorf("%w: --shards starts tierbench shards; with --server-addr the cluster the node belongs to is measured as it is", fault.ErrConfig)
	}
	if strings.Contains(c.DataDir, ",") {
		c.DataDirs = nil
		for _, d := range strings.Split(c.DataDir, ",") {
			if d = strings.TrimSpace(d); d == "" {
				return fmt.Errorf("%w: --data %q has an empty directory", fault.ErrConfig, c.DataDir)
			}
			c.DataDirs = append(c.DataDirs, d)
		}
		c.DataDir = c.DataDirs[0]
	}
	if len(c.DataDirs) > 1 && len(c.DataDirs) < c.MaxShards() {
		return fmt.Errorf("%w: --data lists %d directories for --shards %d: give one per shard, or one directory to hold them all", fault.ErrConfig, len(c.DataDirs), c.MaxShards())
	}
	if c.MaxShards() > 1 && c.Runtime == RuntimeDocker {
		return fmt.Errorf("%w: --shards above 1 runs its shards as pinned processes; --runtime docker does not start clusters (use --runtime process)", fault.ErrConfig)
	}
	return nil
}

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

// parseServerAddr reads --server-addr: HOST:PORT, redis://[user[:password]@]HOST:PORT
// or rediss://… (TLS). The password is taken out: it is kept in memory
// only, and ServerAddr is left as HOST:PORT.
func (c *Config) parseServerAddr() error {
	if !strings.Contains(c.ServerAddr, "://") {
		return nil
	}
	u, err := url.Parse(c.ServerAddr)
	if err != nil {
		return fmt.Errorf("%w: --server-addr: %v", fault.ErrConfig, redactURLError(err))
	}
	switch u.Scheme {
	case "redis":
	case "rediss":
		c.ServerTLS = true
	default:
		return fmt.Errorf("%w: --server-addr %s://…: want redis:// or rediss://", fault.ErrConfig, u.Scheme)
	}
	if u.Port() == "" {
		return fmt.Errorf("%w: --server-addr %s://%s: give the port", fault.ErrConfig, u.Scheme, u.Host)
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return fmt.Errorf("%w: --server-addr %s://%s:…@%s: a password on the command line is shown to every user of the host (ps, /proc/PID/cmdline) for the whole run; give %s://%s@%s with the password in a file of yours, --auth-file FILE, or in an environment variable, --auth-env NAME",
				fault.ErrConfig, u.Scheme, u.User.Username(), u.Host, u.Scheme, u.User.Username(), u.Host)
		}
		c.ServerUser = u.User.Username()
	}
	c.ServerAddr = u.Host
	return nil
}

// readServerAuth reads the password of the server at --server-addr from
// --auth-file (its first line; a regular file only, so a FIFO cannot hang
// the run) or from the environment variable --auth-env names.
func (c *Config) readServerAuth() error {
	switch {
	case c.AuthFile == "" && c.AuthEnv == "":
		if c.ServerUser != "" {
			return fmt.Errorf("%w: --server-addr names user %s: give its password with --auth-file FILE or --auth-env NAME", fault.ErrConfig, c.ServerUser)
		}
		return nil
	case c.AuthFile != "" && c.AuthEnv != "":
		return fmt.Errorf("%w: --auth-file and --auth-env both give a password: give one", fault.ErrConfig)
	case c.ServerAddr == "":
		return fmt.Errorf("%w: --auth-file and --auth-env give the password of the server at --server-addr; the servers a run starts get one made for the run", fault.ErrConfig)
	case c.AuthEnv != "":
		c.ServerPassword = os.Getenv(c.AuthEnv)
		if c.ServerPassword == "" {
			return fmt.Errorf("%w: --auth-env %s: the environment has no %s, or it is empty", fault.ErrConfig, c.AuthEnv, c.AuthEnv)
		}
		return nil
	}
	f, err := safe.OpenRegular(c.AuthFile)
	if err != nil {
		return fmt.Errorf("%w: --auth-file: %v", fault.ErrConfig, err)
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: --auth-file %s: %v", fault.ErrConfig, c.AuthFile, err)
	}
	c.ServerPassword = strings.TrimRight(line, "\r\n")
	if c.ServerPassword == "" {
		return fmt.Errorf("%w: --auth-file %s: the first line is empty, want the password", fault.ErrConfig, c.AuthFile)
	}
	return nil
}

// Foreign are the run's servers other than tierbench's own.
func Foreign(servers []sut.Server) []sut.Server {
	var out []sut.Server
	for _, s := range servers {
		if !s.Self {
			out = append(out, s)
		}
	}
	return out
}

// maxShards bounds --shards: one process per shard on one host.
const maxShards = 64

// redactURLError drops the URL (and any password in it) from a parse error.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// RuntimeChoice is the runtime a run starts its servers with: Name, and
// Fallback, the runtime to use instead where Name is unavailable here
// ("" for none: --runtime named it). Note says why Name differs from
// what --runtime asked, for the run to print.
type RuntimeChoice struct {
	Name, Fallback, Note string
}

// ChooseRuntime picks the runtime of a run on one machine; startsServers
// is false for a run that only measures a server already running, whose
// clients run here as processes.
func (c Config) ChooseRuntime(startsServers bool) RuntimeChoice {
	switch {
	case !startsServers:
		return RuntimeChoice{Name: RuntimeProcess}
	case c.Runtime == RuntimeAuto && c.ServerImage == "" && c.ForeignServers():
		return RuntimeChoice{Name: RuntimeProcess, Note: "--server starts a program of this host; --server-image runs it under Docker"}
	case c.MaxShards() > 1 && c.Runtime != RuntimeProcess:
		return RuntimeChoice{Name: RuntimeProcess, Note: fmt.Sprintf("--shards %s starts its shards as pinned processes", FormatInts(c.ShardCounts()))}
	case c.Runtime == RuntimeAuto:
		return RuntimeChoice{Name: RuntimeDocker, Fallback: RuntimeProcess}
	}
	return RuntimeChoice{Name: c.Runtime}
}

// FormatInts spells a list of counts as the flags take it: "1,2,4".
func FormatInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// ProcessesOnly says --runtime process: servers run as programs here.
func (c Config) ProcessesOnly() bool { return c.Runtime == RuntimeProcess }

// ContainersOnly says --runtime docker: servers run from images.
func (c Config) ContainersOnly() bool { return c.Runtime == RuntimeDocker }
