package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

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
	// same dataset (the ladder), the ceiling of this scenario's RESP.
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
				Workload: results.Workload{
					DBSize:      16_777_216,
					KeyLength:   16,
					ValueLength: 100,
					Threads:     []int{1, 2, 4, 8, 16, 32},
					Batch:       1024,
					CellSeconds: 12,
					Passes:      3,
					Memory:      "16m",
					Page:        "4m",
					Segment:     "1g",
					Index:       "2g",
					LoadThreads: 32,
					LoadBatch:   4096,
				},
			},
			ProfileQuick: {
				Workload: results.Workload{
					DBSize:        500_000,
					KeyLength:     16,
					ValueLength:   100,
					Threads:       []int{1, 2, 4, 8, 16, 32},
					Batch:         1024,
					CellSeconds:   1,
					Passes:        1,
					Memory:        "16m",
					Page:          "4m",
					Segment:       "1g",
					Index:         "64m",
					LoadThreads:   8,
					LoadBatch:     4096,
					WarmupSeconds: 1,
					FioSeconds:    1,
				},
			},
		},
	},
	results.ScenarioLocalMemory: {
		OwnBackend: true, InRAM: true, Shards: true, ShardMemory: true, Tiered: true, DeviceReads: true, LadderTop: true,
		pins:    []string{PinNone},
		Batches: []int{1024, 256},
		profiles: map[string]Config{
			ProfileReference: {
				Workload: results.Workload{
					DBSize:      10_000_000,
					KeyLength:   16,
					ValueLength: 100,
					Threads:     []int{1, 2, 4, 8, 16},
					Batch:       1024,
					CellSeconds: 12,
					Passes:      3,
					Memory:      "16m",
					Page:        "4m",
					Segment:     "1g",
					Index:       "2g",
					LoadThreads: 32,
					LoadBatch:   4096,
				},
			},
			ProfileQuick: {
				Workload: results.Workload{
					DBSize:        700_000,
					KeyLength:     16,
					ValueLength:   100,
					Threads:       []int{1, 2, 4, 8, 16},
					Batch:         1024,
					CellSeconds:   1,
					Passes:        1,
					Memory:        "4m",
					Page:          "1m",
					Segment:       "1g",
					Index:         "64m",
					LoadThreads:   8,
					LoadBatch:     4096,
					WarmupSeconds: 1,
					FioSeconds:    1,
				},
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
