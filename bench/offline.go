package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/keyspace"
)

// readBufferBytes is each connection's reply buffer; it must hold the
// longest reply line, not a whole batch.
const readBufferBytes = 64 << 10

// loadWriteBytes is how much MSET the loader pipelines per write: enough to
// amortise the round trip, small enough to bound memory per load thread.
const loadWriteBytes = 1 << 20

// progressInterval is how often a long load reports on stderr.
const progressInterval = 2 * time.Second

// load writes every key 0..DBSize-1 exactly once with MSET batches.
func load(ctx context.Context, p *plan, progress io.Writer) (*LoadResult, error) {
	if p.Cluster {
		return loadCluster(ctx, p, progress)
	}
	threads := int(min(int64(p.loadThreads), p.DBSize))
	res := &LoadResult{Keys: p.DBSize, Threads: threads, Batch: p.Batch}
	conns, err := dialAll(ctx, p.addr, p.spec, threads)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	stopWatch := context.AfterFunc(ctx, func() {
		cutAll(conns)
	})
	defer stopWatch()

	var acked atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	progressDone := goReportLoadProgress(progress, p.DBSize, &acked, start, done)

	counts := make([]replyCounts, threads)
	firstErrors := make([]string, threads)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := keyspace.Split(p.DBSize, threads, i)
			rr := newReplyReader(conns[i], readBufferBytes, opMSet, false, p.ValueLength)
			errs[i] = loadThread(conns[i], p, lo, hi, rr, &acked)
			counts[i] = rr.counts
			firstErrors[i] = rr.firstError
		}()
	}
	wg.Wait()
	close(done)
	<-progressDone
	res.Seconds = time.Since(start).Seconds()
	for i := range threads {
		res.Acknowledged += counts[i].hits
		res.Errors += counts[i].errors
		if res.FirstError == "" {
			res.FirstError = firstErrors[i]
		}
	}
	res.OpsPerSec = float64(res.Acknowledged) / max(res.Seconds, 1e-9)
	err = errors.Join(errs...)
	if err != nil {
		res.Incomplete = true
		if ctx.Err() != nil {
			err = fmt.Errorf("bench: load interrupted after %d of %d keys: %w", res.Acknowledged, res.Keys, ctx.Err())
		} else {
			err = fmt.Errorf("bench: load to %s: %w", p.addr, err)
		}
	}
	return res, err
}

// loadThread writes keys [lo, hi) as MSETs of up to Batch keys, pipelining
// about loadWriteBytes per write, and reads every reply.
func loadThread(conn *socket, p *plan, lo, hi int64, rr *replyReader, acked *atomic.Int64) error {
	var buf []byte
	keys := make([]uint64, 0, p.Batch)
	var sizes []int // keys in each MSET of the current write
	for lo < hi {
		buf, sizes = buf[:0], sizes[:0]
		for lo < hi && (len(buf) == 0 || len(buf) < loadWriteBytes) {
			n := min(int64(p.Batch), hi-lo)
			keys = keys[:0]
			for k := lo; k < lo+n; k++ {
				keys = append(keys, uint64(k))
			}
			buf = appendCommand(buf, opMSet, keys, p.keyLength, p.ValueLength)
			sizes = append(sizes, int(n))
			lo += n
		}
		if _, err := conn.Write(buf); err != nil {
			return fmt.Errorf("send MSET: %w", closedErr(err))
		}
		for _, n := range sizes {
			before := rr.counts.hits
			if err := rr.reply(keys[:n]); err != nil {
				return fmt.Errorf("read MSET reply: %w", closedErr(err))
			}
			acked.Add(rr.counts.hits - before)
		}
	}
	return nil
}

// threadBatches is one offline thread's pre-built requests: batch i is
// req[offsets[i]:offsets[i+1]] and asks for keys[i*Batch:(i+1)*Batch].
// Both are flat so a big set of batches holds no pointers for the GC.
// With plan.redraw, rng keeps drawing the thread's keys and layout says
// where they go in a request.
type threadBatches struct {
	req     []byte
	offsets []int
	keys    []uint64
	rng     *rand.Rand  // the thread's key stream: the pre-built keys, then the redrawn ones
	layout  reqLayout   // of one request: single-key, or MGET/MSET of Batch keys
	mix     *mixBatches // --op-mix: the commands of each batch; nil otherwise
}

// prebuiltOps picks how many requests a thread builds before the window.
func prebuiltOps(p *plan, threads int) int {
	if p.PrebuiltOpsPerThread > 0 {
		return p.PrebuiltOpsPerThread
	}
	return min(max((1<<21)/threads, 4*p.Batch), 1<<16)
}

// maxPrebuiltBytes bounds one thread's automatically sized pre-built
// requests; an explicit PrebuiltOpsPerThread is honoured whatever it costs.
const maxPrebuiltBytes = 16 << 20

// buildBatches draws the keys of one thread and encodes its batches.
func buildBatches(p *plan, threads, thread int) *threadBatches {
	b := p.Batch
	nb := max((prebuiltOps(p, threads)+b-1)/b, 1)
	tb := &threadBatches{offsets: make([]int, 1, nb+1), keys: make([]uint64, 0, nb*b),
		rng: keyRNG(p.Seed, cellStream(p.op, threads, thread))}
	// Single-key requests all have the layout of the first one: copy it
	// and write only the key digits (and SET's value) in place.
	var tmpl []byte
	if p.op.multiKey() {
		tb.layout = newLayout(p.op, b, p.keyLength, p.ValueLength)
	} else {
		tb.layout = newLayout(p.op, 1, p.keyLength, p.ValueLength)
		tmpl = appendCommand(nil, p.op, []uint64{0}, p.keyLength, p.ValueLength)
		tb.req = make([]byte, 0, min(nb*b*len(tmpl), maxPrebuiltBytes+b*len(tmpl)))
	}
	for i := range nb {
		first := len(tb.keys)
		for range b {
			tb.keys = append(tb.keys, p.sampler.Next(tb.rng))
		}
		keys := tb.keys[first:]
		if p.op.multiKey() {
			tb.req = appendCommand(tb.req, p.op, keys, p.keyLength, p.ValueLength)
		} else {
			for j := range keys {
				at := len(tb.req)
				tb.req = append(tb.req, tmpl...)
				tb.layout.fill(tb.req[at:], keys[j:j+1], p.keyLength, p.ValueLength)
			}
		}
		tb.offsets = append(tb.offsets, len(tb.req))
		if p.PrebuiltOpsPerThread == 0 && len(tb.req) >= maxPrebuiltBytes && i+1 < nb {
			break
		}
	}
	return tb
}

func (tb *threadBatches) count() int { return len(tb.offsets) - 1 }

// offlineThread is one connection's share of a cell: its pre-built
// requests, its reply parser and what it sent; a clientLoop drives it.
type offlineThread struct {
	conn    *socket
	batches *threadBatches
	rr      *replyReader
	sent    int64
	err     error
	mix     *threadMix // --op-mix: figures per operation
}

// runCell runs one offline cell at the given thread count: connections and
// batches are made first, then all threads start together and run for
// Runtime. The result covers what was done even when err is set.
func runCell(ctx context.Context, p *plan, threads int) (*CellResult, error) {
	if p.Cluster {
		return runClusterCell(ctx, p, threads)
	}
	res := &CellResult{Op: p.op.String(), Threads: threads, Batch: p.Batch, Pipeline: p.Pipeline, Verified: p.Verify, Zipf: p.dist.Kind == keyspace.Zipfian, KeyDist: p.dist.String(), KeysRedrawn: p.redraw}
	conns, err := dialAll(ctx, p.addr, p.spec, threads)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	ts := make([]*offlineThread, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &offlineThread{
				conn: conns[i],
				rr:   newReplyReader(conns[i], readBufferBytes, p.op, p.Verify, p.ValueLength),
			}
			if p.mix != nil {
				t.batches = buildMixBatches(p, threads, i)
				t.mix = &threadMix{pend: make([]pendingLatency, 0, p.Batch)}
			} else {
				t.batches = buildBatches(p, threads, i)
			}
			ts[i] = t
		}()
	}
	wg.Wait()

	res.PrebuiltOpsPerThread = ts[0].batches.count() * p.Batch

	runFor, end, late, err := waitWindow(ctx, p.StartAt, p.Runtime)
	if err != nil {
		return nil, err
	}
	if !end.IsZero() {
		res.Window = newWindow(p, late)
	}
	var stop, cut atomic.Bool
	res.ClientLoops = loopCount(p, threads)
	loops, err := newClientLoops(p, ts, res.ClientLoops, &stop, &cut, end)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, l := range loops {
			l.close()
		}
	}()
	interrupt := func() {
		cut.Store(true)
		for _, l := range loops {
			l.wake()
		}
	}
	res.Seconds, res.ClientCPUSeconds, res.HostStealShare = timedWindow(ctx, runFor, &stop, interrupt, len(loops), func(i int) {
		loops[i].run()
	})
	if res.Window != nil {
		res.Seconds = res.Window.Seconds // only batches answered inside it count
	}
	res.ClientSaturated = saturated(res.ClientCPUSeconds, res.Seconds, len(loops))
	reportIdle(res, p.IdleNap, loops)
	var errs []error
	for _, t := range ts {
		c := t.rr.counts
		res.Hits += c.hits
		res.Misses += c.misses
		res.Errors += c.errors
		res.Mismatches += c.mismatches
		res.BytesSent += t.sent
		res.BytesReceived += t.rr.received
		if res.FirstError == "" {
			res.FirstError = t.rr.firstError
		}
		if t.err != nil {
			errs = append(errs, t.err)
		}
	}
	res.Ops = res.Hits + res.Misses + res.Errors
	if p.mix != nil {
		mixResults(p, res, ts, loops)
	}
	res.OpsPerSec = float64(res.Ops) / max(res.Seconds, 1e-9)
	switch {
	case ctx.Err() != nil:
		res.Incomplete = true
		return res, fmt.Errorf("bench: %s cell with %d threads interrupted after %d ops: %w", res.Op, threads, res.Ops, ctx.Err())
	case len(errs) > 0:
		res.Incomplete = true
		return res, fmt.Errorf("bench: %s cell with %d threads against %s stopped after %d ops: %w", res.Op, threads, p.addr, res.Ops, errs[0])
	}
	return res, nil
}

// timedWindow is a cell's measured window: body(i) runs on n goroutines
// started together until each returns; they return once stop is set,
// which the window's end (after runFor) does, as a failing body may. When
// ctx ends, stop is set and interrupt called, to make every body return
// at once; timedWindow returns only after interrupt has. It returns the
// window's wall seconds and this process's CPU seconds over it.
func timedWindow(ctx context.Context, runFor time.Duration, stop *atomic.Bool, interrupt func(), n int, body func(i int)) (seconds, cpuSec float64, steal *float64) {
	interrupted := make(chan struct{})
	stopWatch := context.AfterFunc(ctx, func() {
		defer close(interrupted)
		stop.Store(true)
		interrupt()
	})
	// An interrupt already begun is waited for: the caller releases what
	// it touches (a loop's eventfd) once this returns.
	defer func() {
		if !stopWatch() {
			<-interrupted
		}
	}()
	cpu0 := cpuSeconds()
	stolen := cpustat.StartWatch("/")
	start := time.Now()
	timer := time.AfterFunc(runFor, func() { stop.Store(true) })
	defer timer.Stop()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(i)
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds(), cpuSeconds() - cpu0, stolen.StealShare()
}

// waitWindow waits for startAt (--start-at) and returns how long to run,
// the window's end and how late the client was ready; without a start
// time, runtime and the zero end. A late client runs for what is left.
func waitWindow(ctx context.Context, startAt time.Time, runtime time.Duration) (runFor time.Duration, end time.Time, late time.Duration, err error) {
	if startAt.IsZero() {
		return runtime, time.Time{}, 0, nil
	}
	end = startAt.Add(runtime)
	if d := time.Until(startAt); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return 0, end, 0, fmt.Errorf("bench: interrupted waiting for --start-at %d: %w", startAt.UnixMilli(), ctx.Err())
		case <-t.C:
		}
	} else {
		late = -d
	}
	return max(min(time.Until(end), runtime), 0), end, late, nil
}

func newWindow(p *plan, late time.Duration) *Window {
	return &Window{StartUnixMs: p.StartAt.UnixMilli(), Seconds: p.Runtime.Seconds(), LateSeconds: late.Seconds()}
}
