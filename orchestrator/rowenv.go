package orchestrator

import (
	"context"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// rowEnv is the environment the facade hands a row's steps: the runner,
// seen through one row and its target.
type rowEnv struct {
	r   *runner
	row results.Row
	tgt target.Server
}

func (e rowEnv) Config() plan.Config            { return e.r.cfg }
func (e rowEnv) Plan() results.Plan             { return e.r.plan }
func (e rowEnv) Bundle() string                 { return e.r.out }
func (e rowEnv) Printf(format string, a ...any) { e.r.printf(format, a...) }
func (e rowEnv) Batch() int                     { return e.r.cfg.BatchOf(e.row) }

// Target is where the row's server answers: its nodes, each with the
// probe that reaches it. Empty when a step is asked whether it has work
// left (todo) before the row's server is started.
func (e rowEnv) Target() target.Server { return e.tgt }

func (e rowEnv) RunClient(ctx context.Context, name string, args []string) ([]byte, error) {
	out, _, err := e.r.drv.RunClient(ctx, e.r.benchSpec(e.row, e.tgt, name, args))
	return out, err
}
