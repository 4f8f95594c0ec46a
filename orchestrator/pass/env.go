package pass

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// Env is what a row's passes need of the run: its configuration and
// bundle, where its servers and clients run, and the few steps other
// parts of the run own (the client fleet, the progress and the run's
// status, the fio beside a pass, what a server says of itself). The
// facade implements it; every answer is read when asked, so an Env may
// be handed over before the run has picked its driver.
type Env interface {
	// Config is the run's resolved configuration.
	Config() plan.Config
	// Out is the bundle's directory.
	Out() string
	// Printf says progress on the run's stderr.
	Printf(format string, a ...any)
	// Record appends one record to the bundle's cells.jsonl.
	Record(rec any) error

	// Host is the machine the servers run on: its disks' and CPUs'
	// counters are the evidence around every GET phase.
	Host() rig.ServerHost
	// HostPrefix begins a progress line about the server host when it
	// is another machine; "" on this one.
	HostPrefix() string
	// RunClient runs one client on this machine to completion, as the
	// run's driver starts it.
	RunClient(ctx context.Context, spec rig.ClientSpec) ([]byte, results.Placement, error)
	// Pinning is where a pinned row's server and clients run.
	Pinning() rig.Pinning
	// AuthArgs are the password flags every client of the run's servers
	// takes.
	AuthArgs() []string
	// FileName names row's files in the bundle's logs/.
	FileName(row results.Row) string

	// Bench runs one GET phase of threads connections for seconds on
	// the run's clients, wherever they are (BenchLocal on this machine).
	Bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error)
	// ClientNote names the clients of a step for progress lines
	// (threads 0: the load).
	ClientNote(threads int) string

	// StartCell counts the cell about to run and returns its number, the
	// cells in all and the estimate of what is left for its progress
	// line.
	StartCell() (index, total int, left string)
	// CellPhase records in the run's status that a cell of row runs.
	CellPhase(row results.Row, cell string)
	// WatchCell reads the servers' counters for the run's watchers while
	// a cell of threads connections runs, until stop is called.
	WatchCell(ctx context.Context, row results.Row, tgt target.Server, threads int) (stop func())
	// CellTook adds a measured cell's time to the progress estimate.
	CellTook(d time.Duration)
	// LoadTook adds a measured load's keys and time to the progress
	// estimate.
	LoadTook(keys int64, d time.Duration)

	// SettleDisk waits, after a tiered server's load, for the disk to
	// read near its ceiling again; nil when it does not apply.
	SettleDisk(ctx context.Context, row results.Row, tgt target.Server) *results.DiskSettle
	// FioBeside is fio's IOPS on the row's disk right after a pass, 0
	// when not measured.
	FioBeside(ctx context.Context, row results.Row, tgt target.Server) float64
	// ServerEvidence is what a server the run started says of itself
	// once loaded.
	ServerEvidence(ctx context.Context, row results.Row, p rig.ServerProbe) map[string]string
}
