package ladder

import (
	"context"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// Env is what the ladder needs of the run it measures after: the run's
// configuration and bundle, and the few things only the run can do
// (start a server of a row, say progress, wait for the disk). The facade
// hands it over; the ladder calls no other step's functions.
type Env interface {
	// Config is the run's resolved configuration.
	Config() plan.Config
	// Out is the bundle's directory: the ladder reads results.json,
	// preflight.json and latency.jsonl there and writes its own files.
	Out() string
	// Started says the run starts its servers: the layers below RESP can
	// be run on this machine (false for a server at --server-addr).
	Started() bool
	// FioPlanned says the run measures fio on its data dir
	// (plan.FioPlanned): the fio rung is measured again in each round,
	// and fio runs beside each latency step.
	FioPlanned() bool
	// Printf says progress on the run's stderr.
	Printf(format string, a ...any)
	// SetPhase records that the run entered the ladder's phase.
	SetPhase()
	// Pinning is where the run pins a pinned row's server and clients.
	Pinning() rig.Pinning
	// HostBaseline is the preflight's fio curve on the whole host; nil
	// when not measured.
	HostBaseline() *hostcheck.FIOBaseline
	// RowBaseline is the fio curve row is held against (the pinned one
	// for a pinned row, when measured); nil without a host baseline.
	RowBaseline(row results.Row) *hostcheck.FIOBaseline
	// AwaitDisk runs job as probes until the disk reads near
	// ceilingIOPS again (or stops getting faster), printing each probe
	// after what.
	AwaitDisk(ctx context.Context, what string, ceilingIOPS float64, job fio.Job) *results.DiskSettle
	// StartServer starts a fresh server of row on the run's wiped data
	// dir and proves it. A Server is returned, even with an error,
	// whenever something was started, for the caller to stop.
	StartServer(ctx context.Context, row results.Row) (Server, error)
}

// Server is one server the ladder's top started through Env.
type Server interface {
	// Args are the server's flags as the run gives them.
	Args() ([]string, error)
	// Load loads the run's dataset, filling rec's counts.
	Load(ctx context.Context, rec *results.LoadRecord) error
	// Keys is how many keys the server holds.
	Keys(ctx context.Context) (int64, error)
	// Warm runs a warm-up of seconds at threads connections.
	Warm(ctx context.Context, threads, seconds int) error
	// TakePass measures pass number pass at threads connections.
	TakePass(ctx context.Context, threads, pass int) (results.PassRecord, error)
	// Stop stops everything started for the server.
	Stop(ctx context.Context) error
}

// run is one ladder measurement: Env's answers that do not change
// during it, kept at hand.
type run struct {
	env     Env
	cfg     plan.Config
	out     string
	started bool
	fio     bool // Env.FioPlanned
}

func newRun(env Env) *run {
	return &run{env: env, cfg: env.Config(), out: env.Out(), started: env.Started(), fio: env.FioPlanned()}
}

func (r *run) printf(format string, a ...any) { r.env.Printf(format, a...) }

// joinInts lists ints as a comma list, as `tierbench kv -t` takes them.
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
