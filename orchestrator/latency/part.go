package latency

import (
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
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

// CheckAttached refuses --latency against a cluster node, or turns the
// profile's off there: the fixed-rate client drives one server.
func (FixedRate) CheckAttached(c *plan.Config, a plan.Attached) (string, error) {
	if !a.Cluster || !c.Latency {
		return "", nil
	}
	if c.Explicit("latency") {
		return "", fmt.Errorf("%w: --latency against a cluster (%s is a cluster node) is not supported: the latency steps' fixed-rate client drives one server; leave --latency out", fault.ErrConfig, c.ServerAddr)
	}
	c.Latency = false
	return "latency: off against a cluster (the fixed-rate client drives one server)", nil
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

// CheckAttached refuses --slo against a cluster node: the search's
// fixed-rate client drives one server.
func (Capacity) CheckAttached(c *plan.Config, a plan.Attached) (string, error) {
	if a.Cluster && c.SLO != "" {
		return "", fmt.Errorf("%w: --slo against a cluster (%s is a cluster node) is not supported: the search's fixed-rate client drives one server; leave --slo out", fault.ErrConfig, c.ServerAddr)
	}
	return "", nil
}

// Flags asks for the steps, for the combination table.
func (FixedRate) Flags() string { return "--latency" }

// Ask sets what Flags says.
func (FixedRate) Ask(c *plan.Config) { c.Latency, c.Given = true, append(c.Given, "latency") }

// Flags asks for the search, for the combination table.
func (Capacity) Flags() string { return "--slo p99=1ms" }

// Ask sets what Flags says.
func (Capacity) Ask(c *plan.Config) { c.SLO, c.Given = "p99=1ms", append(c.Given, "slo") }

// StepsWork is the latency steps' work after one row's passes, for the
// run's estimate: a PING floor and one step per share, each a warm-up
// and a cell long (the floor at most FloorSeconds); none without
// --latency.
func StepsWork(c plan.Config, _ []results.Row, _ bool) (count int, seconds float64, upTo bool) {
	if !c.Latency {
		return 0, 0, false
	}
	step := float64(results.LatencyWarmupSeconds + c.CellSeconds)
	floor := float64(results.LatencyWarmupSeconds + min(c.CellSeconds, FloorSeconds))
	n := 1 + len(Shares)
	return n, (floor + float64(len(Shares))*step) / float64(n), false
}

// SLOWork is the SLO search's work after one row's passes: at most
// SLOMaxProbes probes, each a latency step long; none without --slo.
func SLOWork(c plan.Config, _ []results.Row, _ bool) (count int, seconds float64, upTo bool) {
	if c.SLO == "" {
		return 0, 0, false
	}
	return SLOMaxProbes, float64(results.LatencyWarmupSeconds + c.CellSeconds), true
}
