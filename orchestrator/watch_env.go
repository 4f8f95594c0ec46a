package orchestrator

import (
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// watchEnv is the run as its watch sees it (watch.Env): the rows, which
// TLS may add to after the watch starts, and the fio the preflight
// measured for a row.
type watchEnv struct{ r *runner }

var _ watch.Env = watchEnv{}

func (e watchEnv) Rows() []results.Row                                { return e.r.plan.Rows }
func (e watchEnv) RowEngine(row results.Row) string                   { return rowEngine(row) }
func (e watchEnv) Printf(format string, a ...any)                     { e.r.printf(format, a...) }
func (e watchEnv) RowBaseline(row results.Row) *hostcheck.FIOBaseline { return e.r.rowBaseline(row) }

// startWatch begins status.json in the new bundle and, with
// --metrics-addr, the metrics endpoint.
func (r *runner) startWatch() (err error) {
	r.watch, err = watch.Start(watchEnv{r}, watch.Values{Config: r.cfg, RunID: r.plan.RunID, Bundle: r.out, Started: r.started,
		OwnServers: r.targets.started(), DonePasses: r.resumed.passes, DoneLoads: r.resumed.loads})
	return err
}
