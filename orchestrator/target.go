package orchestrator

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// targetSource gives every row its target. There are two: the servers
// the run starts afresh per row (ownServers), and the server or cluster at
// --server-addr, proven once before anything is created (externalTarget).
// What differs between them beyond the start is asked here, never by
// testing the configuration.
type targetSource interface {
	start(ctx context.Context, row results.Row) (target.Server, error)
	// dataDirs are the data dirs its servers write on the server host.
	dataDirs() []string
	// started says the run starts the servers: tierbench's own checks
	// (O_DIRECT, the io_uring probe, disk space for segments) judge them,
	// pinning applies, and the layers below RESP can be run.
	started() bool
}

// ownServers starts a fresh server (or the row's shards) on wiped data
// dirs for every row.
type ownServers struct{ r *runner }

func (o ownServers) started() bool { return true }

func (o ownServers) dataDirs() []string {
	if len(o.r.cfg.DataDirs) > 1 {
		return o.r.cfg.DataDirs
	}
	return []string{o.r.cfg.DataDir}
}

func (o ownServers) start(ctx context.Context, row results.Row) (target.Server, error) {
	if row.Shards > 1 {
		return o.r.startShards(ctx, row)
	}
	return o.r.StartServer(ctx, row)
}

// externalTarget is the server at --server-addr, or the masters of the
// cluster it is a node of, each proven to be owned by its pid.
type externalTarget struct {
	nodes   []*target.Node
	cluster bool
	// clientArgs are its clients' TLS, user and password-file flags; tls
	// says it was reached at rediss://.
	clientArgs []string
	tls        bool
}

func (e *externalTarget) started() bool      { return false }
func (e *externalTarget) dataDirs() []string { return nil }

func (e *externalTarget) start(context.Context, results.Row) (target.Server, error) {
	return target.Server{Addr: e.nodes[0].Addr, Nodes: e.nodes, Cluster: e.cluster, ClientArgs: e.clientArgs, TLS: e.tls}, nil
}

// attachExternal proves the server at --server-addr before anything is
// created or started: a wrong pid or nothing listening is refused at once.
func (r *runner) attachExternal(ctx context.Context) (*externalTarget, error) {
	nodes, err := r.externalCluster(ctx)
	if err != nil {
		return nil, err
	}
	if nodes != nil {
		if r.cfg.Latency {
			if r.cfg.Explicit("latency") {
				return nil, fmt.Errorf("%w: --latency against a cluster (%s is a cluster node) is not supported: the latency steps' fixed-rate client drives one server; leave --latency out", fault.ErrConfig, r.cfg.ServerAddr)
			}
			r.cfg.Latency = false
			r.printf("latency: off against a cluster (the fixed-rate client drives one server)\n")
		}
		if r.cfg.SLO != "" {
			return nil, fmt.Errorf("%w: --slo against a cluster (%s is a cluster node) is not supported: the search's fixed-rate client drives one server; leave --slo out", fault.ErrConfig, r.cfg.ServerAddr)
		}
		return &externalTarget{nodes: nodes, cluster: true}, nil
	}
	acc, args, dir, err := r.externalAccess()
	if err != nil {
		return nil, err
	}
	r.secretDir = dir
	proof, err := r.local.proc.ProveServer(ctx, acc, r.cfg.ServerAddr, r.cfg.ServerPID)
	if err != nil {
		return nil, err
	}
	r.cfg.ServerPID = proof.PID
	r.printf("server: %s%s\n", proof.Sentence(), externalWords(r.cfg))
	n := &target.Node{Addr: r.cfg.ServerAddr, Proof: &proof, Probe: rig.LocalProbe{Addr: r.cfg.ServerAddr, Pid: proof.PID, Proc: r.local.proc, Acc: acc}}
	return &externalTarget{nodes: []*target.Node{n}, clientArgs: args, tls: r.cfg.ServerTLS}, nil
}

// StartServer starts a fresh server on a wiped data dir and proves it.
func (r *runner) StartServer(ctx context.Context, row results.Row) (target.Server, error) {
	if err := r.host.WipeData(ctx, r.cfg.DataDir); err != nil {
		return target.Server{}, err
	}
	port, err := r.serverPort()
	if err != nil {
		return target.Server{}, err
	}
	l, err := r.serverLaunch(row, port)
	if err != nil {
		return target.Server{}, err
	}
	spec := rig.ServerSpec{
		Name:    rowFileName(row),
		Args:    l.args,
		LogPath: filepath.Join(r.out, results.DirLogs, "server-"+rowFileName(row)+".log"),
		DataDir: r.cfg.DataDir,
		Program: l.prog,
		Image:   l.img,
	}
	spec.Args = append(spec.Args, r.tlsServerArgs(row, port)...)
	spec.Access = r.rowAccess(row)
	if !l.auth {
		spec.Access.Auth = ""
	}
	if row.Pin == plan.PinPinned {
		spec.CPUs, spec.Mems = r.local.pinning.ServerCPUs, r.local.pinning.ServerMems
	}
	r.printf("%s %s: starting the server%s on a wiped %s, %s\n", rowTitle(row), row.Label, r.host.Where(), r.cfg.DataDir, tlsWord(row.TLS))
	srv, err := r.drv.StartServer(ctx, spec)
	if err != nil {
		return target.Server{}, fmt.Errorf("orchestrator: %s %s: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	addr := net.JoinHostPort(r.bindAddr(), strconv.Itoa(port))
	n := &target.Node{Addr: addr, Handle: srv, Dir: r.cfg.DataDir, Probe: srv.Probe(addr)}
	tgt := target.Server{Addr: addr, Nodes: []*target.Node{n}, Handle: srv, Command: l.command, ClientArgs: r.tlsClientArgs(row), TLS: row.TLS, NoAuth: !l.auth}
	if err := r.proveNode(ctx, row, n, spec.LogPath); err != nil {
		srv.Stop(context.Background())
		return target.Server{}, err
	}
	if err := r.serverPreflight(ctx, row, srv, r.cfg.DataDir, &tgt); err != nil {
		srv.Stop(context.Background())
		return target.Server{}, err
	}
	if err := r.clients.CheckNetwork(ctx, tgt); err != nil {
		srv.Stop(context.Background())
		return target.Server{}, err
	}
	return tgt, nil
}

// proveNode waits until a node the run started answers and proves that
// the pid whose counters are read is the one that owns its socket.
func (r *runner) proveNode(ctx context.Context, row results.Row, n *target.Node, logPath string) error {
	wctx := ctx
	w, watched := n.Handle.(exitWatch)
	if watched {
		// A server that exits before it answers is said at once, with its
		// exit status and its last lines, not after the whole wait.
		var cancel context.CancelFunc
		wctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-w.Exited():
				cancel()
			case <-wctx.Done():
			}
		}()
	}
	if err := rig.WaitProbe(wctx, n.Probe, 60*time.Second); err != nil {
		if watched && ctx.Err() == nil && isDone(w.Exited()) {
			return fmt.Errorf("orchestrator: %s %s: server at %s: %w", row.Backend, row.Label, n.Addr, w.ExitReport())
		}
		return fmt.Errorf("orchestrator: %s %s: server at %s never answered: %w (log %s)", row.Backend, row.Label, n.Addr, err, logPath)
	}
	if n.Handle != nil {
		// The process that answers may be below the one started (a
		// launcher): from here on its pid is the server's.
		if err := n.Handle.FindServer(ctx, n.Addr, 10*time.Second); err != nil {
			return fmt.Errorf("orchestrator: %s %s: %w (log %s)", row.Backend, row.Label, err, logPath)
		}
		n.Probe = n.Handle.Probe(n.Addr)
	}
	proof, err := n.Probe.Prove(ctx)
	if err != nil {
		return fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, err)
	}
	n.Proof = &proof
	return nil
}

// exitWatch is a server whose exit the run sees as it happens (the process
// runtime's children, by their pidfd).
type exitWatch interface {
	Exited() <-chan struct{} // closed once it exited and was reaped
	ExitReport() error       // its exit status and the last lines of its log
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// serverArgs are the flags of tierbench's own server of row on port, its
// data under dataDir: the catalogue's tierbench entry (package sut).
func (r *runner) serverArgs(row results.Row, port int, dataDir string) ([]string, error) {
	own, err := sut.Lookup(results.OwnServer)
	if err != nil {
		return nil, err
	}
	return own.Process(rowScenario(row), nil, r.serverValues(row, port, r.drv.DataPath(dataDir)))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("orchestrator: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
