package target

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// There are two sources of a row's target: the servers the run starts
// afresh per row (Own), and the server or cluster at --server-addr,
// proven once before anything is created (External). Both answer the
// same three questions — Start, DataDirs and Started — so that the run
// asks them what differs, never the configuration.

// Own starts a fresh server (or the row's shards) on wiped data dirs for
// every row. Its fields do not change during the run; what is known only
// once the driver is open comes through Env.
type Own struct {
	Config plan.Config
	// Out is the bundle: the servers' logs and the cluster node files go
	// to its logs dir.
	Out string
	// Topo is this machine's NUMA topology, Pinning where a pinned row's
	// server runs: the shards are placed from them.
	Topo    rig.Topology
	Pinning rig.Pinning
	Env     Env
}

// Started says the run starts the servers: tierbench's own checks
// (O_DIRECT, the io_uring probe, disk space for segments) judge them,
// pinning applies, and the layers below RESP can be run.
func (o *Own) Started() bool { return true }

// DiskDir is where its servers' data lives, whose disks are the
// passes' evidence: the run's data dir.
func (o *Own) DiskDir() string { return o.Config.DataDir }

// DataDirs are the data dirs its servers write on the server host.
func (o *Own) DataDirs() []string {
	if len(o.Config.DataDirs) > 1 {
		return o.Config.DataDirs
	}
	return []string{o.Config.DataDir}
}

// Start starts row's server, or its shards, and proves it.
func (o *Own) Start(ctx context.Context, row results.Row) (Server, error) {
	if row.Shards > 1 {
		return o.startShards(ctx, row)
	}
	return o.StartServer(ctx, row)
}

// External is the server at --server-addr, or the masters of the
// cluster it is a node of, each proven to be owned by its pid.
type External struct {
	nodes   []*Node
	cluster bool
	// clientArgs are its clients' TLS, user and password-file flags; tls
	// says it was reached at rediss://.
	clientArgs []string
	tls        bool
	// diskDir is where the user said the server's data lives (--data);
	// "" when not said.
	diskDir string
}

// Started is false: the run starts nothing.
func (e *External) Started() bool { return false }

// Attached is what the attach found, for the parts that have something
// to say of it (plan.AttachChecker).
func (e *External) Attached() plan.Attached { return plan.Attached{Cluster: e.cluster} }

// DiskDir is where the user said the server's data lives (--data), or
// "" when not said: the run then samples no disk, as any other would be
// a stranger's evidence.
func (e *External) DiskDir() string { return e.diskDir }

// DataDirs are none: the run writes no data dir of an external server.
func (e *External) DataDirs() []string { return nil }

// Start gives every row the same proven nodes.
func (e *External) Start(context.Context, results.Row) (Server, error) {
	return Server{Addr: e.nodes[0].Addr, Nodes: e.nodes, Cluster: e.cluster, ClientArgs: e.clientArgs, TLS: e.tls}, nil
}

// Attach proves the server at cfg's --server-addr before anything is
// created or started: a wrong pid or nothing listening is refused at
// once. It sets cfg's ServerPID to the proven pid. What the measurements
// say of the server found is theirs (External.Attached).
func Attach(ctx context.Context, cfg *plan.Config, proc rig.ProcRoot, env Env) (*External, error) {
	// How the server is reached comes first: it decides whether its
	// cluster map can be read. Without TLS or a password it has no side
	// effect (no password file), so a cluster node's reach is dropped.
	reach, err := env.ExternalReach()
	if err != nil {
		return nil, err
	}
	nodes, err := externalCluster(ctx, *cfg, proc, reach.Access, env.Printf)
	if err != nil {
		return nil, err
	}
	diskDir := ""
	if cfg.Explicit("data") {
		diskDir = cfg.DataDir
	}
	if nodes != nil {
		return &External{nodes: nodes, cluster: true, diskDir: diskDir}, nil
	}
	proof, err := proc.ProveServer(ctx, reach.Access, cfg.ServerAddr, cfg.ServerPID)
	if err != nil {
		return nil, err
	}
	cfg.ServerPID = proof.PID
	env.Printf("server: %s%s\n", proof.Sentence(), reach.Words)
	n := &Node{Addr: cfg.ServerAddr, Proof: &proof, Probe: rig.LocalProbe{Addr: cfg.ServerAddr, Pid: proof.PID, Proc: proc, Acc: reach.Access}}
	return &External{nodes: []*Node{n}, clientArgs: reach.ClientArgs, tls: cfg.ServerTLS, diskDir: diskDir}, nil
}

// StartServer starts a fresh server on a wiped data dir and proves it.
func (o *Own) StartServer(ctx context.Context, row results.Row) (Server, error) {
	env, cfg := o.Env, o.Config
	host, drv := env.Host(), env.Driver()
	if err := host.WipeData(ctx, cfg.DataDir); err != nil {
		return Server{}, err
	}
	port, err := env.ServerPort()
	if err != nil {
		return Server{}, err
	}
	l, err := o.serverLaunch(row, port)
	if err != nil {
		return Server{}, err
	}
	spec := rig.ServerSpec{
		Name:    FileName(row),
		Args:    l.args,
		LogPath: filepath.Join(o.Out, results.DirLogs, "server-"+FileName(row)+".log"),
		DataDir: cfg.DataDir,
		OwnDir:  l.ownDir,
		Program: l.prog,
		Image:   l.img,
	}
	spec.Args = append(spec.Args, env.ServerTLSArgs(row, port)...)
	spec.Access = env.Access(row)
	if !l.auth {
		spec.Access.Auth = ""
	}
	if row.Pin == plan.PinPinned {
		spec.CPUs, spec.Mems = o.Pinning.ServerCPUs, o.Pinning.ServerMems
	}
	env.Printf("%s %s: starting the server%s on a wiped %s, %s\n", rowTitle(row), row.Label, host.Where(), cfg.DataDir, tlsWord(row.TLS))
	srv, err := drv.StartServer(ctx, spec)
	if err != nil {
		return Server{}, fmt.Errorf("target: %s %s: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	addr := net.JoinHostPort(env.Bind(), strconv.Itoa(port))
	n := &Node{Addr: addr, Handle: srv, Dir: cfg.DataDir, Probe: srv.Probe(addr)}
	tgt := Server{Addr: addr, Nodes: []*Node{n}, Handle: srv, Command: l.commandOf(spec.Args), ClientArgs: env.ClientTLSArgs(row), TLS: row.TLS, NoAuth: !l.auth}
	if err := proveNode(ctx, row, n, spec.LogPath); err != nil {
		srv.Stop(context.Background())
		return Server{}, err
	}
	if err := env.Preflight(ctx, row, srv, cfg.DataDir, &tgt); err != nil {
		srv.Stop(context.Background())
		return Server{}, err
	}
	if err := env.CheckNetwork(ctx, tgt); err != nil {
		srv.Stop(context.Background())
		return Server{}, err
	}
	return tgt, nil
}

// proveNode waits until a node the run started answers and proves that
// the pid whose counters are read is the one that owns its socket.
func proveNode(ctx context.Context, row results.Row, n *Node, logPath string) error {
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
			return fmt.Errorf("target: %s %s: server at %s: %w", row.Backend, row.Label, n.Addr, w.ExitReport())
		}
		return fmt.Errorf("target: %s %s: server at %s never answered: %w (log %s)", row.Backend, row.Label, n.Addr, err, logPath)
	}
	if n.Handle != nil {
		// The process that answers may be below the one started (a
		// launcher): from here on its pid is the server's.
		if err := n.Handle.FindServer(ctx, n.Addr, 10*time.Second); err != nil {
			return fmt.Errorf("target: %s %s: %w (log %s)", row.Backend, row.Label, err, logPath)
		}
		n.Probe = n.Handle.Probe(n.Addr)
	}
	proof, err := n.Probe.Prove(ctx)
	if err != nil {
		return fmt.Errorf("target: %s %s: %w", row.Backend, row.Label, err)
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

// ServerArgs are the flags of tierbench's own server of row on port, its
// data under dataDir: the catalogue's tierbench entry (package sut).
func (o *Own) ServerArgs(row results.Row, port int, dataDir string) ([]string, error) {
	own, err := sut.Lookup(results.OwnServer)
	if err != nil {
		return nil, err
	}
	return own.Process(rowScenario(row), nil, o.serverValues(row, port, o.Env.Driver().DataPath(dataDir)))
}

// FreePort is a port free on 127.0.0.1 now, for a server the run starts
// on this machine.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("target: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tlsWord is how a progress line names a row's transport.
func tlsWord(on bool) string {
	if on {
		return "TLS"
	}
	return "plain TCP"
}
