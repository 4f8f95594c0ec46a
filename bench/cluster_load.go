package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/slots"
)

// loadWindowKeys is how many keys of its range a load thread sorts by slot
// at a time: MSETs carry the keys of one slot only, and a larger window
// gives each slot more keys per MSET.
const loadWindowKeys = 1 << 18

// loadCluster is load for --cluster-bench: thread i of n still writes key
// indices [DBSize*i/n, DBSize*(i+1)/n) exactly once, but sorts each window
// of them by slot and sends each slot's keys, up to Batch per MSET, to the
// master serving that slot (an MSET across slots is -CROSSSLOT).
func loadCluster(ctx context.Context, p *plan, progress io.Writer) (*LoadResult, error) {
	cs, err := p.clusterState(ctx)
	if err != nil {
		return nil, err
	}
	threads := int(min(int64(p.loadThreads), p.DBSize))
	res := &LoadResult{Keys: p.DBSize, Threads: threads, Batch: p.Batch}
	ts := make([]*clusterThread, threads)
	defer func() {
		for _, t := range ts {
			if t != nil {
				t.close()
			}
		}
	}()
	for i := range ts {
		t, err := newClusterThread(ctx, p, cs, opMSet)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	var conns []*socket
	for _, t := range ts {
		conns = append(conns, t.conns()...)
	}
	stopWatch := context.AfterFunc(ctx, func() { cutAll(conns) })
	defer stopWatch()
	refreshes := cs.refreshes.Load()

	var acked atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	progressDone := goReportLoadProgress(progress, p.DBSize, &acked, start, done)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := keyspace.Split(p.DBSize, threads, i)
			errs[i] = t.load(lo, hi, &acked)
		}()
	}
	wg.Wait()
	close(done)
	<-progressDone
	res.Seconds = time.Since(start).Seconds()
	res.Cluster = clusterResult(cs, ts, res.Seconds, refreshes)
	for _, n := range res.Cluster.Nodes {
		res.Acknowledged += n.Hits
		res.Errors += n.Errors
	}
	for _, t := range ts {
		for _, l := range t.links {
			if res.FirstError == "" {
				res.FirstError = l.rr.firstError
			}
		}
	}
	res.OpsPerSec = float64(res.Acknowledged) / max(res.Seconds, 1e-9)
	if err = errors.Join(errs...); err != nil {
		res.Incomplete = true
		if ctx.Err() != nil {
			err = fmt.Errorf("bench: load interrupted after %d of %d keys: %w", res.Acknowledged, res.Keys, ctx.Err())
		} else {
			err = fmt.Errorf("bench: load to the cluster at %s: %w", p.addr, err)
		}
	}
	return res, err
}

// goReportLoadProgress runs reportLoadProgress on its own goroutine and
// returns a channel closed once it has returned: the load waits for it
// after closing done, so no progress line is written after the load's own.
func goReportLoadProgress(w io.Writer, keys int64, acked *atomic.Int64, start time.Time, done <-chan struct{}) <-chan struct{} {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		reportLoadProgress(w, keys, acked, start, done)
	}()
	return stopped
}

// reportLoadProgress prints the load's progress every progressInterval
// until done is closed.
func reportLoadProgress(w io.Writer, keys int64, acked *atomic.Int64, start time.Time, done <-chan struct{}) {
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			a := acked.Load()
			fmt.Fprintf(w, "[Load]: %d of %d keys (%.1f%%), %.0f keys/sec\n", a, keys, 100*float64(a)/float64(keys), float64(a)/time.Since(start).Seconds())
		}
	}
}

// loadSpan is one MSET waiting for its reply: keys sorted[from:to].
type loadSpan struct{ from, to int }

// load writes key indices [lo, hi) window by window.
func (t *clusterThread) load(lo, hi int64, acked *atomic.Int64) error {
	window := int(min(hi-lo, loadWindowKeys))
	keys := make([]uint64, window)
	sorted := make([]uint64, window)
	slotOf := make([]uint16, window)
	var count [slots.Count + 1]int
	bufs := make(map[*clusterLink][]byte)
	spans := make(map[*clusterLink][]loadSpan)
	flush := func(l *clusterLink) error {
		buf := bufs[l]
		if len(buf) == 0 {
			return nil
		}
		if _, err := l.conn.Write(buf); err != nil {
			return fmt.Errorf("send MSET to %s: %w", l.node.Addr, closedErr(err))
		}
		l.sent += int64(len(buf))
		before := t.hits()
		for _, s := range spans[l] {
			l.requests += int64(s.to - s.from)
			if err := l.rr.reply(sorted[s.from:s.to]); err != nil {
				return fmt.Errorf("read MSET reply from %s: %w", l.node.Addr, closedErr(err))
			}
		}
		if len(t.pending) > 0 {
			if err := t.resolve(); err != nil {
				return err
			}
			t.m = t.cs.current()
		}
		acked.Add(t.hits() - before)
		bufs[l], spans[l] = buf[:0], spans[l][:0]
		return nil
	}
	for lo < hi {
		n := int(min(hi-lo, int64(window)))
		clear(count[:])
		for j := range n {
			keys[j] = uint64(lo) + uint64(j)
			slotOf[j] = t.slotOf(keys[j])
			count[slotOf[j]+1]++
		}
		for s := 1; s <= slots.Count; s++ {
			count[s] += count[s-1]
		}
		next := count
		for j := range n {
			s := slotOf[j]
			sorted[next[s]] = keys[j]
			next[s]++
		}
		for s := range slots.Count {
			from, to := count[s], count[s+1]
			if from == to {
				continue
			}
			i := t.m.owner[s]
			if i < 0 {
				return fmt.Errorf("slot %d is served by no master of %s", s, describeNodes(t.m.nodes))
			}
			l, err := t.link(t.m.nodes[i])
			if err != nil {
				return err
			}
			for a := from; a < to; a += t.p.Batch {
				b := min(a+t.p.Batch, to)
				bufs[l] = appendCommand(bufs[l], opMSet, sorted[a:b], t.p.keyLength, t.p.ValueLength)
				spans[l] = append(spans[l], loadSpan{a, b})
			}
			if len(bufs[l]) >= loadWriteBytes {
				if err := flush(l); err != nil {
					return err
				}
			}
		}
		for _, l := range t.links {
			if err := flush(l); err != nil {
				return err
			}
		}
		lo += int64(n)
	}
	return nil
}

// hits is the keys acknowledged over all of t's links.
func (t *clusterThread) hits() int64 {
	var n int64
	for _, l := range t.links {
		n += l.rr.counts.hits
	}
	return n
}
