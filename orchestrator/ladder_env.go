package orchestrator

import (
	"context"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// ladderEnv is the run as the ladder sees it (ladder.Env): the ladder
// reaches the run's servers, progress and fio settling only through it.
type ladderEnv struct{ r *runner }

var _ ladder.Env = ladderEnv{}

func (e ladderEnv) Config() plan.Config            { return e.r.cfg }
func (e ladderEnv) Out() string                    { return e.r.out }
func (e ladderEnv) Started() bool                  { return e.r.targets.Started() }
func (e ladderEnv) FioPlanned() bool               { return plan.FioPlanned(e.r.cfg) }
func (e ladderEnv) Printf(format string, a ...any) { e.r.printf(format, a...) }
func (e ladderEnv) SetPhase()                      { e.r.watch.Phase(watch.PhaseLadder, nil, "") }
func (e ladderEnv) Pinning() rig.Pinning           { return e.r.local.pinning }
func (e ladderEnv) HostBaseline() *hostcheck.FIOBaseline {
	host, _ := ceiling.Baselines(e.r.out)
	return host
}
func (e ladderEnv) RowBaseline(row results.Row) *hostcheck.FIOBaseline {
	return ceiling.RowBaseline(e.r.out, row)
}

func (e ladderEnv) AwaitDisk(ctx context.Context, what string, ceilingIOPS float64, job fio.Job) *results.DiskSettle {
	return ceiling.AwaitDisk(ctx, e.r.ceilingEnv(), what, ceilingIOPS, job)
}

// StartServer returns a server whenever the run started one, so that
// the ladder stops it even after an error; an interface holding a nil
// handle would not compare nil.
func (e ladderEnv) StartServer(ctx context.Context, row results.Row) (ladder.Server, error) {
	tgt, err := e.r.ownServers().StartServer(ctx, row)
	if err != nil && tgt.Handle == nil {
		return nil, err
	}
	return ladderServer{r: e.r, row: row, tgt: tgt}, err
}

// ladderServer is one server of the ladder's top (ladder.Server).
type ladderServer struct {
	r   *runner
	row results.Row
	tgt target.Server
}

func (s ladderServer) Args() ([]string, error) {
	port, _ := strconv.Atoi(s.tgt.Addr[strings.LastIndexByte(s.tgt.Addr, ':')+1:])
	return s.r.ownServers().ServerArgs(s.row, port, s.r.cfg.DataDir)
}

func (s ladderServer) Load(ctx context.Context, rec *results.LoadRecord) error {
	return s.r.passes().Load(ctx, s.row, s.tgt, rec)
}

func (s ladderServer) Keys(ctx context.Context) (int64, error) {
	w, err := s.tgt.First().Probe.Witness(ctx)
	return w.Keys, err
}

func (s ladderServer) Warm(ctx context.Context, threads, seconds int) error {
	_, _, err := s.r.clients.Bench(ctx, s.row, s.tgt, "warmup", threads, seconds)
	return err
}

func (s ladderServer) TakePass(ctx context.Context, threads, pass int) (results.PassRecord, error) {
	return s.r.passes().TakePass(ctx, s.row, s.tgt, threads, pass)
}

func (s ladderServer) Stop(ctx context.Context) error {
	if s.tgt.Handle == nil {
		return nil
	}
	return s.tgt.Handle.Stop(ctx)
}
