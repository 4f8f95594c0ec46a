package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/bench"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/slots"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/sut"
)

// This file is sharding: `run --shards N` starts N tiered servers as one
// static cluster (tierbench server --cluster-…), each with its own data
// dir and CPU set, and `run --server-addr` of a cluster node measures the
// cluster its masters form. Either way the row's target is a list of
// nodes: the load is checked per node and in total, device reads and CPU
// are counted per node, and the client drives them with --cluster-bench.

// shardDir is shard i's data dir: the i-th of a --data list, else a
// directory of its own under --data.
func shardDir(c plan.Config, i, shards int) string {
	if len(c.DataDirs) > 1 {
		return c.DataDirs[i]
	}
	if shards == 1 {
		return c.DataDir
	}
	return filepath.Join(c.DataDir, fmt.Sprintf("shard-%d", i))
}

// ExpandShards gives every backend × pin row one row per --shards count;
// a sharded row is labelled "N shards / <pin label>".
func ExpandShards(c plan.Config, rows []results.Row) []results.Row {
	counts := c.ShardCounts()
	if len(counts) == 1 && counts[0] == 1 {
		return rows
	}
	var out []results.Row
	for _, row := range rows {
		for _, n := range counts {
			x := row
			x.Shards = n
			if n > 1 || len(counts) > 1 {
				x.Label = fmt.Sprintf("%d %s / %s", n, human.Plural(n, "shard"), row.Label)
			}
			out = append(out, x)
		}
	}
	return out
}

// shardPlace is where one shard runs.
type shardPlace struct{ CPUs, Mems string }

// shardPlaces gives each of n shards its own CPU set: a NUMA node each
// when the host has n nodes, else disjoint slices of the CPUs the row's
// server may use (the server half when pinned, all CPUs otherwise), else,
// when those are fewer than n, disjoint slices of all CPUs. With more
// shards than CPUs they run unpinned. The sentence says which it was.
func shardPlaces(n int, topo rig.Topology, pin string, pn rig.Pinning) ([]shardPlace, string) {
	var all []int
	for _, node := range topo.Nodes {
		all = append(all, node...)
	}
	if n > 1 && len(topo.Nodes) >= n && (pin != plan.PinPinned || len(topo.Nodes) > n) {
		out := make([]shardPlace, n)
		for i := range out {
			out[i] = shardPlace{rig.FormatCPUList(topo.Nodes[i]), strconv.Itoa(i)}
		}
		return out, fmt.Sprintf("shard i on NUMA node i (nodes 0-%d)", n-1)
	}
	pool, where := all, "of all CPUs"
	if pin == plan.PinPinned {
		if cpus, err := rig.ParseCPUList(pn.ServerCPUs); err == nil && len(cpus) >= n {
			pool, where = cpus, "of the server's CPUs "+pn.ServerCPUs
		} else {
			where = "of all CPUs, overlapping the client's (the server half is too small)"
		}
	}
	if len(pool) < n {
		return make([]shardPlace, n), fmt.Sprintf("unpinned: %d shards on %d CPUs", n, len(pool))
	}
	out := make([]shardPlace, n)
	var sets []string
	for i := range out {
		lo, hi := len(pool)*i/n, len(pool)*(i+1)/n
		out[i] = shardPlace{CPUs: rig.FormatCPUList(pool[lo:hi])}
		if pin == plan.PinPinned {
			out[i].Mems = pn.ServerMems
		}
		sets = append(sets, out[i].CPUs)
	}
	return out, fmt.Sprintf("disjoint slices %s: cpus %s", where, strings.Join(sets, " | "))
}

// shardGroup is the row's shards as one server: stop stops them all.
type shardGroup struct {
	nodes []*Node
	acc   rig.Access // how the run's probes reach each shard: the password
}

func (g *shardGroup) Pid() int                     { return 0 }
func (g *shardGroup) Placement() results.Placement { return g.nodes[0].Handle.Placement() }

// Probe reaches the cluster at addr; the group has no one process, so its
// counters are read per node through each node's own probe.
func (g *shardGroup) Probe(addr string) rig.ServerProbe {
	return rig.LocalProbe{Addr: addr, Acc: g.acc}
}
func (g *shardGroup) Mode() string {
	return fmt.Sprintf("%s, %d shards", g.nodes[0].Handle.Mode(), len(g.nodes))
}

func (g *shardGroup) Stop(ctx context.Context) error {
	var errs []error
	for _, n := range g.nodes {
		if n.Handle != nil {
			errs = append(errs, n.Handle.Stop(ctx))
		}
	}
	return errors.Join(errs...)
}

// startShards starts the row's shards on wiped data dirs, one static
// cluster node each, with the slots split evenly, and proves each pid
// owns its node's socket.
func (o *Own) startShards(ctx context.Context, row results.Row) (tgt Server, err error) {
	env, cfg := o.Env, o.Config
	host, drv := env.Host(), env.Driver()
	n := row.Shards
	places, how := shardPlaces(n, o.Topo, row.Pin, o.Pinning)
	ranges := slots.Split(n)
	var file []slots.Node
	group := &shardGroup{}
	own, err := sut.Lookup(results.OwnServer)
	if err != nil {
		return Server{}, err
	}
	// Each shard takes the run's password as a lone server does; the
	// shards have no cluster bus, and the clients give AUTH on every
	// node they dial, the one a redirect names too (bench.dialSpec).
	pw := env.Password()
	_, auth := pw.serverPassword(own, nil)
	if auth {
		group.acc = rig.Access{Auth: pw.Auth}
	}
	defer func() {
		if err != nil {
			group.Stop(context.Background())
		}
	}()
	for i := range n {
		port, err := FreePort()
		if err != nil {
			return Server{}, err
		}
		node := slots.Node{ID: fmt.Sprintf("%040x", i+1), Host: "127.0.0.1", Port: port, Ranges: []slots.Range{ranges[i]}}
		file = append(file, node)
		group.nodes = append(group.nodes, &Node{ID: node.ID, Addr: node.Addr(), Slots: ranges[i].Len(), Ranges: node.Ranges, Dir: shardDir(cfg, i, n)})
	}
	name := FileName(row)
	nodeFile := filepath.Join(o.Out, results.DirLogs, "cluster-nodes-"+name+".txt")
	f, err := safe.CreateOrTruncate(nodeFile, 0o644)
	if err != nil {
		return Server{}, fmt.Errorf("target: write the cluster node file: %w", err)
	}
	werr := slots.FormatNodes(f, file)
	if err := errors.Join(werr, f.Close()); err != nil {
		return Server{}, fmt.Errorf("target: write the cluster node file: %w", err)
	}
	env.Printf("%s %s: starting %d shards (%s), slots split evenly, nodes in %s\n", human.Title(row.Backend), row.Label, n, how, nodeFile)
	for i, node := range group.nodes {
		if err := host.WipeData(ctx, node.Dir); err != nil {
			return Server{}, err
		}
		args, err := o.ServerArgs(row, file[i].Port, node.Dir)
		if err != nil {
			return Server{}, err
		}
		args = append(args, "--cluster-nodes", drv.DataPath(nodeFile), "--cluster-node-id", node.ID,
			"--cluster-announce", node.Addr, "--cluster-slots", slots.FormatRanges(file[i].Ranges))
		args, _ = pw.serverPassword(own, args)
		spec := rig.ServerSpec{Name: fmt.Sprintf("%s-shard%d", name, i), Args: args, CPUs: places[i].CPUs, Mems: places[i].Mems,
			LogPath: filepath.Join(o.Out, results.DirLogs, fmt.Sprintf("server-%s-shard%d.log", name, i)), DataDir: node.Dir, Access: group.acc}
		srv, err := drv.StartServer(ctx, spec)
		if err != nil {
			return Server{}, fmt.Errorf("target: %s %s shard %d: %w (log %s)", row.Backend, row.Label, i, err, spec.LogPath)
		}
		node.Handle, node.Probe = srv, srv.Probe(node.Addr)
	}
	for i, node := range group.nodes {
		if err := proveNode(ctx, row, node, filepath.Join(o.Out, results.DirLogs, fmt.Sprintf("server-%s-shard%d.log", name, i))); err != nil {
			return Server{}, err
		}
	}
	tgt = Server{Addr: group.nodes[0].Addr, Handle: group, Nodes: group.nodes, Cluster: true, NoAuth: !auth}
	if err := env.Preflight(ctx, row, group.nodes[0].Handle, group.nodes[0].Dir, &tgt); err != nil {
		return Server{}, err
	}
	return tgt, nil
}

// externalCluster asks an external server, reached with acc, whether it
// is a cluster node; if so it returns the masters, each with the pid of
// --server-pid's list that owns its listening socket (found in /proc
// when not given).
func externalCluster(ctx context.Context, cfg plan.Config, proc rig.ProcRoot, acc rig.Access, printf func(string, ...any)) ([]*Node, error) {
	if acc.TLS != nil || acc.Auth != "" {
		// The cluster map is read over plain TCP without a password: a
		// server reached over TLS or with a password is measured as one
		// node.
		return nil, nil
	}
	masters, err := bench.DiscoverCluster(ctx, cfg.ServerAddr, "")
	var netErr *net.OpError
	if errors.Is(err, bench.ErrNotCluster) || errors.As(err, &netErr) {
		// One server, or nothing listening: the owner proof says which.
		if len(cfg.ServerPIDs) > 1 {
			return nil, fmt.Errorf("%w: --server-pid lists %d pids, but %s is not a cluster node (%v): give its one pid", fault.ErrConfig, len(cfg.ServerPIDs), cfg.ServerAddr, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("target: read the cluster map of %s: %w", cfg.ServerAddr, err)
	}
	pids := cfg.ServerPIDs
	if len(pids) == 0 && cfg.ServerPID > 0 {
		pids = []int{cfg.ServerPID}
	}
	var nodes []*Node
	used := map[int]bool{}
	for _, m := range masters {
		n := &Node{ID: m.ID, Addr: m.Addr, Ranges: m.Ranges}
		for _, rg := range m.Ranges {
			n.Slots += rg.Len()
		}
		var proof results.OwnerProof
		var lastErr error
		found := false
		if len(pids) == 0 {
			// No pids given: the owner of each node's socket, from /proc.
			proof, lastErr = proc.ProveServer(ctx, rig.Access{}, m.Addr, 0)
			found = lastErr == nil
		}
		for _, pid := range pids {
			if used[pid] {
				continue
			}
			if proof, lastErr = proc.ProveServer(ctx, rig.Access{}, m.Addr, pid); lastErr == nil {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("target: no pid of --server-pid %s owns the socket of cluster node %s: %w", formatPIDs(pids), m.Addr, lastErr)
		}
		used[proof.PID] = true
		n.Proof, n.Probe = &proof, rig.LocalProbe{Addr: m.Addr, Pid: proof.PID, Proc: proc}
		printf("cluster node %s (%d slots): %s\n", m.Addr, n.Slots, proof.Sentence())
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func formatPIDs(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// FindServer of a shard group: each shard is a tierbench server started
// by itself, whose own pid owns its socket (proven per node).
func (g *shardGroup) FindServer(context.Context, string, time.Duration) error { return nil }
