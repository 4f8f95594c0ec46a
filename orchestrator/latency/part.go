package latency

import (
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/plan"
)

// FixedRate is the measurement --latency turns on (on in the reference
// profile): the fixed-rate steps after each row's passes.
type FixedRate struct{}

// Name is the measurement's name in the combination table.
func (FixedRate) Name() string { return "latency" }

// Supports refuses --latency where the fixed-rate client cannot drive
// the row's server: a cluster of shards.
func (FixedRate) Supports(c plan.Config) error {
	if c.Latency && c.MaxShards() > 1 {
		return fmt.Errorf("--latency with --shards above 1 is not supported: the latency steps' fixed-rate client drives one server, not a cluster; leave --latency out or use --shards 1")
	}
	return nil
}

// Adjust turns the profile's --latency off where Supports would refuse
// it, and notes it.
func (FixedRate) Adjust(c *plan.Config) {
	if c.Latency && !c.Explicit("latency") && c.MaxShards() > 1 {
		c.Latency = false
		c.Notes = append(c.Notes, "latency: off with --shards above 1 (the fixed-rate client drives one server, not a cluster)")
	}
}

// Capacity is the measurement --slo turns on: the search for the highest
// rate whose latency meets the bound, after each row's passes.
type Capacity struct{}

// Name is the measurement's name in the combination table.
func (Capacity) Name() string { return "slo" }

// Supports refuses an --slo that does not parse, or one the run cannot
// search.
func (Capacity) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateSLO(c, bad) })
}

// Flags asks for the steps, for the combination table.
func (FixedRate) Flags() string { return "--latency" }

// Ask sets what Flags says.
func (FixedRate) Ask(c *plan.Config) { c.Latency, c.Given = true, append(c.Given, "latency") }

// Flags asks for the search, for the combination table.
func (Capacity) Flags() string { return "--slo p99=1ms" }

// Ask sets what Flags says.
func (Capacity) Ask(c *plan.Config) { c.SLO, c.Given = "p99=1ms", append(c.Given, "slo") }
