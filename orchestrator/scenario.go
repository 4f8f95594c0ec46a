package orchestrator

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/report"
)

// scenarioProfiles holds the memory and localmemory scenarios' shapes
// (the storage scenario's are profiles). Sizes the untiered server does
// not use are kept valid so the shared validation holds.
var scenarioProfiles = map[string]map[string]Config{
	ScenarioMemory: {
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
	ScenarioLocalMemory: {
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
}

// localMemoryBatches are scenario 3's rows: -b 1024 and -b 256.
var localMemoryBatches = []int{1024, 256}

// profileFor returns the defaults of a scenario's profile.
func profileFor(scenario, profile string) (Config, bool) {
	if m, ok := scenarioProfiles[scenario]; ok {
		p, ok := m[profile]
		return p, ok
	}
	p, ok := profiles[profile]
	return p, ok
}

// scenario is the run's scenario, storage when none was named.
func (c Config) scenario() string { return cmp.Or(c.Scenario, ScenarioStorage) }

// resolveScenario checks --scenario and sets the backend dimension of
// the scenarios that have none.
func (c *Config) resolveScenario() error {
	s := c.scenario()
	if !slices.Contains(Scenarios, s) && s != ScenarioAll {
		return fmt.Errorf("%w: unknown --scenario %q (want %s or %s)", ErrConfig, s, strings.Join(Scenarios, ", "), ScenarioAll)
	}
	if s == ScenarioStorage || s == ScenarioAll {
		return nil
	}
	if c.ServerAddr != "" {
		// An external server is judged by the scenario's check: an
		// untiered Redis as scenario 1, a tierbench server as scenario 3.
		return nil
	}
	if c.given("backends") || len(c.Backends) > 0 && !slices.Equal(c.Backends, []string{s}) {
		return fmt.Errorf("%w: --backends applies to --scenario storage; --scenario %s has one server set-up", ErrConfig, s)
	}
	if s == ScenarioMemory && (c.given("shards") || len(c.Shards) > 0) {
		return fmt.Errorf("%w: --shards applies to --scenario storage and localmemory; --scenario memory is one untiered server", ErrConfig)
	}
	c.Backends = []string{s}
	if s == ScenarioLocalMemory && len(c.Pins) == 0 {
		c.Pins = []string{PinNone}
	}
	return nil
}

// scenarioRows expands scenario 3's rows over its batch sizes; other
// scenarios keep the rows as planned.
func (c Config) scenarioRows(rows []Row) []Row {
	if c.scenario() != ScenarioMemory && c.scenario() != ScenarioLocalMemory {
		return rows
	}
	if c.ServerAddr != "" {
		for i := range rows {
			rows[i].Backend = c.scenario()
		}
	}
	if c.scenario() != ScenarioLocalMemory {
		return rows
	}
	batches := localMemoryBatches
	if c.given("batch") {
		batches = []int{c.Batch}
	}
	var out []Row
	for _, row := range rows {
		for _, b := range batches {
			r := row
			r.Batch = b
			r.Label = fmt.Sprintf("-b %d, %s", b, row.Label)
			out = append(out, r)
		}
	}
	return out
}

// batchOf is the -b of a row's GET phases.
func (r *runner) batchOf(row Row) int { return cmp.Or(row.Batch, r.cfg.Batch) }

// scenarioServerArgs are the server flags of a memory or localmemory row.
func (r *runner) scenarioServerArgs(row Row, port int) []string {
	args := []string{"server", "--port", strconv.Itoa(port), "--bind", r.bindAddr(), "--index", r.cfg.Index}
	if row.Backend == ScenarioMemory {
		return args // the default, untiered server
	}
	return append(args, "--memory", r.cfg.Memory, "--page", r.cfg.Page, "--segment", r.cfg.Segment,
		"--storage-tier", "--device-type", "localmemory",
		"--device-completion-threads", "4", "--device-throttle-limit", "512")
}

// deviceReads reads Device.CompletedReads from INFO store of the row's
// server, or of every shard of a cluster target in its order; nil when
// the row is not scenario 3's.
func (r *runner) deviceReads(ctx context.Context, row Row, tgt rowTarget) ([]int64, error) {
	if row.Backend != ScenarioLocalMemory {
		return nil, nil
	}
	addrs := []string{tgt.addr}
	if len(tgt.nodes) > 0 {
		addrs = addrs[:0]
		for _, n := range tgt.nodes {
			addrs = append(addrs, n.Addr)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := make([]int64, len(addrs))
	for i, addr := range addrs {
		c, err := dialRESP(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("orchestrator: INFO store of %s: %w", addr, err)
		}
		info, err := c.info("store")
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("orchestrator: INFO store of %s: %w", addr, err)
		}
		if out[i], err = parseDeviceReads(info); err != nil {
			return nil, fmt.Errorf("%w (%s)", err, addr)
		}
	}
	return out, nil
}

// deviceReadsDelta puts the change of the device reads of every server
// between before and after into rec: the total, and each shard's share
// into rec.Nodes (filled by countersAfter in the same order).
func deviceReadsDelta(rec *PassRecord, before, after []int64) {
	rec.DeviceReads = 0
	for i := range before {
		d := after[i] - before[i]
		rec.DeviceReads += d
		if i < len(rec.Nodes) {
			rec.Nodes[i].DeviceReads = d
		}
	}
}

// parseDeviceReads takes Device.CompletedReads from INFO store's fields.
func parseDeviceReads(info map[string]string) (int64, error) {
	v, ok := info["Device.CompletedReads"]
	if !ok {
		return -1, fmt.Errorf("orchestrator: INFO store has no Device.CompletedReads: the server is not tiered")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return -1, fmt.Errorf("orchestrator: INFO store Device.CompletedReads %q is not a count", v)
	}
	return n, nil
}

// checkFreeMemory refuses, before anything is loaded, a memory or
// localmemory dataset larger than the host's available memory.
func (c Config) checkFreeMemory(meminfoPath string) error {
	if c.scenario() != ScenarioMemory && c.scenario() != ScenarioLocalMemory || c.Force {
		return nil
	}
	data := c.DBSize * int64(recordBytes(c.KeyLength, c.ValueLength))
	need, servers := data, ""
	if c.scenario() == ScenarioLocalMemory {
		// Every shard holds its own in-memory log and index besides its
		// part of the data on the in-RAM device.
		n := int64(c.maxShards())
		mem, _ := size.Parse(c.Memory)
		index, _ := size.Parse(c.Index)
		if extra := n * (mem + index); extra > 0 {
			need += extra
			servers = fmt.Sprintf(", plus %d %s × (--memory %s + --index %s) = %s in all,", n, plural(int(n), "shard"), c.Memory, c.Index, humanBytes(need))
		}
	}
	b, err := os.ReadFile(meminfoPath)
	if err != nil {
		return fmt.Errorf("orchestrator: read %s for the free-memory check: %w", meminfoPath, err)
	}
	avail, err := memAvailable(b)
	if err != nil {
		return fmt.Errorf("orchestrator: %s: %w", meminfoPath, err)
	}
	if need > avail {
		return fmt.Errorf("%w: --scenario %s keeps the dataset in RAM: %d keys × %d B = %s%s is larger than the %s of memory available; lower --dbsize (--force measures anyway)",
			ErrConfig, c.scenario(), c.DBSize, recordBytes(c.KeyLength, c.ValueLength), humanBytes(data), servers, humanBytes(avail))
	}
	return nil
}

// memAvailable parses /proc/meminfo's MemAvailable line into bytes.
func memAvailable(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb < 0 {
				return 0, fmt.Errorf("MemAvailable %q is not a size in kB", f[1])
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemAvailable line")
}

// runAll runs every scenario in sequence, each into its own section of
// one bundle (a sub-bundle per scenario under cfg.OutDir), and prints one
// table per scenario under the reference's heading.
func runAll(ctx context.Context, cfg Config, stdout, stderr interface{ Write([]byte) (int, error) }) error {
	if cfg.Resume != "" {
		return fmt.Errorf("%w: --resume completes one scenario's bundle: give its directory (%s/<scenario>)", ErrConfig, cfg.Resume)
	}
	for _, s := range Scenarios {
		c := scenarioConfig(cfg, s)
		if _, err := c.resolve(func(string) string { return "" }); err != nil {
			return fmt.Errorf("scenario %s: %w", s, err)
		}
	}
	out := cmp.Or(cfg.OutDir, filepath.Join("results", newRunID()))
	var errs []error
	index := scenarioIndex{Schema: SchemaVersion, Scenario: ScenarioAll}
	for _, s := range Scenarios {
		c := scenarioConfig(cfg, s)
		c.OutDir = filepath.Join(out, s)
		var table bytes.Buffer
		fmt.Fprintf(stderr, "== scenario %s\n", scenarioTitle[s])
		err := Run(ctx, c, &table, stderr)
		fmt.Fprintf(stdout, "## %s\n\n%s\n", scenarioTitle[s], table.String())
		index.Scenarios = append(index.Scenarios, scenarioEntry{Scenario: s, Dir: s, Error: errString(err)})
		if err != nil {
			errs = append(errs, fmt.Errorf("scenario %s: %w", s, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	if err := writeJSON(out, fileScenarios, index); err != nil {
		errs = append(errs, err)
	} else if err := report.WriteIndex(out); err != nil {
		errs = append(errs, err)
	}
	return joinScenarioErrors(errs)
}

// scenarioConfig is one scenario's part of a --scenario all run: the
// storage-only --backends applies to scenario 2 alone, --shards to
// scenarios 2 and 3.
func scenarioConfig(cfg Config, s string) Config {
	c := cfg
	c.Scenario = s
	drop := func(g string) bool { return g == "backends" || g == "shards" && s == ScenarioMemory }
	if s != ScenarioStorage {
		c.Backends = nil
		if s == ScenarioMemory {
			c.Shards = nil
		}
		c.Given = slices.DeleteFunc(slices.Clone(cfg.Given), drop)
	}
	return c
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// joinScenarioErrors keeps the most severe error first so ExitCode maps
// the whole run by it.
func joinScenarioErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b error) int { return ExitCode(b) - ExitCode(a) })
	if len(errs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("%w (and %d more scenarios failed: %v)", errs[0], len(errs)-1, errs[1:])
}

// shardReadsNote is each shard's device reads per GET for a pass's line,
// "" for a single server.
func shardReadsNote(nodes []NodePass) string {
	if len(nodes) == 0 {
		return ""
	}
	per := make([]string, len(nodes))
	for i, n := range nodes {
		per[i] = fmt.Sprintf("%.2f", n.DeviceReadsPerGet)
	}
	return "; per shard " + strings.Join(per, " | ")
}
