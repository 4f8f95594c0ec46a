package orchestrator

import (
	"cmp"
	"context"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fleet"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/target"
)

// The facade's side of package fleet: the run's clients on this machine
// or across hosts, and the address and password the run's servers and
// clients are given.

// localFleet runs the clients on this machine with the run's own
// preflight and bench.
func (r *runner) localFleet() fleet.Local {
	return fleet.NewLocal(func(ctx context.Context) error { return preflight.Local(ctx, r.preflightEnv()) }, r.benchLocal)
}

// fleetEnv is the run as the client hosts see it (fleet.Env).
func (r *runner) fleetEnv() fleet.Env {
	return fleet.Env{
		Config: r.cfg,
		RunID:  r.plan.RunID,
		Bundle: r.out,
		Printf: r.printf,
		Preflight: func(ctx context.Context, h *docker.HostsDriver) error {
			return preflight.AcrossHosts(ctx, r.preflightEnv(), h)
		},
		CheckNetwork: func(ctx context.Context, h *docker.HostsDriver, tgt target.Server) error {
			return preflight.Network(ctx, r.preflightEnv(), h, tgt)
		},
		BenchArgs: r.benchArgs,
		CellOps:   r.cellOps(),
		RowFile:   target.FileName,
		DataDirs:  r.serverDataDirs,
		CleanData: r.cleanData,
	}
}

// pickHosts opens the run across hosts (fleet.Open): the hosts' driver
// becomes the run's, the fleet its clients, and the address the server
// listens on and the password made for it the run's.
func (r *runner) pickHosts(ctx context.Context) error {
	f, err := fleet.Open(ctx, r.fleetEnv())
	if err != nil {
		return err
	}
	r.drv, r.clients = f.Driver, f
	r.plan.Runtime = f.Driver.Name()
	r.plan.Hosts, r.auth = f.Plan, f.Auth
	return nil
}

// bindAddr is where the server listens.
func (r *runner) bindAddr() string { return fleet.Bind(r.plan.Hosts) }

// serverPort is the port of the next row's server.
func (r *runner) serverPort() (int, error) {
	if r.plan.Hosts != nil {
		return r.plan.Hosts.Port, nil
	}
	return target.FreePort()
}

// authArgs are the password flags of the server and of every client.
func (r *runner) authArgs() []string {
	if r.auth == "" {
		return nil
	}
	return []string{"--auth-file", cmp.Or(r.authFile, rig.ContainerPasswordFile)}
}

// hostPrefix begins a progress line about a server host elsewhere.
func hostPrefix(h rig.ServerHost) string {
	if w := h.Where(); w != "" {
		return strings.TrimPrefix(w, " on ") + ": "
	}
	return ""
}
