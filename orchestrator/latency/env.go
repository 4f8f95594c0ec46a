package latency

import (
	"context"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Env is what the latency steps and the SLO search need of the run, for
// one row: its configuration and plan, the bundle they append to, the
// progress lines, and a client of the row's server.
type Env interface {
	Config() plan.Config
	Plan() results.Plan
	// Bundle is the results bundle's directory.
	Bundle() string
	Printf(format string, a ...any)
	// Batch is the row's -b: the GETs a connection keeps in flight.
	Batch() int
	// RunClient runs one `tierbench bench` of the row's server, named
	// name in logs/, with args besides the address and the access, to
	// completion, and returns its stdout.
	RunClient(ctx context.Context, name string, args []string) ([]byte, error)
}
