package plan

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/server/store"
	"github.com/tierbench/tierbench/sut"
)

// validate refuses a configuration that cannot run: every problem it
// finds, joined in one error that wraps ErrConfig, so that a command line
// is put right in one go.
func (c Config) validate(parts []Part) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.KeyDist != "" {
		if _, err := keyspace.ParseDist(c.KeyDist); err != nil {
			bad("--key-dist: %v", err)
		}
	}
	if c.Mix != "" {
		mix, err := c.OpMix()
		if err != nil {
			bad("--workload: %v", err)
		}
		for _, op := range []string{"DEL", "INCR"} {
			if strings.Contains(mix, op+":") {
				bad("--workload %s: %s changes the dataset the run loaded and verified, so every later cell would count misses or wrong values; mix GET, SET, MGET and RMW", c.Mix, op)
			}
		}
		if c.MaxShards() > 1 {
			bad("--workload with --shards above 1 is not supported: the cluster client runs GET cells only")
		}
	}
	if c.DBSize < 1 {
		bad("--dbsize %d: want at least 1 key", c.DBSize)
	}
	for _, f := range []struct {
		name  string
		value int
		least int
		want  string
	}{
		{"keylength", c.KeyLength, 1, "at least 1 byte"},
		{"valuelength", c.ValueLength, 1, "at least 1 byte"},
		{"batch", c.Batch, 1, "at least 1 GET per batch"},
		{"cell-seconds", c.CellSeconds, 1, "at least 1 second per cell"},
		{"passes", c.Passes, 1, "at least 1 pass per cell"},
		{"warmup-seconds", c.WarmupSeconds, 0, "0 (no warm-up) or more seconds"},
		{"load-threads", c.LoadThreads, 1, "at least 1 loader connection"},
		{"load-batch", c.LoadBatch, 1, "at least 1 key per MSET"},
		{"fio-seconds", c.FioSeconds, 0, "0 (preflight's default) or more seconds"},
	} {
		if f.value < f.least {
			bad("--%s %d: want %s", f.name, f.value, f.want)
		}
	}
	if len(c.Threads) == 0 {
		bad("--threads: want at least one thread count")
	}
	for _, t := range c.Threads {
		if t < 1 {
			bad("--threads %v: want positive thread counts", c.Threads)
			break
		}
	}
	// A list item given twice names a row or a column the run would
	// measure once and show twice: cells are keyed by what they measure.
	if t, ok := repeated(c.Threads); ok {
		bad("--threads names %d twice: each thread count is one column, measured once", t)
	}
	if n, ok := repeated(c.Shards); ok {
		bad("--shards names %d twice: each shard count is one row, measured once", n)
	}
	if !(c.MaxMissRatio >= 0 && c.MaxMissRatio < 1) {
		bad("--max-miss-ratio %g: want a share from 0 (no miss tolerated, the default) up to below 1", c.MaxMissRatio)
	}
	switch c.Runtime {
	case RuntimeAuto, RuntimeDocker, RuntimeProcess:
	default:
		bad("--runtime %q: want docker, process or auto", c.Runtime)
	}
	for _, p := range parts {
		if err := p.Supports(c); err != nil {
			errs = append(errs, err)
		}
	}
	if c.HostsMode() {
		if c.ServerAddr != "" {
			bad("--server-addr measures a server already running; --server-host and --client-hosts start one")
		}
		if c.Runtime == RuntimeProcess {
			bad("--runtime process runs on this machine only; --server-host and --client-hosts drive Docker engines")
		}
		if slices.Contains(c.Pins, PinPinned) {
			bad("--pin pinned across hosts is not supported: each host's NUMA layout is its own; use --pin none")
		}
		if c.MaxShards() > 1 {
			bad("--shards across hosts is not supported yet: shards run as local processes")
		}
		if s := c.ScenarioName(); s == results.ScenarioAll || c.Spec().InRAM {
			bad("--scenario %s across hosts is not supported: its device-read evidence (INFO store, with the run's password) and its free-memory check are read on this machine, not the server host's; run --scenario storage across hosts, or the RAM scenarios on one machine", s)
		}
		if !c.ServerHostLocal() && c.ServerAddr == "" && filepath.Clean(c.DataDir) == "/" {
			bad("--data /: a run empties its data dir; give a new directory of its own on the server host, such as %s", safe.DefaultDataDir)
		}
	} else if c.ServerBind != "" {
		bad("--server-bind needs --server-host or --client-hosts: a local server listens on loopback")
	}
	if c.ServerAddr == "" {
		if c.SkipLoad {
			bad("--skip-load needs --server-addr: a server this run starts is always empty")
		}
		if c.ServerPID != 0 || c.Explicit("server-pid") {
			bad("--server-pid %d needs --server-addr: the servers this run starts are found by themselves", c.ServerPID)
		}
		c.validateOwnServer(bad)
	} else {
		if _, _, err := net.SplitHostPort(c.ServerAddr); err != nil {
			bad("--server-addr %q: want HOST:PORT: %v", c.ServerAddr, err)
		}
		if c.ServerPID < 0 || c.ServerPID == 0 && c.Explicit("server-pid") {
			bad("--server-pid %d: want the pid of the server at --server-addr (leave it out to find the owner of its listening socket)", c.ServerPID)
		}
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"backends", len(c.Backends) > 0}, {"pin", len(c.Pins) > 0},
			{"memory", c.Memory != ""}, {"page", c.Page != ""}, {"segment", c.Segment != ""}, {"index", c.Index != ""},
		} {
			if f.set || c.Explicit(f.name) {
				bad("--%s applies to the tiered server a run starts, not to the server at --server-addr", f.name)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", fault.ErrConfig, errors.Join(errs...))
	}
	return nil
}

// validateOwnServer checks the flags of the tiered server a run starts.
func (c Config) validateOwnServer(bad func(string, ...any)) {
	for _, b := range c.Backends {
		if b != "libaio" && b != "uring" && !(c.Spec().OwnBackend && b == c.ScenarioName()) {
			bad("--backends: unknown backend %q (want libaio, uring)", b)
		}
	}
	for _, p := range c.Pins {
		if p != PinPinned && p != PinNone {
			bad("--pin: unknown pin mode %q (want pinned, none)", p)
		}
	}
	if b, ok := repeated(c.Backends); ok {
		bad("--backends names %s twice: each backend is one row, measured once", b)
	}
	if p, ok := repeated(c.Pins); ok {
		bad("--pin names %s twice: each pin mode is one row, measured once", p)
	}
	mem, err1 := size.Parse(c.Memory)
	sweep := c.MemorySweep() != nil
	for _, s := range []string{c.Memory, c.Page, c.Segment, c.Index} {
		if _, err := size.Parse(s); err != nil && !(sweep && s == c.Memory) {
			bad("server size: %v", err)
		}
	}
	c.checkStoreSizes(bad)
	// A memory-tier sweep is partly served from memory by design: the
	// 20 × rule is the storage scenario's without one.
	if err1 == nil && !c.Force && c.Spec().Tiered && !sweep {
		data := c.DBSize * int64(results.RecordBytes(c.KeyLength, c.ValueLength))
		if n := c.MaxShards(); n > 1 && data/int64(n) < results.MinDeviceToMemory*mem {
			bad("dataset %d keys × %d B = %s split over --shards %d is %s a shard, less than %d × --memory %s: each shard's reads would be served from memory; raise --dbsize or lower --memory (--force measures anyway)",
				c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(data), n, human.Bytes(data/int64(n)), results.MinDeviceToMemory, c.Memory)
		} else if data < results.MinDeviceToMemory*mem {
			bad("dataset %d keys × %d B = %s is less than %d × --memory %s: reads would be served from memory; raise --dbsize or lower --memory (--force measures anyway, and the device-hit check then marks the cells)",
				c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(data), results.MinDeviceToMemory, c.Memory)
		}
	}
}

// checkStoreSizes refuses, before anything starts, the rows whose sizes
// tierbench's server would refuse at start (--memory 4m with a 4m --page
// holds fewer than two pages, …), by the server's own rule (store.Check).
func (c Config) checkStoreSizes(bad func(string, ...any)) {
	if !c.Spec().Tiered {
		return
	}
	if servers, err := c.Systems(); err != nil || !slices.ContainsFunc(servers, func(s sut.Server) bool { return s.Name == results.OwnServer }) {
		return
	}
	page, err1 := size.Parse(c.Page)
	segment, err2 := size.Parse(c.Segment)
	index, err3 := size.Parse(c.Index)
	if err1 != nil || err2 != nil || err3 != nil {
		return // said above
	}
	caches := []int64{0}
	if c.ReadCacheMemory != "" {
		caches = caches[:0]
		if list, err := SplitList(c.ReadCacheMemory); err == nil {
			for _, rc := range list {
				if n, err := size.Parse(rc); err == nil {
					caches = append(caches, n) // a bad size: sweep.ReadCache says it
				}
			}
		}
	}
	said := map[string]bool{}
	for _, m := range c.memorySizes() {
		mem, err := size.Parse(m)
		if err != nil {
			continue // validateSweep says it
		}
		for _, rc := range caches {
			cfg := store.Config{MemoryBytes: mem, PageBytes: page, SegmentBytes: segment, IndexBytes: index, ReadCacheBytes: rc, StorageTier: true, LogDir: "/"}
			if err := cfg.Check(); err != nil && !said[err.Error()] {
				said[err.Error()] = true
				bad("the server would refuse this row at start: %v", strings.TrimPrefix(err.Error(), "store: "))
			}
		}
	}
}

// repeated returns the first item of items that an earlier one equals.
func repeated[T comparable](items []T) (T, bool) {
	for i, x := range items {
		if slices.Contains(items[:i], x) {
			return x, true
		}
	}
	var zero T
	return zero, false
}
