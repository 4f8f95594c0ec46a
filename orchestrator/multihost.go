package orchestrator

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/results"
)

// Runs across hosts (--server-host, --client-hosts): the server on one
// engine, the clients split over the client hosts, started together at a
// start time handed to every client (bench --start-at), each measuring
// the same window; the cell's ops are the sum of the clients' ops inside
// it, online latencies the merge of their HdrHistograms. This file sets
// the run up on its hosts; the phases' clients are in hosts_clients.go,
// the hosts' preflights in preflight.go and how the server is reached in
// package rig and package docker.

// pickHosts connects to every host, builds the image on each, sweeps
// their leftovers and chooses the address the server listens on.
func (r *runner) pickHosts(ctx context.Context) (err error) {
	srv := docker.Endpoint{Name: "local"}
	if r.cfg.ServerHost != "" {
		if srv, err = docker.ParseEndpoint(r.cfg.ServerHost, docker.DefaultContextDir()); err != nil {
			return err
		}
	}
	clients := []docker.Endpoint{srv}
	if r.cfg.ClientHosts != "" {
		if clients, err = docker.ParseEndpoints(r.cfg.ClientHosts, docker.DefaultContextDir()); err != nil {
			return err
		}
	}
	names := map[string]string{srv.Name: srv.Host}
	for i, c := range clients {
		if c.Host == srv.Host {
			clients[i].Name = srv.Name // the server host, also a client
			continue
		}
		if h, ok := names[c.Name]; ok && h != c.Host {
			return fmt.Errorf("%w: two hosts are named %q (%s and %s): name them with NAME=ENDPOINT", fault.ErrConfig, c.Name, h, c.Host)
		}
		names[c.Name] = c.Host
	}
	hd, err := docker.NewHostsDriver(ctx, srv, clients, r.cfg.Binary, r.plan.RunID, r.printf)
	if err != nil {
		return err
	}
	// Until Run takes over closing the driver, a refusal here removes
	// what the hosts' engines were given.
	defer func() {
		if err != nil {
			hd.Close(context.Background())
			r.drv, r.clients = nil, nil
		}
	}()
	r.drv, r.clients = hd, hostsFleet{r: r, h: hd}
	if !r.cfg.ServerHostLocal() {
		// This machine's claims (claimData) cover its own dirs only.
		for _, dir := range r.serverDataDirs() {
			if err = hd.Server.HoldData(ctx, dir); err != nil {
				return err
			}
		}
		hd.Server.BeforeDrop = r.cleanData
	}
	r.plan.Runtime = hd.Name()
	for _, did := range hd.RemoveStale(ctx) {
		r.printf("cleanup: %s\n", did)
	}
	hp := &results.HostsPlan{Server: srv.Record(), Clients: docker.EndpointRecords(clients)}
	if hp.Bind, hp.Port, err = r.chooseBind(ctx, hd); err != nil {
		return err
	}
	if !isLoopback(hp.Bind) {
		var b [16]byte
		rand.Read(b[:])
		r.auth = hex.EncodeToString(b[:])
		hp.Auth = true
		for _, d := range hd.Engines {
			d.Password = r.auth
		}
	}
	r.plan.Hosts = hp
	auth := "no password (loopback)"
	if hp.Auth {
		auth = "a password made for this run (not kept in the bundle)"
	}
	r.printf("host %s: the server will listen on %s, port %d, with %s\n", srv.Name, hp.Bind, hp.Port, auth)
	return nil
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
func (r *runner) chooseBind(ctx context.Context, h *docker.HostsDriver) (string, int, error) {
	bind := r.cfg.ServerBind
	if bind != "" {
		if ip := net.ParseIP(bind); ip != nil && ip.IsUnspecified() {
			r.printf("host %s: WARNING: --server-bind %s listens on every address of the host\n", h.Server.Endpoint.Name, bind)
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
			r.printf("host %s: reaches host %s (%s) from %s\n", h.Server.Endpoint.Name, peer.Endpoint.Name, ip, bind)
		}
	}
	a, err := h.Server.ProbeOnce(ctx, "port", rig.ProbeRequest{FreeOn: bind}, nil)
	if err != nil {
		return "", 0, fmt.Errorf("orchestrator: host %s: --server-bind %s: %w", h.Server.Endpoint.Name, bind, err)
	}
	return bind, a.FreePort, nil
}

// hostAddress is an address of a client host: the one its endpoint names
// (tcp://, ssh://), else the first global address the host reports.
func hostAddress(ctx context.Context, d *docker.Driver) (string, error) {
	if u, err := url.Parse(d.Endpoint.Host); err == nil && (u.Scheme == "tcp" || u.Scheme == "ssh") {
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip", u.Hostname())
		if err != nil || len(ips) == 0 {
			return "", fmt.Errorf("orchestrator: host %s: resolve %s: %v", d.Endpoint.Name, u.Hostname(), err)
		}
		return ips[0].String(), nil
	}
	a, err := d.ProbeOnce(ctx, "addrs", rig.ProbeRequest{Addrs: true}, nil)
	if err != nil {
		return "", err
	}
	if len(a.Addrs) == 0 {
		return "", fmt.Errorf("orchestrator: host %s has no global address to reach it at; give --server-bind", d.Endpoint.Name)
	}
	return a.Addrs[0], nil
}

// bindAddr is where the server listens.
func (r *runner) bindAddr() string {
	if r.plan.Hosts != nil {
		return r.plan.Hosts.Bind
	}
	return "127.0.0.1"
}

// authArgs are the password flags of the server and of every client.
func (r *runner) authArgs() []string {
	if r.auth == "" {
		return nil
	}
	return []string{"--auth-file", cmp.Or(r.authFile, rig.ContainerPasswordFile)}
}

// serverPort is the port of the next row's server.
func (r *runner) serverPort() (int, error) {
	if r.plan.Hosts != nil {
		return r.plan.Hosts.Port, nil
	}
	return freePort()
}

// hostPrefix begins a progress line about a server host elsewhere.
func hostPrefix(h rig.ServerHost) string {
	if w := h.Where(); w != "" {
		return strings.TrimPrefix(w, " on ") + ": "
	}
	return ""
}
