package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// Fleet is where a row's clients run and what the run checks of the
// machines they run on: this machine (Local: processes or the local
// engine), or the client hosts of --client-hosts (Hosts: a phase's
// connections split over them, clients.go). The run asks it, never
// which one it holds.
type Fleet interface {
	// Preflight runs the machines' preflight once per run (with the fio
	// baseline where there is one) and keeps it in the bundle.
	Preflight(ctx context.Context) error
	// CheckNetwork measures the clients' link to a row's server, once per
	// run where there is a network between them.
	CheckNetwork(ctx context.Context, tgt target.Server) error
	// Bench runs one offline GET phase of threads connections.
	Bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error)
	// Online runs the row's own online phase, if the fleet has one (the
	// merged latency phase across hosts), skipping one already recorded.
	Online(ctx context.Context, row results.Row, tgt target.Server) error
	// OnlineDone says whether the bundle holds the row's online phase.
	OnlineDone(row results.Row) (bool, error)
	// Note names the clients of a step for progress lines (threads 0: the
	// load).
	Note(threads int) string
}

// BenchFunc runs one offline GET phase of threads connections against
// tgt (Fleet.Bench).
type BenchFunc func(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error)

// Local runs every client on this machine, as the driver starts it: its
// preflight and its phases are the run's own, handed to NewLocal.
type Local struct {
	preflight func(ctx context.Context) error
	bench     BenchFunc
}

var _ Fleet = Local{}

// NewLocal is the fleet of this machine: preflight runs the host's
// preflight, bench one phase with the client here.
func NewLocal(preflight func(ctx context.Context) error, bench BenchFunc) Local {
	return Local{preflight: preflight, bench: bench}
}

func (f Local) Preflight(ctx context.Context) error                      { return f.preflight(ctx) }
func (f Local) CheckNetwork(context.Context, target.Server) error        { return nil }
func (f Local) Online(context.Context, results.Row, target.Server) error { return nil }
func (f Local) OnlineDone(results.Row) (bool, error)                     { return true, nil }
func (f Local) Note(int) string                                          { return "" }

func (f Local) Bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return f.bench(ctx, row, tgt, name, threads, seconds)
}

// Hosts runs the clients on the client hosts, each phase's connections
// split over them and started at one shared time (clients.go). Open
// makes it; Driver is the run's runtime, which the caller closes.
type Hosts struct {
	env Env
	// Driver runs the server on the server host's engine and the clients
	// on the client hosts'.
	Driver *docker.HostsDriver
	// Plan is what the bundle's plan records of the hosts: their
	// endpoints and where the server listens.
	Plan *results.HostsPlan
	// Auth is the servers' password made for the run when they listen
	// beyond loopback, else ""; never written.
	Auth string
}

var _ Fleet = (*Hosts)(nil)

// NewHosts is the fleet over h's client hosts, for a run of env. Open
// makes one with the plan and the password; a fleet made here alone
// answers from the bundle (OnlineDone) and runs phases, but has neither.
func NewHosts(env Env, h *docker.HostsDriver) *Hosts {
	return &Hosts{env: env, Driver: h}
}

func (f *Hosts) Preflight(ctx context.Context) error { return f.env.Preflight(ctx, f.Driver) }

func (f *Hosts) CheckNetwork(ctx context.Context, tgt target.Server) error {
	if f.Driver.NetChecked {
		return nil
	}
	if err := f.env.CheckNetwork(ctx, f.Driver, tgt); err != nil {
		return err
	}
	f.Driver.NetChecked = true
	return nil
}

func (f *Hosts) Bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return f.bench(ctx, row, tgt, name, threads, seconds)
}

func (f *Hosts) Online(ctx context.Context, row results.Row, tgt target.Server) error {
	return f.latency(ctx, row, tgt)
}

func (f *Hosts) OnlineDone(row results.Row) (bool, error) { return latencyDone(f.env.Bundle, row) }

func (f *Hosts) Note(threads int) string {
	h := f.Driver
	if threads == 0 {
		return " from host " + h.Clients[0].Endpoint.Name
	}
	var parts []string
	for i, n := range SplitThreads(threads, len(h.Clients)) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", h.Clients[i].Endpoint.Name, n))
		}
	}
	return " (server on host " + h.Server.Endpoint.Name + ", clients " + strings.Join(parts, " ") + ")"
}
