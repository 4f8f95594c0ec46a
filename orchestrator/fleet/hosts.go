package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// Env is what the client hosts take of their run: values fixed before
// they are opened, and the run's steps that are not the fleet's, as
// funcs.
type Env struct {
	Config plan.Config
	RunID  string
	// Bundle is the results bundle's directory.
	Bundle string
	// Printf says progress on the run's stderr.
	Printf func(format string, a ...any)
	// Preflight runs the hosts' preflight once per run and keeps it in
	// the bundle.
	Preflight func(ctx context.Context, h *docker.HostsDriver) error
	// CheckNetwork measures each client host's link to tgt's server.
	CheckNetwork func(ctx context.Context, h *docker.HostsDriver, tgt target.Server) error
	// BenchArgs are the flags every client of tgt takes: its address,
	// the dataset and the access.
	BenchArgs func(tgt target.Server) []string
	// CellOps are the flags of a measured cell's operations: GETs, or
	// the --workload mix.
	CellOps []string
	// RowFile names a row's files: its clients' logs.
	RowFile func(row results.Row) string
	// DataDirs are the data dirs the run's servers write, on the server
	// host.
	DataDirs func() []string
	// CleanData empties them; across hosts it runs in the server engine's
	// close, before the data dirs' holds are let go.
	CleanData func()
}

// Open connects to every host, builds the image on each, sweeps their
// leftovers and chooses the address the server listens on. On an error
// nothing it gave the hosts' engines is left; else the caller closes
// the returned fleet's Driver.
func Open(ctx context.Context, env Env) (_ *Hosts, err error) {
	cfg := env.Config
	srv, clients, err := Endpoints(cfg)
	if err != nil {
		return nil, err
	}
	hd, err := docker.NewHostsDriver(ctx, srv, clients, cfg.Binary, env.RunID, env.Printf)
	if err != nil {
		return nil, err
	}
	// Until the caller takes over closing the driver, a refusal here
	// removes what the hosts' engines were given.
	defer func() {
		if err != nil {
			hd.Close(context.Background())
		}
	}()
	f := NewHosts(env, hd)
	if !cfg.ServerHostLocal() {
		// This machine's claims (safe.ClaimDataDir) cover its own dirs only.
		for _, dir := range env.DataDirs() {
			if err = hd.Server.HoldData(ctx, dir); err != nil {
				return nil, err
			}
		}
		hd.Server.BeforeDrop = env.CleanData
	}
	for _, did := range hd.RemoveStale(ctx) {
		env.Printf("cleanup: %s\n", did)
	}
	hp := &results.HostsPlan{Server: srv.Record(), Clients: docker.EndpointRecords(clients)}
	if hp.Bind, hp.Port, err = f.chooseBind(ctx); err != nil {
		return nil, err
	}
	if !isLoopback(hp.Bind) {
		var b [16]byte
		rand.Read(b[:])
		f.Auth = hex.EncodeToString(b[:])
		hp.Auth = true
		for _, d := range hd.Engines {
			d.Password = f.Auth
		}
	}
	f.Plan = hp
	auth := "no password (loopback)"
	if hp.Auth {
		auth = "a password made for this run (not kept in the bundle)"
	}
	env.Printf("host %s: the server will listen on %s, port %d, with %s\n", srv.Name, hp.Bind, hp.Port, auth)
	return f, nil
}

// Endpoints are the engines cfg's hosts name: the server host's (this
// host's, named "local", without --server-host) and the client hosts'
// (the server host's without --client-hosts), a client host with the
// server host's endpoint named as it.
func Endpoints(cfg plan.Config) (srv docker.Endpoint, clients []docker.Endpoint, err error) {
	srv = docker.Endpoint{Name: "local"}
	if cfg.ServerHost != "" {
		if srv, err = docker.ParseEndpoint(cfg.ServerHost, docker.DefaultContextDir()); err != nil {
			return srv, nil, err
		}
	}
	clients = []docker.Endpoint{srv}
	if cfg.ClientHosts != "" {
		if clients, err = docker.ParseEndpoints(cfg.ClientHosts, docker.DefaultContextDir()); err != nil {
			return srv, nil, err
		}
	}
	names := map[string]string{srv.Name: srv.Host}
	for i, c := range clients {
		if c.Host == srv.Host {
			clients[i].Name = srv.Name // the server host, also a client
			continue
		}
		if h, ok := names[c.Name]; ok && h != c.Host {
			return srv, nil, fmt.Errorf("%w: two hosts are named %q (%s and %s): name them with NAME=ENDPOINT", fault.ErrConfig, c.Name, h, c.Host)
		}
		names[c.Name] = c.Host
	}
	return srv, clients, nil
}

func isLoopback(addr string) bool {
	ip := net.ParseIP(addr)
	return ip != nil && ip.IsLoopback()
}

// chooseBind picks the server's listening address and port: --server-bind,
// else the server host's source address on the route to the first client
// host that is not the server host itself (loopback when every client
// runs beside the server). A wildcard is used only when asked for, and
// said.
func (f *Hosts) chooseBind(ctx context.Context) (string, int, error) {
	h := f.Driver
	bind := f.env.Config.ServerBind
	if bind != "" {
		if ip := net.ParseIP(bind); ip != nil && ip.IsUnspecified() {
			f.env.Printf("host %s: WARNING: --server-bind %s listens on every address of the host\n", h.Server.Endpoint.Name, bind)
		}
	} else {
		var peer *docker.Driver
		for _, c := range h.Clients {
			if c != h.Server {
				peer = c
				break
			}
		}
		if peer == nil {
			bind = "127.0.0.1"
		} else {
			ip, err := hostAddress(ctx, peer)
			if err != nil {
				return "", 0, err
			}
			a, err := h.Server.ProbeOnce(ctx, "route", rig.ProbeRequest{RouteTo: ip}, nil)
			if err != nil {
				return "", 0, err
			}
			bind = a.Source
			f.env.Printf("host %s: reaches host %s (%s) from %s\n", h.Server.Endpoint.Name, peer.Endpoint.Name, ip, bind)
		}
	}
	a, err := h.Server.ProbeOnce(ctx, "port", rig.ProbeRequest{FreeOn: bind}, nil)
	if err != nil {
		return "", 0, fmt.Errorf("fleet: host %s: --server-bind %s: %w", h.Server.Endpoint.Name, bind, err)
	}
	return bind, a.FreePort, nil
}

// hostAddress is an address of a client host: the one its endpoint names
// (tcp://, ssh://), else the first global address the host reports.
func hostAddress(ctx context.Context, d *docker.Driver) (string, error) {
	if u, err := url.Parse(d.Endpoint.Host); err == nil && (u.Scheme == "tcp" || u.Scheme == "ssh") {
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip", u.Hostname())
		if err != nil || len(ips) == 0 {
			return "", fmt.Errorf("fleet: host %s: resolve %s: %v", d.Endpoint.Name, u.Hostname(), err)
		}
		return ips[0].String(), nil
	}
	a, err := d.ProbeOnce(ctx, "addrs", rig.ProbeRequest{Addrs: true}, nil)
	if err != nil {
		return "", err
	}
	if len(a.Addrs) == 0 {
		return "", fmt.Errorf("fleet: host %s has no global address to reach it at; give --server-bind", d.Endpoint.Name)
	}
	return a.Addrs[0], nil
}

// Bind is where the servers listen: the address Open chose across hosts
// (hp, nil on one machine), else loopback.
func Bind(hp *results.HostsPlan) string {
	if hp != nil {
		return hp.Bind
	}
	return "127.0.0.1"
}
