package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tierbench/tierbench/internal/keyspace"
)

// nodeBatches is one thread's pre-built requests for one master: batch i
// is req[offsets[i]:offsets[i+1]] and asks for
// keys[keyOffsets[i]:keyOffsets[i+1]]. Flat, so a big set holds no
// pointers for the GC.
type nodeBatches struct {
	req        []byte
	offsets    []int
	keyOffsets []int
	keys       []uint64
}

func (nb *nodeBatches) count() int { return len(nb.offsets) - 1 }

func (nb *nodeBatches) reset() {
	nb.req, nb.keys = nb.req[:0], nb.keys[:0]
	nb.offsets, nb.keyOffsets = append(nb.offsets[:0], 0), append(nb.keyOffsets[:0], 0)
}

// maxDrawFactor bounds the draws spent filling every node's batches: a
// node that owns few keys of the key range stops the filling after this
// many times the keys wanted and keeps what it got.
const maxDrawFactor = 64

// draw fills t.drawn with the thread's keys: each master gets perNode
// keys, taken in draw order from the sampler's stream and skipping keys
// whose master is full, so every master receives the same number of
// requests and, with --zipf, the keys a master gets follow the skew
// restricted to its own keys.
func (t *clusterThread) draw(threads, thread, perNode int) {
	rng := keyRNG(t.p.Seed, cellStream(t.p.op, threads, thread))
	want := perNode * len(t.m.nodes)
	got := make([]int, len(t.m.nodes))
	served := 0
	for _, o := range t.m.nodes {
		if len(o.Ranges) > 0 {
			served++
		}
	}
	t.drawn = make([]uint64, 0, want)
	full := 0
	for tries := 0; full < served && tries < maxDrawFactor*want; tries++ {
		k := t.p.sampler.Next(rng)
		i := t.m.owner[t.slotOf(k)]
		if i < 0 || got[i] == perNode {
			continue
		}
		t.drawn = append(t.drawn, k)
		if got[i]++; got[i] == perNode {
			full++
		}
	}
}

// route builds every link's batches from t.drawn with the current map:
// keys go to the master of their slot in draw order, Batch to a batch;
// a node's last, partial batch is kept only when it is its only one.
func (t *clusterThread) route() error {
	t.m = t.cs.current()
	for _, l := range t.links {
		l.batches.reset()
		l.at = 0
	}
	for _, k := range t.drawn {
		l, err := t.ownerLink(k)
		if err != nil {
			return err
		}
		nb := &l.batches
		nb.keys = append(nb.keys, k)
		if len(nb.keys)-nb.keyOffsets[len(nb.keyOffsets)-1] == t.p.Batch {
			t.closeBatch(nb)
		}
	}
	t.active = t.active[:0]
	for _, l := range t.links {
		nb := &l.batches
		if last := nb.keyOffsets[len(nb.keyOffsets)-1]; last < len(nb.keys) {
			if nb.count() == 0 {
				t.closeBatch(nb)
			} else {
				nb.keys = nb.keys[:last]
			}
		}
		if nb.count() > 0 {
			t.active = append(t.active, l)
		}
	}
	return nil
}

func (t *clusterThread) closeBatch(nb *nodeBatches) {
	first := nb.keyOffsets[len(nb.keyOffsets)-1]
	for _, k := range nb.keys[first:] {
		t.oneKey[0] = k
		nb.req = appendCommand(nb.req, t.op, t.oneKey, t.p.keyLength, t.p.ValueLength)
	}
	nb.offsets = append(nb.offsets, len(nb.req))
	nb.keyOffsets = append(nb.keyOffsets, len(nb.keys))
}

// round sends one batch to every active master, then reads every reply,
// then follows the redirections they held. Without redirections it
// allocates nothing.
func (t *clusterThread) round() error {
	for _, l := range t.active {
		nb := &l.batches
		req := nb.req[nb.offsets[l.at]:nb.offsets[l.at+1]]
		if _, err := l.conn.Write(req); err != nil {
			return fmt.Errorf("send %s batch to %s: %w", t.op, l.node.Addr, closedErr(err))
		}
		l.sent += int64(len(req))
		l.requests += int64(nb.keyOffsets[l.at+1] - nb.keyOffsets[l.at])
	}
	for _, l := range t.active {
		nb := &l.batches
		keys := nb.keys[nb.keyOffsets[l.at]:nb.keyOffsets[l.at+1]]
		if err := l.rr.replies(len(keys), 1, keys); err != nil {
			return fmt.Errorf("read %s replies from %s: %w", t.op, l.node.Addr, closedErr(err))
		}
		if l.at++; l.at == nb.count() {
			l.at = 0
		}
	}
	if len(t.pending) > 0 {
		if err := t.resolve(); err != nil {
			return err
		}
	}
	if t.cs.current() != t.m {
		return t.route()
	}
	return nil
}

// runClusterCell is runCell for --cluster-bench: each thread holds one
// connection to every master and sends each its own batches.
func runClusterCell(ctx context.Context, p *plan, threads int) (*CellResult, error) {
	res := &CellResult{Op: p.op.String(), Threads: threads, Batch: p.Batch, Pipeline: p.Pipeline, Verified: p.Verify, Zipf: p.dist.Kind == keyspace.Zipfian, KeyDist: p.dist.String()}
	cs, err := p.clusterState(ctx)
	if err != nil {
		return nil, err
	}
	ts := make([]*clusterThread, threads)
	defer func() {
		for _, t := range ts {
			if t != nil {
				t.close()
			}
		}
	}()
	nodes := len(cs.current().nodes)
	perNode := max((prebuiltOps(p, threads)+p.Batch-1)/p.Batch, 1) * p.Batch
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := newClusterThread(ctx, p, cs, p.op)
			if err != nil {
				errs[i] = err
				return
			}
			ts[i] = t
			t.draw(threads, i, perNode)
			errs[i] = t.route()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	res.PrebuiltOpsPerThread = len(ts[0].drawn)
	refreshes := cs.refreshes.Load()

	var conns []*socket
	for _, t := range ts {
		conns = append(conns, t.conns()...)
	}
	var stop atomic.Bool
	res.Seconds, res.ClientCPUSeconds, res.HostStealShare = timedWindow(ctx, p.Runtime, &stop, func() { cutAll(conns) }, threads, func(i int) {
		for !stop.Load() {
			if err := ts[i].round(); err != nil {
				errs[i] = err
				stop.Store(true)
				return
			}
		}
	})
	res.ClientSaturated = saturated(res.ClientCPUSeconds, res.Seconds, threads)
	res.Cluster = clusterResult(cs, ts, res.Seconds, refreshes)
	for _, t := range ts {
		for _, l := range t.links {
			if res.FirstError == "" {
				res.FirstError = l.rr.firstError
			}
			res.BytesSent += l.sent
			res.BytesReceived += l.rr.received
		}
	}
	for _, n := range res.Cluster.Nodes {
		res.Hits += n.Hits
		res.Misses += n.Misses
		res.Errors += n.Errors
		res.Mismatches += n.Mismatches
	}
	res.Ops = res.Hits + res.Misses + res.Errors
	res.OpsPerSec = float64(res.Ops) / max(res.Seconds, 1e-9)
	var firstErr error
	for _, err := range errs {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	switch {
	case ctx.Err() != nil:
		res.Incomplete = true
		return res, fmt.Errorf("bench: %s cell with %d threads interrupted after %d ops: %w", res.Op, threads, res.Ops, ctx.Err())
	case firstErr != nil:
		res.Incomplete = true
		return res, fmt.Errorf("bench: %s cell with %d threads against the %d-master cluster at %s stopped after %d ops: %w", res.Op, threads, nodes, p.addr, res.Ops, firstErr)
	}
	return res, nil
}
