package orchestrator

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// clientFleet is where a row's clients run and what the run checks of the
// machines they run on: this machine (processes or the local engine), or
// the client hosts of --client-hosts, a phase's connections split over
// them (hosts_clients.go). The runner asks it, never which one it holds.
type clientFleet interface {
	// preflight runs the machines' preflight once per run (with the fio
	// baseline where there is one) and keeps it in the bundle.
	preflight(ctx context.Context) error
	// checkNetwork measures the clients' link to a row's server, once per
	// run where there is a network between them.
	checkNetwork(ctx context.Context, tgt target.Server) error
	// bench runs one offline GET phase of threads connections.
	bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error)
	// online runs the row's own online phase, if the fleet has one (the
	// merged latency phase across hosts), skipping one already recorded.
	online(ctx context.Context, row results.Row, tgt target.Server) error
	// onlineDone says whether the bundle holds the row's online phase.
	onlineDone(row results.Row) (bool, error)
	// note names the clients of a step for progress lines (threads 0: the
	// load).
	note(threads int) string
}

// localFleet runs every client on this machine, as the driver starts it.
type localFleet struct{ r *runner }

func (f localFleet) preflight(ctx context.Context) error                      { return f.r.preflightLocal(ctx) }
func (f localFleet) checkNetwork(context.Context, target.Server) error        { return nil }
func (f localFleet) online(context.Context, results.Row, target.Server) error { return nil }
func (f localFleet) onlineDone(results.Row) (bool, error)                     { return true, nil }
func (f localFleet) note(int) string                                          { return "" }

func (f localFleet) bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return f.r.benchLocal(ctx, row, tgt, name, threads, seconds)
}

// hostsFleet runs the clients on the client hosts, each phase's
// connections split over them and started at one shared time.
type hostsFleet struct {
	r *runner
	h *docker.HostsDriver
}

func (f hostsFleet) preflight(ctx context.Context) error { return f.r.preflightHosts(ctx, f.h) }

func (f hostsFleet) checkNetwork(ctx context.Context, tgt target.Server) error {
	if f.h.NetChecked {
		return nil
	}
	if err := f.r.networkPreflight(ctx, f.h, tgt); err != nil {
		return err
	}
	f.h.NetChecked = true
	return nil
}

func (f hostsFleet) bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return f.r.benchHosts(ctx, f.h, row, tgt, name, threads, seconds)
}

func (f hostsFleet) online(ctx context.Context, row results.Row, tgt target.Server) error {
	return f.r.latencyHosts(ctx, f.h, row, tgt)
}

func (f hostsFleet) onlineDone(row results.Row) (bool, error) { return hostsLatencyDone(f.r.out, row) }

func (f hostsFleet) note(threads int) string {
	if threads == 0 {
		return " from host " + f.h.Clients[0].Endpoint.Name
	}
	var parts []string
	for i, n := range splitThreads(threads, len(f.h.Clients)) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", f.h.Clients[i].Endpoint.Name, n))
		}
	}
	return " (server on host " + f.h.Server.Endpoint.Name + ", clients " + strings.Join(parts, " ") + ")"
}
