package sweep

import (
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Memory is the memory-tier sweep, a row dimension: --memory given as a
// list runs every row once per size.
type Memory struct{}

// Name is the dimension's name in the combination table.
func (Memory) Name() string { return "memory sweep" }

// Supports refuses a sweep the run cannot measure.
func (Memory) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateMemory(c, bad) })
}

// Expand makes every row once per size of the sweep.
func (Memory) Expand(c plan.Config, rows []results.Row) []results.Row { return MemoryRows(c, rows) }

// Flags asks for a sweep, for the combination table.
func (Memory) Flags() string { return "--memory 16m,32m" }

// Ask sets what Flags says.
func (Memory) Ask(c *plan.Config) { c.Memory = "16m,32m" }

// ReadCache is the read-cache sweep, a row dimension:
// --readcache-memory given as a list runs every row once per size.
type ReadCache struct{}

// Name is the dimension's name in the combination table.
func (ReadCache) Name() string { return "read-cache sweep" }

// Supports refuses a read-cache size the run cannot set.
func (ReadCache) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateReadCache(c, bad) })
}

// Expand makes every row once per read-cache size.
func (ReadCache) Expand(c plan.Config, rows []results.Row) []results.Row {
	return ReadCacheRows(c, rows)
}

// Flags asks for a read-cache sweep, for the combination table.
func (ReadCache) Flags() string { return "--readcache-memory 0,64m" }

// Ask sets what Flags says.
func (ReadCache) Ask(c *plan.Config) { c.ReadCacheMemory = "0,64m" }
