package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
)

// This file is --cluster-bench's routing: the slot map shared by a run's
// threads, each thread's links to the masters, and the slow path that
// follows -MOVED and -ASK. The offline cells are in cluster_offline.go and
// the load in cluster_load.go.

// slotMap is one version of the cluster's slot map; it is never changed
// once published, so threads read it without locks.
type slotMap struct {
	version uint64
	nodes   []ClusterNode
	owner   [slots.Count]int16 // index into nodes; -1: served by none
}

func newSlotMap(nodes []ClusterNode, version uint64) *slotMap {
	m := &slotMap{version: version, nodes: nodes}
	for i := range m.owner {
		m.owner[i] = -1
	}
	for i, n := range nodes {
		for _, r := range n.Ranges {
			for s := int(r.Start); s <= int(r.End); s++ {
				m.owner[s] = int16(i)
			}
		}
	}
	return m
}

// ownerAddr is the address of the master serving slot, "" when none does.
func (m *slotMap) ownerAddr(slot uint16) string {
	if i := m.owner[slot]; i >= 0 {
		return m.nodes[i].Addr
	}
	return ""
}

// clusterState is the slot map of a run, refreshed after a -MOVED.
type clusterState struct {
	spec      dialSpec
	seed      string // the node the map was first read from
	mu        sync.Mutex
	cur       atomic.Pointer[slotMap]
	refreshes atomic.Int64
}

func discoverState(ctx context.Context, p *plan) (*clusterState, error) {
	nodes, err := discoverCluster(ctx, p.addr, p.spec)
	if err != nil {
		return nil, err
	}
	cs := &clusterState{spec: p.spec, seed: p.addr}
	cs.cur.Store(newSlotMap(nodes, 1))
	return cs, nil
}

func (cs *clusterState) current() *slotMap { return cs.cur.Load() }

// moved publishes what a -MOVED said: slot now lives at addr. Unless
// another thread refreshed since version seen, it re-reads the map from
// addr (falling back to the first node) and makes sure slot points at addr
// whatever a lagging node's map says.
func (cs *clusterState) moved(ctx context.Context, seen uint64, slot uint16, addr string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cur := cs.cur.Load()
	if cur.version != seen && cur.ownerAddr(slot) == addr {
		return nil
	}
	nodes, err := discoverCluster(ctx, addr, cs.spec)
	if err != nil {
		if nodes, err = discoverCluster(ctx, cs.seed, cs.spec); err != nil {
			return fmt.Errorf("bench: refresh the slot map after -MOVED %d %s: %w", slot, addr, err)
		}
	}
	m := newSlotMap(nodes, cur.version+1)
	if m.ownerAddr(slot) != addr {
		at := -1
		for i, n := range m.nodes {
			if n.Addr == addr {
				at = i
			}
		}
		if at < 0 {
			m.nodes = append(m.nodes, ClusterNode{Addr: addr})
			at = len(m.nodes) - 1
		}
		m.owner[slot] = int16(at)
	}
	cs.cur.Store(m)
	cs.refreshes.Add(1)
	return nil
}

// parseRedirect reads "MOVED 3999 127.0.0.1:6381" or "ASK 3999 host:port"
// (an error reply without its '-').
func parseRedirect(text []byte) (ask bool, slot uint16, addr string, ok bool) {
	var rest []byte
	switch {
	case bytes.HasPrefix(text, []byte("MOVED ")):
		rest = text[len("MOVED "):]
	case bytes.HasPrefix(text, []byte("ASK ")):
		ask, rest = true, text[len("ASK "):]
	default:
		return false, 0, "", false
	}
	sp := bytes.IndexByte(rest, ' ')
	if sp <= 0 || sp == len(rest)-1 {
		return false, 0, "", false
	}
	n, err := strconv.ParseUint(string(rest[:sp]), 10, 16)
	if err != nil || n >= slots.Count {
		return false, 0, "", false
	}
	addr = string(rest[sp+1:])
	if bytes.IndexByte(rest[sp+1:], ' ') >= 0 || bytes.IndexByte(rest[sp+1:], ':') < 0 {
		return false, 0, "", false
	}
	return ask, uint16(n), addr, true
}

// maxRedirects bounds how often one key is redirected before its op is
// counted as an error: a slot bouncing between nodes is a broken cluster.
const maxRedirects = 5

// redirect is one -MOVED or -ASK owed a retry.
type redirect struct {
	ask   bool
	slot  uint16
	addr  string
	keys  []uint64
	tries int
}

// clusterLink is one thread's connection to one master and what it
// counted there.
type clusterLink struct {
	node     ClusterNode
	conn     *socket
	rr       *replyReader
	batches  nodeBatches
	at       int   // next batch to send
	requests int64 // keys sent to this node in batches
	sent     int64 // bytes written
	moved    int64 // -MOVED replies from this node
	ask      int64 // -ASK replies from this node
}

// clusterThread is one thread's links to every master: the offline cell's
// and the load's unit of work.
type clusterThread struct {
	ctx     context.Context
	p       *plan
	op      opcode
	cs      *clusterState
	m       *slotMap // the map the links and batches were built from
	links   []*clusterLink
	active  []*clusterLink // links with batches, in send order
	drawn   []uint64       // the offline keys, in draw order
	byAddr  map[string]*clusterLink
	pending []redirect
	retry   []byte   // scratch request of the slow path
	keyBuf  []byte   // scratch key spelling for slot computation
	oneKey  []uint64 // scratch of the slow path
}

func newClusterThread(ctx context.Context, p *plan, cs *clusterState, op opcode) (*clusterThread, error) {
	t := &clusterThread{ctx: ctx, p: p, op: op, cs: cs, m: cs.current(), byAddr: map[string]*clusterLink{},
		keyBuf: make([]byte, p.keyLength), oneKey: make([]uint64, 1)}
	for _, n := range t.m.nodes {
		if _, err := t.link(n); err != nil {
			t.close()
			return nil, err
		}
	}
	return t, nil
}

// link returns the thread's link to node, dialling it the first time.
func (t *clusterThread) link(n ClusterNode) (*clusterLink, error) {
	if l := t.byAddr[n.Addr]; l != nil {
		if n.ID != "" {
			l.node.ID = n.ID
		}
		return l, nil
	}
	conn, err := dial(t.ctx, n.Addr, t.p.spec)
	if err != nil {
		return nil, err
	}
	l := &clusterLink{node: n, conn: conn, rr: newReplyReader(conn, readBufferBytes, t.op, t.p.Verify, t.p.ValueLength)}
	l.rr.redirect = t.redirectHook(l)
	t.links = append(t.links, l)
	t.byAddr[n.Addr] = l
	return l, nil
}

// redirectHook is called by a link's reply reader for each error reply; it
// takes -MOVED and -ASK (counting them, never as ops) and leaves the rest
// to be counted as errors. It allocates only when a redirection comes.
func (t *clusterThread) redirectHook(l *clusterLink) func(text []byte, keys []uint64) bool {
	return func(text []byte, keys []uint64) bool {
		ask, slot, addr, ok := parseRedirect(text)
		if !ok {
			return false
		}
		if ask {
			l.ask++
		} else {
			l.moved++
		}
		t.pending = append(t.pending, redirect{ask: ask, slot: slot, addr: addr, keys: append([]uint64(nil), keys...)})
		return true
	}
}

func (t *clusterThread) close() {
	for _, l := range t.links {
		l.conn.conn.Close()
	}
}

func (t *clusterThread) conns() []*socket {
	out := make([]*socket, len(t.links))
	for i, l := range t.links {
		out[i] = l.conn
	}
	return out
}

// slotOf is the slot of key index k as the keys are spelled.
func (t *clusterThread) slotOf(k uint64) uint16 {
	keyspace.PutKey(t.keyBuf, k)
	return slots.Of(t.keyBuf)
}

// ownerLink is the link to the master serving key index k in t's map.
func (t *clusterThread) ownerLink(k uint64) (*clusterLink, error) {
	slot := t.slotOf(k)
	i := t.m.owner[slot]
	if i < 0 {
		return nil, fmt.Errorf("bench: slot %d (key index %d) is served by no master of %s", slot, k, describeNodes(t.m.nodes))
	}
	return t.link(t.m.nodes[i])
}

// resolve retries every pending redirection: after -MOVED it refreshes
// the shared map and sends the command again to the new owner; after -ASK
// it sends ASKING and the command to the named node once, leaving the map
// alone. A retry that is redirected again joins the queue, up to
// maxRedirects times per key.
func (t *clusterThread) resolve() error {
	for i := 0; i < len(t.pending); i++ {
		r := t.pending[i]
		if !r.ask {
			if err := t.cs.moved(t.ctx, t.m.version, r.slot, r.addr); err != nil {
				return err
			}
		}
		l, err := t.link(ClusterNode{Addr: r.addr})
		if err != nil {
			return fmt.Errorf("bench: follow redirection of slot %d: %w", r.slot, err)
		}
		if r.tries >= maxRedirects {
			l.rr.counts.errors += int64(len(r.keys))
			if l.rr.firstError == "" {
				l.rr.firstError = fmt.Sprintf("slot %d redirected %d times", r.slot, r.tries)
			}
			continue
		}
		t.retry = t.retry[:0]
		if r.ask {
			t.retry = appendBulkString(appendArrayHeader(t.retry, 1), "ASKING")
		}
		t.retry = appendCommand(t.retry, t.op, r.keys, t.p.keyLength, t.p.ValueLength)
		if _, err := l.conn.Write(t.retry); err != nil {
			return fmt.Errorf("bench: send redirected %s to %s: %w", t.op, r.addr, closedErr(err))
		}
		l.sent += int64(len(t.retry))
		if r.ask {
			if err := l.rr.expectOK("ASKING"); err != nil {
				return fmt.Errorf("bench: ASKING on %s: %w", r.addr, closedErr(err))
			}
		}
		before := len(t.pending)
		if err := l.rr.reply(r.keys); err != nil {
			return fmt.Errorf("bench: read redirected %s reply from %s: %w", t.op, r.addr, closedErr(err))
		}
		for j := before; j < len(t.pending); j++ {
			t.pending[j].tries = r.tries + 1
		}
	}
	t.pending = t.pending[:0]
	return nil
}

// expectOK consumes one reply that must be +OK (the answer to ASKING).
func (rr *replyReader) expectOK(what string) error {
	start, end, err := rr.line()
	if err != nil {
		return err
	}
	if string(rr.buf[start:end]) != "+OK" {
		return fmt.Errorf("%s answered %q", what, rr.buf[start:end])
	}
	return nil
}

// ClusterResult is the per-node breakdown of a --cluster-bench load or
// cell. Redirections are counted here and never as ops: an op redirected
// and answered elsewhere counts once, on the node that answered it.
type ClusterResult struct {
	Nodes []NodeResult `json:"nodes"`
	// Moved and Ask count -MOVED and -ASK replies over all nodes.
	Moved int64 `json:"moved"`
	Ask   int64 `json:"ask"`
	// MapRefreshes counts slot-map reloads after a -MOVED.
	MapRefreshes int64 `json:"map_refreshes"`
}

// NodeResult is one master's share. Requests counts keys sent to it in
// batches; Ops the keys it answered (hits + misses + errors), redirected
// retries included, so the sum of Ops over the nodes is the sum of
// Requests when no op was lost.
type NodeResult struct {
	ID         string  `json:"id"`
	Addr       string  `json:"addr"`
	Slots      int     `json:"slots"`
	Requests   int64   `json:"requests"`
	Ops        int64   `json:"ops"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	Hits       int64   `json:"hits"`
	Misses     int64   `json:"misses"`
	Errors     int64   `json:"errors"`
	Mismatches int64   `json:"mismatches"`
	Moved      int64   `json:"moved"`
	Ask        int64   `json:"ask"`
}

// clusterResult sums the threads' links per node address, in the order
// of the final map (nodes that left it come last).
func clusterResult(cs *clusterState, ts []*clusterThread, seconds float64, mapsBefore int64) *ClusterResult {
	m := cs.current()
	res := &ClusterResult{MapRefreshes: cs.refreshes.Load() - mapsBefore}
	at := map[string]int{}
	slotsOf := map[string]int{}
	for _, o := range m.owner {
		if o >= 0 {
			slotsOf[m.nodes[o].Addr]++
		}
	}
	node := func(n ClusterNode) *NodeResult {
		i, ok := at[n.Addr]
		if !ok {
			i = len(res.Nodes)
			at[n.Addr] = i
			res.Nodes = append(res.Nodes, NodeResult{ID: n.ID, Addr: n.Addr, Slots: slotsOf[n.Addr]})
		}
		if res.Nodes[i].ID == "" {
			res.Nodes[i].ID = n.ID
		}
		return &res.Nodes[i]
	}
	for _, n := range m.nodes {
		node(n)
	}
	for _, t := range ts {
		if t == nil {
			continue
		}
		for _, l := range t.links {
			nr := node(l.node)
			c := l.rr.counts
			nr.Requests += l.requests
			nr.Hits += c.hits
			nr.Misses += c.misses
			nr.Errors += c.errors
			nr.Mismatches += c.mismatches
			nr.Moved += l.moved
			nr.Ask += l.ask
			res.Moved += l.moved
			res.Ask += l.ask
		}
	}
	for i := range res.Nodes {
		n := &res.Nodes[i]
		n.Ops = n.Hits + n.Misses + n.Errors
		n.OpsPerSec = float64(n.Ops) / max(seconds, 1e-9)
	}
	return res
}

// planCluster checks what --cluster-bench can drive.
func (p *plan) planCluster() error {
	if p.Online {
		return usagef("--cluster-bench drives offline cells; --online against a cluster is not supported")
	}
	if p.op.multiKey() && p.Runtime != 0 {
		return usagef("--cluster-bench: --op %s carries keys of many slots in one command, which a cluster refuses (-CROSSSLOT); use GET or SET (the load groups its MSETs by slot itself)", p.op)
	}
	return nil
}

// clusterState reads the slot map on first use and shares it between the
// load and the cells of a run.
func (p *plan) clusterState(ctx context.Context) (*clusterState, error) {
	p.clusterOnce.Do(func() { p.cluster, p.clusterErr = discoverState(ctx, p) })
	return p.cluster, p.clusterErr
}

// printClusterLines prints the per-node breakdown under a load or a cell.
func printClusterLines(w io.Writer, c *ClusterResult) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "[Cluster]: %d masters; %d -MOVED and %d -ASK redirections followed (not counted as ops), %d slot-map refreshes\n", len(c.Nodes), c.Moved, c.Ask, c.MapRefreshes)
	for _, n := range c.Nodes {
		fmt.Fprintf(w, "[Node %s]: id %s, %d slots, %d keys sent, %d ops (%.0f ops/sec), %d hits, %d misses, %d errors, %d -MOVED, %d -ASK\n",
			n.Addr, n.ID, n.Slots, n.Requests, n.Ops, n.OpsPerSec, n.Hits, n.Misses, n.Errors, n.Moved, n.Ask)
	}
}
