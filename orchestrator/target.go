package orchestrator

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/results"
)

// A row's server: a fresh one started on a wiped data dir, or the
// external one attached to, and the address, pid and probe its cells are
// measured through.

// rowTarget is where one row's server answers.
type rowTarget struct {
	addr string
	pid  int // 0 = unknown
	srv  serverHandle
	// probe reaches the server and reads its evidence; counted says
	// whether its device reads can be counted (a pid here, or a host
	// that reads its own /proc).
	probe   serverProbe
	counted bool
	// uringProbe is the io_uring check of the preflight run where the
	// server runs, for a uring row.
	uringProbe string
	proof      *results.OwnerProof // pid proven to own the socket at addr
	// nodes are the masters when the server is a cluster (shards.go).
	nodes []*clusterNode
}

// startTarget starts a fresh server on a wiped data dir, or attaches to
// the external one.
func (r *runner) startTarget(ctx context.Context, row results.Row) (rowTarget, error) {
	if r.cfg.ServerAddr != "" && r.external.nodes != nil {
		return rowTarget{addr: r.cfg.ServerAddr, proof: r.external.nodes[0].proof, nodes: r.external.nodes}, nil
	}
	if r.cfg.ServerAddr != "" {
		tgt := rowTarget{addr: r.cfg.ServerAddr, pid: r.cfg.ServerPID, proof: r.external.proof, counted: r.cfg.ServerPID > 0}
		tgt.probe = r.probeFor(tgt)
		return tgt, nil
	}
	if row.Shards > 1 {
		return r.startShards(ctx, row)
	}
	if err := r.host.wipeData(ctx, r.cfg.DataDir); err != nil {
		return rowTarget{}, err
	}
	port, err := r.serverPort()
	if err != nil {
		return rowTarget{}, err
	}
	spec := serverSpec{
		Name:    row.Backend + "-" + row.Pin,
		Args:    r.serverArgs(row, port, r.cfg.DataDir),
		LogPath: filepath.Join(r.out, results.DirLogs, fmt.Sprintf("server-%s-%s.log", row.Backend, row.Pin)),
		DataDir: r.cfg.DataDir,
	}
	spec.Args = append(spec.Args, r.authArgs()...)
	if row.Pin == PinPinned {
		spec.CPUs, spec.Mems = r.pinning.ServerCPUs, r.pinning.ServerMems
	}
	r.printf("%s %s: starting the server%s on a wiped %s\n", titleCase(row.Backend), row.Label, r.hostsNote(), r.cfg.DataDir)
	srv, err := r.drv.startServer(ctx, spec)
	if err != nil {
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	tgt := rowTarget{addr: net.JoinHostPort(r.bindAddr(), strconv.Itoa(port)), pid: srv.pid(), srv: srv}
	tgt.probe = r.probeFor(tgt)
	tgt.counted = tgt.probe.counts()
	if err := waitProbe(ctx, tgt.probe, 60*time.Second); err != nil {
		srv.stop(context.Background())
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: server never answered: %w (log %s)", row.Backend, row.Label, err, spec.LogPath)
	}
	// The pid whose /proc/<pid>/io is read must be the one that answers.
	proof, err := tgt.probe.prove(ctx)
	if err != nil {
		srv.stop(context.Background())
		return rowTarget{}, fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, err)
	}
	tgt.proof = &proof
	if err := r.serverPreflight(ctx, row, srv, r.cfg.DataDir, &tgt); err != nil {
		srv.stop(context.Background())
		return rowTarget{}, err
	}
	if r.hosts != nil && !r.hosts.netChecked {
		if err := r.networkPreflight(ctx, tgt); err != nil {
			srv.stop(context.Background())
			return rowTarget{}, err
		}
		r.hosts.netChecked = true
	}
	return tgt, nil
}

// serverArgs are the flags of one tiered server of row on port, its log
// under dataDir.
func (r *runner) serverArgs(row results.Row, port int, dataDir string) []string {
	return rowSpec(row).serverArgs(r, row, port, r.drv.dataPath(dataDir))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("orchestrator: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitPing(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		c, err := dialRESP(ctx, addr)
		if err == nil {
			_, err = c.do("PING")
			c.Close()
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%v (last: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
