package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/diskstats"
)

// Runs across hosts (--server-host, --client-hosts): the server on one
// engine, the clients split over the client hosts, started together at a
// start time handed to every client (bench --start-at), each measuring
// the same window; the cell's ops are the sum of the clients' ops inside
// it, online latencies the merge of their HdrHistograms.

// dirHosts holds one directory per host: its preflight.json and
// fingerprint.json, network.json, and each client's JSON under clients/.
const (
	dirHosts         = "hosts"
	fileNetwork      = "network.json"
	fileHostsLatency = "latency.jsonl" // under hosts/: one merged online phase per row
)

// clientLeadTime is how far ahead of now a cell's shared start is set:
// time for every engine to create its client container and for the
// clients to connect and build their requests.
const clientLeadTime = 2 * time.Second

// HostsPlan records the hosts of a run in plan.json (never the password).
type HostsPlan struct {
	Server  Endpoint   `json:"server"`
	Clients []Endpoint `json:"clients"`
	Bind    string     `json:"server_bind"`
	Port    int        `json:"server_port"`
	Auth    bool       `json:"auth"` // a per-run password was required
}

// ClientShare is one client's part of a cell, kept in its pass record.
type ClientShare struct {
	Host        string    `json:"host"`
	Threads     int       `json:"threads"`
	Ops         int64     `json:"ops"`
	Hits        int64     `json:"hits"`
	Misses      int64     `json:"misses"`
	Errors      int64     `json:"errors"`
	OpsPerSec   float64   `json:"ops_per_sec"`
	LateSeconds float64   `json:"late_seconds"`
	Placement   Placement `json:"placement"` // read on its host
	JSON        string    `json:"json"`      // its bench JSON, relative to the bundle
}

// hostsMode reports whether the run drives hosts through their engines.
func (c Config) hostsMode() bool { return c.ServerHost != "" || c.ClientHosts != "" }

// serverProbe answers the runner's questions about a row's server:
// RESP commands, and its device reads and placement (the evidence).
type serverProbe interface {
	do(ctx context.Context, args ...string) (any, error)
	evidence(ctx context.Context) (readBytes int64, pl Placement, err error)
	// prove checks that the process whose evidence is read owns the
	// server's listening socket.
	prove(ctx context.Context) (OwnerProof, error)
	witness(ctx context.Context) (ServerWitness, error)
	sample(ctx context.Context, cfg Config) (SampleCheck, error)
}

// localProbe asks a server this machine reaches, with /proc read here.
type localProbe struct {
	addr string
	pid  int
	proc procRoot
}

func (p localProbe) do(ctx context.Context, args ...string) (any, error) {
	c, err := dialRESP(ctx, p.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do(args...)
}

func (p localProbe) prove(ctx context.Context) (OwnerProof, error) {
	return p.proc.proveServer(ctx, p.addr, p.pid)
}

func (p localProbe) witness(ctx context.Context) (ServerWitness, error) {
	return readWitness(ctx, p.addr, "")
}

func (p localProbe) sample(ctx context.Context, cfg Config) (SampleCheck, error) {
	return runSample(ctx, p.addr, "", cfg)
}

func (p localProbe) evidence(context.Context) (int64, Placement, error) {
	n, err := p.proc.readBytes(p.pid)
	if err != nil {
		return 0, Placement{}, err
	}
	pl, err := p.proc.placement(p.pid)
	return n, pl, err
}

func probeDBSize(ctx context.Context, p serverProbe) (int64, error) {
	v, err := p.do(ctx, "DBSIZE")
	if err != nil {
		return 0, err
	}
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("orchestrator: DBSIZE: want an integer reply, got %T", v)
	}
	return n, nil
}

func probeInfo(ctx context.Context, p serverProbe, section string) (map[string]string, error) {
	v, err := p.do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("orchestrator: INFO %s: want a bulk string reply, got %T", section, v)
	}
	return parseInfo(s), nil
}

// waitProbe waits until the server answers PING.
func waitProbe(ctx context.Context, p serverProbe, timeout time.Duration) error {
	return waitFor(ctx, timeout, func(ctx context.Context) error {
		_, err := p.do(ctx, "PING")
		return err
	})
}

// probeFor is how the runner reaches a row's server.
func (r *runner) probeFor(tgt rowTarget) serverProbe {
	if r.hosts != nil {
		if ds, ok := tgt.srv.(*dockerServer); ok && !ds.d.ep.local() {
			p := remoteProbe{d: ds.d, id: ds.id, addr: tgt.addr, auth: r.auth}
			r.remote = &p
			return p
		}
	}
	return localProbe{addr: tgt.addr, pid: tgt.pid, proc: r.proc}
}

// pickHosts connects to every host, builds the image on each, sweeps
// their leftovers and chooses the address the server listens on.
func (r *runner) pickHosts(ctx context.Context) error {
	srv := Endpoint{Name: "local"}
	var err error
	if r.cfg.ServerHost != "" {
		if srv, err = ParseEndpoint(r.cfg.ServerHost, DefaultContextDir()); err != nil {
			return err
		}
	}
	clients := []Endpoint{srv}
	if r.cfg.ClientHosts != "" {
		if clients, err = ParseEndpoints(r.cfg.ClientHosts, DefaultContextDir()); err != nil {
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
			return fmt.Errorf("%w: two hosts are named %q (%s and %s): name them with NAME=ENDPOINT", ErrConfig, c.Name, h, c.Host)
		}
		names[c.Name] = c.Host
	}
	hd, err := newHostsDriver(ctx, srv, clients, r.cfg.Binary, r.plan.RunID, r.printf)
	if err != nil {
		return err
	}
	r.drv, r.hosts = hd, hd
	r.plan.Runtime = RuntimeDocker
	for _, did := range hd.removeStale(ctx) {
		r.printf("cleanup: %s\n", did)
	}
	hp := &HostsPlan{Server: srv, Clients: clients}
	if hp.Bind, hp.Port, err = r.chooseBind(ctx); err != nil {
		return err
	}
	if !isLoopback(hp.Bind) {
		var b [16]byte
		rand.Read(b[:])
		r.auth = hex.EncodeToString(b[:])
		hp.Auth = true
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
func (r *runner) chooseBind(ctx context.Context) (string, int, error) {
	h := r.hosts
	bind := r.cfg.ServerBind
	if bind != "" {
		if ip := net.ParseIP(bind); ip != nil && ip.IsUnspecified() {
			r.printf("host %s: WARNING: --server-bind %s listens on every address of the host\n", h.server.ep.Name, bind)
		}
	} else {
		var peer *dockerDriver
		for _, c := range h.clients {
			if c != h.server {
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
			a, err := h.server.probeOnce(ctx, "route", ProbeRequest{RouteTo: ip}, nil)
			if err != nil {
				return "", 0, err
			}
			bind = a.Source
			r.printf("host %s: reaches host %s (%s) from %s\n", h.server.ep.Name, peer.ep.Name, ip, bind)
		}
	}
	a, err := h.server.probeOnce(ctx, "port", ProbeRequest{FreeOn: bind}, nil)
	if err != nil {
		return "", 0, fmt.Errorf("orchestrator: host %s: --server-bind %s: %w", h.server.ep.Name, bind, err)
	}
	return bind, a.FreePort, nil
}

// hostAddress is an address of a client host: the one its endpoint names
// (tcp://, ssh://), else the first global address the host reports.
func hostAddress(ctx context.Context, d *dockerDriver) (string, error) {
	if u, err := url.Parse(d.ep.Host); err == nil && (u.Scheme == "tcp" || u.Scheme == "ssh") {
		ips, err := net.DefaultResolver.LookupIP(ctx, "ip", u.Hostname())
		if err != nil || len(ips) == 0 {
			return "", fmt.Errorf("orchestrator: host %s: resolve %s: %v", d.ep.Name, u.Hostname(), err)
		}
		return ips[0].String(), nil
	}
	a, err := d.probeOnce(ctx, "addrs", ProbeRequest{Addrs: true}, nil)
	if err != nil {
		return "", err
	}
	if len(a.Addrs) == 0 {
		return "", fmt.Errorf("orchestrator: host %s has no global address to reach it at; give --server-bind", d.ep.Name)
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
	return []string{"--auth", r.auth}
}

// serverPort is the port of the next row's server.
func (r *runner) serverPort() (int, error) {
	if r.plan.Hosts != nil {
		return r.plan.Hosts.Port, nil
	}
	return freePort()
}

// wipeData empties the data dir where the server runs.
func (r *runner) wipeData(ctx context.Context) error {
	if r.hosts == nil || r.hosts.server.ep.local() {
		return wipeDir(r.cfg.DataDir)
	}
	_, err := r.hosts.server.probeOnce(ctx, "wipe", ProbeRequest{Wipe: containerDataDir}, []string{r.cfg.DataDir + ":" + containerDataDir})
	return err
}

// preflightHosts runs `tierbench preflight --json` in a container on every
// host and keeps each under hosts/<name>/; the server host's is also the
// bundle's preflight.json and fingerprint.json, and judged. The image has
// no fio, so there is no fio baseline on a remote host.
func (r *runner) preflightHosts(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(r.out, filePreflight)); err == nil && r.cfg.Resume != "" {
		return nil
	}
	if !r.cfg.NoFio {
		r.printf("preflight: no fio baseline across hosts (the image holds tierbench alone): the report has no ceiling\n")
	}
	for _, d := range r.hosts.engines {
		role := "client"
		args := append([]string{"preflight", "--json", "--data-dir", containerDataDir}, r.preflightArgs(false)...)
		var binds []string
		if d == r.hosts.server {
			role = "server"
			binds = []string{r.cfg.DataDir + ":" + containerDataDir}
		}
		dir := filepath.Join(r.out, dirHosts, d.ep.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("orchestrator: bundle: %w", err)
		}
		r.printf("host %s: preflight (%s host, %s)\n", d.ep.Name, role, d.ep.display())
		out, status, err := d.runOnce(ctx, "preflight", "preflight", args, role == "server", binds,
			filepath.Join(r.out, dirLogs, "preflight-"+d.ep.Name+".log"))
		if err == nil && status != 0 && status != 1 {
			err = fmt.Errorf("exited %d: %s", status, clip(out))
		}
		var p preflightOutput
		if err == nil {
			p, err = parsePreflight(out)
		}
		if err != nil {
			err = fmt.Errorf("orchestrator: host %s: preflight: %w", d.ep.Name, err)
			if !r.cfg.Force {
				return fmt.Errorf("%w (--force measures without a preflight)", err)
			}
			r.printf("%v; measuring anyway (--force)\n", err)
			continue
		}
		fp := p.Fingerprint
		if len(fp) == 0 {
			fp = json.RawMessage("null")
		}
		if err := errors.Join(writeFile(dir, filePreflight, out), writeFile(dir, fileFingerprint, append(fp, '\n'))); err != nil {
			return err
		}
		if role != "server" {
			continue // a client host's data-dir checks do not concern it
		}
		if err := errors.Join(writeFile(r.out, filePreflight, out), writeFile(r.out, fileFingerprint, append(fp, '\n'))); err != nil {
			return err
		}
		if err := r.judgePreflight(p, "host "+d.ep.Name); err != nil {
			return err
		}
	}
	return nil
}

// splitThreads divides a cell's connections over n client hosts: equal
// shares, the remainder one each to the first hosts.
func splitThreads(threads, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = threads / n
		if i < threads%n {
			out[i]++
		}
	}
	return out
}

// clientOut is one client's run of a phase.
type clientOut struct {
	host    string
	threads int
	pl      Placement
	rep     benchReport
	raw     []byte
	err     error
}

// benchReport is the part of bench's JSON the hosts mode reads beyond
// benchOutput: the window and the online run.
type benchReport struct {
	Cells []struct {
		benchCell
		Window *benchWindow `json:"window"`
	} `json:"cells"`
	Online *struct {
		Ops       int64        `json:"ops"`
		Histogram string       `json:"histogram"`
		Window    *benchWindow `json:"window"`
	} `json:"online"`
}

type benchWindow struct {
	StartUnixMs int64   `json:"start_unix_ms"`
	Seconds     float64 `json:"seconds"`
	LateSeconds float64 `json:"late_seconds"`
}

// runClients runs one phase on every client host with its share of
// threads, all starting at one time, and keeps each client's JSON under
// hosts/<name>/clients/. The first client that fails stops the others and
// is the error, naming its host.
func (r *runner) runClients(ctx context.Context, row Row, tgt rowTarget, name string, threads, seconds int, extra []string) ([]clientOut, error) {
	shares := splitThreads(threads, len(r.hosts.clients))
	start := time.Now().Add(clientLeadTime).Truncate(time.Millisecond)
	limit := clientLeadTime + time.Duration(seconds+phaseGraceSeconds)*time.Second
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	outs := make([]clientOut, len(shares))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, n := range shares {
		d := r.hosts.clients[i]
		outs[i] = clientOut{host: d.ep.Name, threads: n}
		if n == 0 {
			continue
		}
		args := append(r.benchArgs(tgt), "-s", "-t", strconv.Itoa(n), "--runtime", strconv.Itoa(seconds),
			"--start-at", strconv.FormatInt(start.UnixMilli(), 10))
		args = append(args, extra...)
		spec := clientSpec{Name: name + "-" + d.ep.Name, Host: i, Args: args,
			LogPath: filepath.Join(r.out, dirLogs, fmt.Sprintf("client-%s-%s-%s-%s.log", row.Backend, row.Pin, name, d.ep.Name))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[i]
			o.raw, o.pl, o.err = r.drv.runClient(pctx, spec)
			if o.err == nil {
				doc, err := jsonDocument(o.raw)
				if err == nil {
					err = json.Unmarshal(doc, &o.rep)
				}
				if err != nil {
					o.err = fmt.Errorf("host %s: client %s: bench output: %w", d.ep.Name, spec.Name, err)
				}
			}
			if o.err != nil {
				once.Do(func() { first = o.err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		if ctx.Err() == nil && pctx.Err() != nil && errors.Is(first, context.DeadlineExceeded) {
			return nil, fmt.Errorf("orchestrator: the %d s phase at t=%d did not end within %v: the server stopped answering (see logs/)", seconds, threads, limit)
		}
		return nil, first
	}
	for i := range outs {
		if outs[i].threads == 0 {
			continue
		}
		dir := filepath.Join(r.out, dirHosts, outs[i].host, "clients")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("orchestrator: bundle: %w", err)
		}
		if err := writeFile(dir, fmt.Sprintf("%s-%s-%s.json", row.Backend, row.Pin, name), outs[i].raw); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// benchHosts runs one offline GET phase over the client hosts and sums it:
// ops, hits, misses and errors are the sums of the clients' counts inside
// the shared window, and the rate is that sum over the window.
func (r *runner) benchHosts(ctx context.Context, row Row, tgt rowTarget, name string, threads, seconds int) (benchCell, Placement, error) {
	outs, err := r.runClients(ctx, row, tgt, name, threads, seconds, []string{"--op", "GET", "-b", strconv.Itoa(r.cfg.Batch)})
	if err != nil {
		return benchCell{}, Placement{}, err
	}
	// The pass record's client placement is the first client's; each
	// client's own is in its share.
	pl := outs[0].pl
	sum := benchCell{Op: "GET", Threads: threads, Batch: r.cfg.Batch, Seconds: float64(seconds)}
	for _, o := range outs {
		if o.threads == 0 {
			continue
		}
		if len(o.rep.Cells) != 1 || o.rep.Cells[0].Window == nil {
			return benchCell{}, pl, fmt.Errorf("orchestrator: host %s: client %s reported %d cells without a window, want one windowed cell", o.host, name, len(o.rep.Cells))
		}
		c := o.rep.Cells[0]
		if c.Window.Seconds != float64(seconds) {
			return benchCell{}, pl, fmt.Errorf("orchestrator: host %s: client %s measured a %v s window, want %d s", o.host, name, c.Window.Seconds, seconds)
		}
		sum.Ops += c.Ops
		sum.Hits += c.Hits
		sum.Misses += c.Misses
		sum.Errors += c.Errors
		sum.ClientCPUSeconds += c.ClientCPUSeconds
		sum.ClientSaturated = sum.ClientSaturated || c.ClientSaturated
		sum.Incomplete = sum.Incomplete || c.Incomplete
		if c.Window.LateSeconds > 0.1*float64(seconds) {
			r.printf("  host %s: the client was ready %.2f s after the shared start: it measured %.0f %% of the window\n", o.host, c.Window.LateSeconds, 100*(1-c.Window.LateSeconds/float64(seconds)))
		}
		sum.Clients = append(sum.Clients, ClientShare{Host: o.host, Threads: o.threads, Ops: c.Ops, Hits: c.Hits, Misses: c.Misses, Errors: c.Errors,
			OpsPerSec: c.OpsPerSec, LateSeconds: c.Window.LateSeconds, Placement: o.pl,
			JSON: filepath.Join(dirHosts, o.host, "clients", fmt.Sprintf("%s-%s-%s.json", row.Backend, row.Pin, name))})
	}
	sum.OpsPerSec = float64(sum.Ops) / float64(seconds)
	return sum, pl, nil
}

// HostsLatencyRecord is a line of hosts/latency.jsonl: one online GET phase of
// a row over every client host, the clients' HdrHistograms merged.
type HostsLatencyRecord struct {
	Row     Row           `json:"row"`
	Threads int           `json:"threads"`
	Seconds int           `json:"seconds"`
	Clients []ClientShare `json:"clients"`
	// Count is the merged histogram's count: the sum of the clients'.
	Count  int64     `json:"count"`
	P50us  float64   `json:"p50_us"`
	P99us  float64   `json:"p99_us"`
	P999us float64   `json:"p99_9_us"`
	Maxus  float64   `json:"max_us"`
	Time   time.Time `json:"time"`
}

// latencyHosts runs the row's online phase (closed loop, one op in flight
// per connection) over the client hosts and merges their histograms with
// the library's Merge: percentiles of all the ops, never averages of the
// clients' percentiles.
func (r *runner) latencyHosts(ctx context.Context, row Row, tgt rowTarget) error {
	threads := max(len(r.hosts.clients), min(r.cfg.Threads[0], 8))
	r.printf("%s %s: latency, %d s online at t=%d over %d client host(s)\n", titleCase(row.Backend), row.Label, r.cfg.CellSeconds, threads, len(r.hosts.clients))
	outs, err := r.runClients(ctx, row, tgt, "latency", threads, r.cfg.CellSeconds, []string{"--online", "--op-workload", "GET", "--op-percent", "100", "--itp", "1"})
	if err != nil {
		return fmt.Errorf("orchestrator: latency phase of %s %s: %w", row.Backend, row.Label, err)
	}
	rec := HostsLatencyRecord{Row: row, Threads: threads, Seconds: r.cfg.CellSeconds, Time: time.Now().UTC()}
	var merged *hdrhistogram.Histogram
	for _, o := range outs {
		if o.threads == 0 {
			continue
		}
		if o.rep.Online == nil {
			return fmt.Errorf("orchestrator: host %s: the latency client reported no online run", o.host)
		}
		h, err := hdrhistogram.Decode([]byte(o.rep.Online.Histogram))
		if err != nil {
			return fmt.Errorf("orchestrator: host %s: the latency client's histogram: %w", o.host, err)
		}
		if merged == nil {
			merged = hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		if dropped := merged.Merge(h); dropped > 0 {
			return fmt.Errorf("orchestrator: host %s: %d latencies outside the merged histogram's range", o.host, dropped)
		}
		rec.Clients = append(rec.Clients, ClientShare{Host: o.host, Threads: o.threads, Ops: h.TotalCount(),
			JSON: filepath.Join(dirHosts, o.host, "clients", fmt.Sprintf("%s-%s-latency.json", row.Backend, row.Pin))})
	}
	if merged == nil {
		return fmt.Errorf("orchestrator: latency phase of %s %s: no client ran", row.Backend, row.Label)
	}
	us := func(q float64) float64 { return float64(merged.ValueAtQuantile(q)) / 1e3 }
	rec.Count = merged.TotalCount()
	rec.P50us, rec.P99us, rec.P999us, rec.Maxus = us(50), us(99), us(99.9), float64(merged.Max())/1e3
	r.printf("  latency µs p50 %.1f p99 %.1f p99.9 %.1f over %d ops (%d clients merged)\n", rec.P50us, rec.P99us, rec.P999us, rec.Count, len(rec.Clients))
	return appendJSONLine(filepath.Join(r.out, dirHosts, fileHostsLatency), rec)
}

// appendJSONLine appends v as one line to path and syncs it.
func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("orchestrator: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Sync(), f.Close())
}

// NetworkCheck is hosts/<name>/network.json: the link from one client
// host to the server, measured by tierbench bench in a container there.
type NetworkCheck struct {
	Host       string  `json:"host"`
	RTTp50us   float64 `json:"rtt_p50_us"` // PING, one in flight
	RTTp99us   float64 `json:"rtt_p99_us"`
	NoopOps    float64 `json:"noop_ops_per_sec"` // pipelined PING
	NoopThread int     `json:"noop_threads"`
	NoopBatch  int     `json:"noop_batch"`
}

// networkPreflight measures each client host's link to the row's server
// once per run: round trips of PING at depth 1 and the rate of pipelined
// PINGs, the most this link can carry whatever the server's storage.
func (r *runner) networkPreflight(ctx context.Context, tgt rowTarget) error {
	const noopThreads, noopBatch = 4, 1024
	for i, d := range r.hosts.clients {
		if slices.Contains(r.hosts.clients[:i], d) {
			continue
		}
		nc := NetworkCheck{Host: d.ep.Name, NoopThread: noopThreads, NoopBatch: noopBatch}
		base := r.benchArgs(tgt)
		rtt, _, err := r.drv.runClient(ctx, clientSpec{Name: "net-rtt-" + d.ep.Name, Host: i, LogPath: filepath.Join(r.out, dirLogs, "net-rtt-"+d.ep.Name+".log"),
			Args: append(base, "-s", "--online", "--op-workload", "PING", "--op-percent", "100", "-t", "1", "--itp", "1", "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("orchestrator: network preflight: %w", err)
		}
		var on struct {
			Online *struct {
				Latency struct{ P50, P99 float64 } `json:"latency_us"`
			} `json:"online"`
		}
		if doc, err := jsonDocument(rtt); err != nil || json.Unmarshal(doc, &on) != nil || on.Online == nil {
			return fmt.Errorf("orchestrator: network preflight: host %s: no online report: %q", d.ep.Name, clip(rtt))
		}
		nc.RTTp50us, nc.RTTp99us = on.Online.Latency.P50, on.Online.Latency.P99
		noop, _, err := r.drv.runClient(ctx, clientSpec{Name: "net-noop-" + d.ep.Name, Host: i, LogPath: filepath.Join(r.out, dirLogs, "net-noop-"+d.ep.Name+".log"),
			Args: append(base, "-s", "--op", "PING", "-t", strconv.Itoa(noopThreads), "-b", strconv.Itoa(noopBatch), "--runtime", "1")})
		if err != nil {
			return fmt.Errorf("orchestrator: network preflight: %w", err)
		}
		b, err := parseBench(noop)
		if err != nil || len(b.Cells) != 1 {
			return fmt.Errorf("orchestrator: network preflight: host %s: %v %q", d.ep.Name, err, clip(noop))
		}
		nc.NoopOps = b.Cells[0].OpsPerSec
		r.printf("host %s: link to the server: PING round trip p50 %.0f µs p99 %.0f µs; pipelined PING %s ops/s\n", d.ep.Name, nc.RTTp50us, nc.RTTp99us, FormatOps(nc.NoopOps))
		if err := writeJSON(filepath.Join(r.out, dirHosts, d.ep.Name), fileNetwork, nc); err != nil {
			return err
		}
	}
	return nil
}

// benchArgs are the flags every client of a row's server takes.
func (r *runner) benchArgs(tgt rowTarget) []string {
	host, port, _ := net.SplitHostPort(tgt.addr)
	args := []string{"bench", "--host", host, "--port", port,
		"--dbsize", strconv.FormatInt(r.cfg.DBSize, 10),
		"--keylength", strconv.Itoa(r.cfg.KeyLength), "--valuelength", strconv.Itoa(r.cfg.ValueLength),
		"--json"}
	return append(args, r.authArgs()...)
}

// clientsNote names the client hosts of a step and their connections
// (threads 0: the load, which runs from the first client host).
func (r *runner) clientsNote(threads int) string {
	if r.hosts == nil {
		return ""
	}
	if threads == 0 {
		return " from host " + r.hosts.clients[0].ep.Name
	}
	var parts []string
	for i, n := range splitThreads(threads, len(r.hosts.clients)) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", r.hosts.clients[i].ep.Name, n))
		}
	}
	return " (server on host " + r.hosts.server.ep.Name + ", clients " + strings.Join(parts, " ") + ")"
}

// hostsNote is the progress name of where a step runs.
func (r *runner) hostsNote() string {
	if r.hosts == nil {
		return ""
	}
	return " on host " + r.hosts.server.ep.Name
}

// ServerWitness is what the load check reads from the server itself: its
// key count, INFO store (nil when the server refuses the section) and
// what INFO server says it is.
type ServerWitness struct {
	Keys  int64             `json:"keys"`
	Store map[string]string `json:"store"`
	Info  ServerInfo        `json:"info"`
}

// dialAuth connects and, with a password, authenticates.
func dialAuth(ctx context.Context, addr, auth string) (*respConn, error) {
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		if _, err := c.do("AUTH", auth); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// readWitness reads a server's witnesses over one connection.
func readWitness(ctx context.Context, addr, auth string) (ServerWitness, error) {
	var w ServerWitness
	c, err := dialAuth(ctx, addr, auth)
	if err != nil {
		return w, err
	}
	defer c.Close()
	if w.Keys, err = c.dbsize(); err != nil {
		return w, err
	}
	if w.Store, err = c.info("store"); err != nil && !isRESPError(err) {
		return w, err
	}
	w.Info, err = c.serverInfo()
	return w, err
}

// runSample runs the sampled GET check over a connection of its own.
func runSample(ctx context.Context, addr, auth string, cfg Config) (SampleCheck, error) {
	c, err := dialAuth(ctx, addr, auth)
	if err != nil {
		return SampleCheck{}, err
	}
	defer c.Close()
	return sampledHitCheck(ctx, c, cfg, mathrand.New(mathrand.NewPCG(uint64(time.Now().UnixNano()), 0x7469657262656e63)))
}

// diskSample reads the data disks' counters where the server runs.
func (r *runner) diskSample() (diskstats.Sample, error) {
	if r.remote == nil {
		return diskstats.Read(r.diskRoot, r.disks)
	}
	a, err := r.remote.d.probe(context.Background(), r.remote.id, ProbeRequest{DiskStats: r.disks})
	if err == nil && a.DiskStats == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --diskstats gave no counters", r.remote.d.ep.Name)
	}
	if err != nil {
		return diskstats.Sample{}, err
	}
	return *a.DiskStats, nil
}

// serverTicks reads the server's CPU ticks where it runs.
func (r *runner) serverTicks(pid int) (uint64, error) {
	if r.remote == nil {
		return r.proc.cpuTicks(pid)
	}
	a, err := r.remote.d.probe(context.Background(), r.remote.id, ProbeRequest{PID: pid})
	if err == nil && a.CPUTicks == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --pid gave no CPU ticks", r.remote.d.ep.Name)
	}
	if err != nil {
		return 0, err
	}
	return *a.CPUTicks, nil
}

// resolveHostDisks finds the disks below the data dir on the server's
// host, in a container that mounts it.
func (r *runner) resolveHostDisks() {
	d := r.hosts.server
	a, err := d.probeOnce(context.Background(), "disks", ProbeRequest{DataDisks: containerDataDir}, []string{r.cfg.DataDir + ":" + containerDataDir})
	if err != nil {
		r.disksNote = err.Error()
		r.printf("evidence: no disk counters: %v\n", err)
		return
	}
	r.disks = a.DataDisks
	r.printf("host %s: evidence: /proc/diskstats of %s (below %s) and the server's /proc/<pid>/stat around every GET phase, read there\n", d.ep.Name, strings.Join(r.disks, "+"), r.cfg.DataDir)
}

// rowKeyCount is the key count of a row's server, through its probe (on
// its host when it runs on another), or summed over a cluster's nodes.
func rowKeyCount(ctx context.Context, tgt rowTarget) (int64, error) {
	if tgt.probe != nil && len(tgt.nodes) == 0 {
		return probeDBSize(ctx, tgt.probe)
	}
	return keyCount(ctx, tgt)
}

// cleanHostData empties the data dir on the server's host, in a container
// of its own that is removed with it.
func (r *runner) cleanHostData() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.wipeData(ctx); err != nil {
		r.printf("cleanup: host %s: %v\n", r.hosts.server.ep.Name, err)
		return
	}
	r.printf("cleanup: host %s: removed the segment files in %s (--keep-data keeps them)\n", r.hosts.server.ep.Name, filepath.Clean(r.cfg.DataDir))
}
