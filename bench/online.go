package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/freeze"
)

// Latencies are recorded in nanoseconds from 1 ns to a minute at three
// significant digits, and printed in microseconds.
const (
	histLowestNs  = 1
	histHighestNs = int64(time.Minute)
	histDigits    = 3
)

// drainTimeout bounds how long in-flight replies are awaited after the run
// ends before their connections are cut.
const drainTimeout = 5 * time.Second

// inflight is one sent op awaiting its reply; stampNs is when it was sent
// or, with a --rate, when it was meant to be sent.
type inflight struct {
	stampNs int64
	key     uint64
	op      opcode
}

// onlineThread is one connection: a sender goroutine and a receiver
// goroutine share it, the receiver recording each op's latency.
type onlineThread struct {
	conn *socket
	rr   *replyReader

	mu   sync.Mutex
	hist *hdrhistogram.Histogram // since the last report; guarded by mu

	// warmupNs ends the warm-up: an op stamped before it is answered and
	// counted in warm, not recorded. Stamps rise in the order replies are
	// read, so warm ends as the counts after the last warm-up op.
	warmupNs int64
	warm     replyCounts

	// late is how long after its due time each recorded op was sent
	// (fixed rate only); written by the sender alone, read after it ends.
	late *hdrhistogram.Histogram
	// own is the client's own part of late: how long after the op could
	// be sent (its due time, or the reply that freed an in-flight slot for
	// it, when all were taken) it was sent. A server slower than the
	// schedule holds the sender back and shows in late, not in own.
	own   *hdrhistogram.Histogram
	nextK int64 // the first op the sender did not send
	// fullAtStop: every in-flight slot was taken when the sender saw the
	// run stop, so the ops due and not sent were held by the server, not
	// left by the client.
	fullAtStop bool
	stopSeen   bool  // a paced loop has looked at its slots since the stop
	phaseNs    int64 // op k was due at phaseNs + k×interval (paced loops spread the connections)

	sendErr, recvErr error
}

// record adds one latency; values beyond the histogram's range are clamped
// to its top rather than dropped, so every op is counted.
func (t *onlineThread) record(ns int64) {
	t.mu.Lock()
	t.hist.RecordValue(min(max(ns, histLowestNs), histHighestNs))
	t.mu.Unlock()
}

// done takes the reply of an op stamped at stampNs, read at nowNs (both
// since base): recorded, or counted as warm-up.
func (t *onlineThread) done(stampNs, nowNs int64) {
	if stampNs < t.warmupNs {
		t.warm = t.rr.counts
		return
	}
	t.record(nowNs - stampNs)
}

// opSource draws the ops of one connection: the command from the workload
// mix, the key from the sampler, encoded into a reused buffer.
type opSource struct {
	p      *plan
	keyRNG *rand.Rand // draws the keys with p.sampler
	mix    *rand.Rand
	buf    []byte
	keys   [1]uint64
}

func newOpSource(p *plan, thread int) *opSource {
	stream := uint64(1)<<62 | uint64(thread)
	if !slices.ContainsFunc(p.workload[:], func(o opcode) bool { return !o.writes() }) {
		stream ^= writeStream // see writeStream
	}
	return &opSource{
		p:      p,
		keyRNG: keyRNG(p.Seed, stream),
		mix:    rand.New(rand.NewPCG(p.Seed, mix64(uint64(thread)^0x5eed))),
		buf:    make([]byte, 0, 256+p.keyLength+p.ValueLength),
	}
}

// next draws an op and returns it with its request; the request is valid
// until the next call.
func (s *opSource) next() (opcode, uint64, []byte) {
	op := s.p.workload[s.mix.IntN(len(s.p.workload))]
	s.keys[0] = s.p.sampler.Next(s.keyRNG)
	s.buf = appendCommand(s.buf[:0], op, s.keys[:], s.p.keyLength, s.p.ValueLength)
	return op, s.keys[0], s.buf
}

// closedLoop runs a connection without a rate in one goroutine: it keeps
// InFlight ops outstanding, sending the next op as soon as a reply is in,
// and stamps each op when it is sent. One goroutine per connection costs
// the client less CPU, and so adds less to the latency it measures.
func (t *onlineThread) closedLoop(p *plan, thread int, base time.Time, stop *atomic.Bool) {
	src := newOpSource(p, thread)
	ring := make([]inflight, p.InFlight) // FIFO of outstanding ops
	head, outstanding := 0, 0
	var keys [1]uint64
	send := func() bool {
		op, key, req := src.next()
		ring[(head+outstanding)%len(ring)] = inflight{stampNs: int64(time.Since(base)), key: key, op: op}
		outstanding++
		if _, err := t.conn.Write(req); err != nil {
			t.sendErr = fmt.Errorf("send %s: %w", op, closedErr(err))
			stop.Store(true)
			return false
		}
		return true
	}
	for outstanding < len(ring) && !stop.Load() {
		if !send() {
			return
		}
	}
	for outstanding > 0 {
		e := ring[head]
		head = (head + 1) % len(ring)
		outstanding--
		keys[0] = e.key
		t.rr.op = e.op
		if err := t.rr.reply(keys[:]); err != nil {
			t.recvErr = fmt.Errorf("read %s reply: %w", e.op, closedErr(err))
			stop.Store(true)
			return
		}
		t.done(e.stampNs, int64(time.Since(base)))
		if !stop.Load() && !send() {
			return
		}
	}
}

// send issues ops at a fixed rate until stop over TLS (plain TCP runs
// pacedLoops), keeping at most InFlight in
// flight: op k is due at k*interval after base and is stamped with that due
// time, so a stall of the server is charged to every op it delayed. It
// sleeps until spinNs before the due time and spins the rest, since a
// sleep alone wakes tens of microseconds late; how late each recorded op
// was actually sent goes into t.late, and t.nextK is the first op it did
// not send, so the ops due in the window but never sent can be counted.
func (t *onlineThread) send(p *plan, thread int, base time.Time, intervalNs int64, stop *atomic.Bool, slots chan struct{}, pending chan<- inflight) {
	defer close(pending)
	src := newOpSource(p, thread)
	// Spinning costs the client CPU: only where a connection's ops are
	// far enough apart that the spin is a small share of the interval.
	spin := int64(0)
	if intervalNs >= 8*spinNs {
		spin = spinNs
	}
	k := int64(0)
	defer func() {
		t.nextK = k
		// A sender let through by a reply after the stop filled its slot
		// again, so a full channel still says the server held it.
		t.fullAtStop = len(slots) == cap(slots)
	}()
	for ; !stop.Load(); k++ {
		stamp := k * intervalNs
		if d := stamp - int64(time.Since(base)); d > spin {
			time.Sleep(time.Duration(d - spin))
		}
		for int64(time.Since(base)) < stamp {
		}
		ready := stamp
		select {
		case slots <- struct{}{}:
		default: // every slot taken: sendable once a reply frees one
			slots <- struct{}{}
			ready = max(stamp, int64(time.Since(base)))
		}
		op, key, req := src.next()
		pending <- inflight{stampNs: stamp, key: key, op: op}
		if stamp >= t.warmupNs {
			now := int64(time.Since(base))
			t.late.RecordValue(min(max(now-stamp, histLowestNs), histHighestNs))
			t.own.RecordValue(min(max(now-ready, histLowestNs), histHighestNs))
		}
		if _, err := t.conn.Write(req); err != nil {
			t.sendErr = fmt.Errorf("send %s: %w", op, closedErr(err))
			stop.Store(true)
			return
		}
	}
}

// spinNs is how long before an op's due time the fixed-rate sender stops
// sleeping and spins.
const spinNs = 30_000

// clientBoundShare: a fixed-rate run whose own sends were late by more
// than this share of the measured median latency at p99, or that left
// more than this share of its window's ops unsent with a slot free,
// measured the client.
const clientBoundShare = 0.1

// receive reads the reply of each pending op in order and records its
// latency. After a failure it keeps draining pending without reading so
// the sender never blocks on a slot.
func (t *onlineThread) receive(base time.Time, stop *atomic.Bool, slots chan struct{}, pending <-chan inflight) {
	var keys [1]uint64
	for e := range pending {
		if t.recvErr == nil {
			keys[0] = e.key
			t.rr.op = e.op
			if err := t.rr.reply(keys[:]); err != nil {
				t.recvErr = fmt.Errorf("read %s reply: %w", e.op, closedErr(err))
				stop.Store(true)
			} else {
				t.done(e.stampNs, int64(time.Since(base)))
			}
		}
		<-slots
	}
}

// runOnline runs the latency mode: Threads[0] connections, each with up to
// InFlight ops outstanding, printing a percentile row every ReportInterval.
// The first Warmup of the run sends ops as the rest does but records none:
// the figures, the histogram and --hdr-out cover the Runtime after it.
func runOnline(ctx context.Context, p *plan, human io.Writer) (*OnlineResult, error) {
	threads := p.Threads[0]
	res := &OnlineResult{Threads: threads, InFlight: p.InFlight, RateOpsPerSec: p.Rate, Verified: p.Verify,
		Warmup: WarmupResult{Seconds: p.Warmup.Seconds()}}
	for i, name := range p.OpWorkload {
		op, _ := parseOp(name)
		res.Workload = append(res.Workload, WorkloadShare{Op: op.String(), Percent: p.OpPercent[i]})
	}
	var hdrLog *hdrhistogram.HistogramLogWriter
	if p.HdrOut != "" {
		f, err := os.Create(p.HdrOut)
		if err != nil {
			return nil, fmt.Errorf("bench: --hdr-out: %w", err)
		}
		defer f.Close()
		hdrLog = hdrhistogram.NewHistogramLogWriter(f)
	}
	conns, err := dialAll(ctx, p.addr, p.spec, threads)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)

	ts := make([]*onlineThread, threads)
	for i := range ts {
		ts[i] = &onlineThread{
			conn: conns[i],
			rr:   newReplyReader(conns[i], readBufferBytes, opGet, p.Verify, p.ValueLength),
			hist: hdrhistogram.New(histLowestNs, histHighestNs, histDigits),
			late: hdrhistogram.New(histLowestNs, histHighestNs, histDigits),
			own:  hdrhistogram.New(histLowestNs, histHighestNs, histDigits),
		}
	}
	var intervalNs int64
	if p.Rate > 0 {
		intervalNs = int64(float64(threads) * 1e9 / p.Rate)
		intervalNs = max(intervalNs, 1)
	}

	var stop, cut atomic.Bool
	stopped := make(chan struct{})
	var stopOnce sync.Once
	var loops []*pacedLoop     // fixed rate over plain TCP: the paced event loops
	var stoppedAt atomic.Int64 // when end ran, Unix ns; 0 before
	end := func() {
		stopOnce.Do(func() {
			stoppedAt.Store(time.Now().UnixNano())
			stop.Store(true)
			close(stopped)
			for _, l := range loops {
				l.wake()
			}
		})
	}
	if intervalNs > 0 && p.spec.tls == nil {
		if loops, err = newPacedLoops(p, ts, pacedLoopCount(p, threads, p.Rate), intervalNs, &stop, &cut, end); err != nil {
			return nil, err
		}
		defer func() {
			for _, l := range loops {
				l.close()
			}
		}()
	}
	stopWatch := context.AfterFunc(ctx, end)
	defer stopWatch()
	// With --start-at the warm-up runs just before the shared window; a
	// client late by less than the warm-up is on time for the window.
	warmStart := p.StartAt
	if !warmStart.IsZero() {
		warmStart = warmStart.Add(-p.Warmup)
	}
	runFor, windowEnd, late, err := waitWindow(ctx, warmStart, p.Warmup+p.Runtime)
	if err != nil {
		return nil, err
	}
	if !windowEnd.IsZero() {
		res.Window = newWindow(p, max(late-p.Warmup, 0))
	}
	if p.Runtime > 0 {
		timer := time.AfterFunc(runFor, end)
		defer timer.Stop()
	}

	base := time.Now()
	warmEnd := base.Add(p.Warmup)
	if !p.StartAt.IsZero() && p.StartAt.After(base) {
		warmEnd = p.StartAt // the recorded window is the shared one
	} else if !p.StartAt.IsZero() {
		warmEnd = base // late past the window's start: no warm-up left
	}
	for _, t := range ts {
		t.warmupNs = int64(warmEnd.Sub(base))
	}
	if hdrLog != nil {
		hdrLog.OutputLogFormatVersion()
		hdrLog.OutputStartTime(base.UnixMilli())
		hdrLog.OutputBaseTime(base.UnixMilli())
		hdrLog.SetBaseTime(base.UnixMilli())
		hdrLog.OutputComment(fmt.Sprintf("[values in nanoseconds; Interval_Max in milliseconds; the first %.3f s were an unrecorded warm-up]", p.Warmup.Seconds()))
		hdrLog.OutputLegend()
	}
	cpu0 := cpuSeconds()
	var wg sync.WaitGroup
	for _, l := range loops {
		l.base = base
		wg.Add(1)
		go func() { defer wg.Done(); l.run() }()
	}
	for i, t := range ts {
		if loops != nil {
			break
		}
		if intervalNs == 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.closedLoop(p, i, base, &stop)
				if t.recvErr != nil || t.sendErr != nil {
					end()
				}
			}()
			continue
		}
		slots := make(chan struct{}, p.InFlight)
		pending := make(chan inflight, p.InFlight)
		wg.Add(2)
		go func() { defer wg.Done(); t.send(p, i, base, intervalNs, &stop, slots, pending) }()
		go func() {
			defer wg.Done()
			t.receive(base, &stop, slots, pending)
			if t.recvErr != nil {
				end()
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()

	interval := hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
	total := hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
	var totalOps int64
	var hdrErr error
	last := warmEnd
	collect := func(now time.Time) {
		interval.Reset()
		for _, t := range ts {
			t.mu.Lock()
			interval.Merge(t.hist)
			t.hist.Reset()
			t.mu.Unlock()
		}
		iterOps := interval.TotalCount()
		totalOps += iterOps
		printOnlineRow(human, latencySummary(interval), totalOps, iterOps, now.Sub(last).Seconds())
		if hdrLog != nil && iterOps > 0 {
			interval.SetStartTimeMs(last.UnixMilli())
			interval.SetEndTimeMs(now.UnixMilli())
			if err := hdrLog.OutputIntervalHistogram(interval); err != nil && hdrErr == nil {
				hdrErr = fmt.Errorf("bench: write --hdr-out %s: %w", p.HdrOut, err)
			}
		}
		total.Merge(interval)
		last = now
	}
	fmt.Fprintln(human, onlineHeader)
	ticker := time.NewTicker(p.ReportInterval)
	defer ticker.Stop()
	drainCut := (<-chan time.Time)(nil)
	// The steal is read over the recorded window, as the latencies are.
	var stolen cpustat.Watch
	var frozen *freeze.Probe // and the host's freezes
	defer func() {
		if frozen != nil {
			frozen.Stop()
		}
	}()
	warmed := time.After(time.Until(warmEnd))
loop:
	for {
		select {
		case <-warmed:
			stolen, warmed = cpustat.StartWatch("/"), nil
			if !p.NoFreezeProbe {
				if probe, err := freeze.Start(time.Millisecond); err == nil {
					frozen = probe
				}
			}
		case now := <-ticker.C:
			if now.After(warmEnd) {
				collect(now)
			}
		case <-stopped:
			stopped = nil
			// Replies still owed are awaited, then the connections are cut
			// so a server that went silent cannot hang the run.
			drainCut = time.After(drainTimeout)
		case <-drainCut:
			cutAll(conns)
			cut.Store(true)
			for _, l := range loops {
				l.wake()
			}
			drainCut = nil
		case <-finished:
			break loop
		}
	}
	now := time.Now()
	collect(now)
	res.Seconds = max(now.Sub(warmEnd).Seconds(), 0)
	res.ClientCPUSeconds = cpuSeconds() - cpu0
	if warmed == nil {
		win := stolen.End()
		res.HostStealShare, res.HostBusyShare = win.Steal, win.Busy
	}
	if frozen != nil {
		st := frozen.Stop()
		frozen = nil
		res.HostFreezes = &st
	}
	var spunNs int64
	for _, l := range loops {
		spunNs += l.spunNs
	}
	// A paced loop's spin is CPU spent waiting on purpose, not a client
	// that cannot keep up.
	res.ClientSaturated = saturated(res.ClientCPUSeconds-float64(spunNs)/1e9, now.Sub(base).Seconds(), threads)
	res.LatencyMicros = latencySummary(total)
	if enc, err := total.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		res.Histogram = string(enc)
	} else if hdrErr == nil {
		hdrErr = fmt.Errorf("bench: encode the latency histogram: %w", err)
	}
	var errs []error
	for _, t := range ts {
		c, w := t.rr.counts, t.warm
		res.Hits += c.hits - w.hits
		res.Misses += c.misses - w.misses
		res.Errors += c.errors - w.errors
		res.Mismatches += c.mismatches - w.mismatches
		res.Warmup.Hits += w.hits
		res.Warmup.Misses += w.misses
		res.Warmup.Errors += w.errors
		res.Warmup.Mismatches += w.mismatches
		if res.FirstError == "" {
			res.FirstError = t.rr.firstError
		}
		if t.sendErr != nil {
			errs = append(errs, t.sendErr)
		}
		if t.recvErr != nil {
			errs = append(errs, t.recvErr)
		}
	}
	res.Ops = res.Hits + res.Misses + res.Errors
	res.Warmup.Ops = res.Warmup.Hits + res.Warmup.Misses + res.Warmup.Errors
	res.OpsPerSec = float64(res.Ops) / max(res.Seconds, 1e-9)
	if intervalNs > 0 {
		// Ops stop being sent at the stop: those due while the owed
		// replies drain are outside the schedule.
		endNs := int64(now.Sub(base))
		if at := stoppedAt.Load(); at != 0 {
			endNs = min(endNs, max(at-base.UnixNano(), 0))
		}
		res.Pacing = pacing(ts, intervalNs, int64(warmEnd.Sub(base)), endNs, res.LatencyMicros.P50)
		res.Pacing.Loops, res.Pacing.SpinSeconds = len(loops), float64(spunNs)/1e9
		res.Pacing.OwnCPUs = len(loops) > 0 && p.OwnCPUs
	}
	printOnlineSummary(human, res)
	// Ending on ctx is how --runtime -1 is meant to stop; with a finite
	// runtime it cuts the run short.
	switch {
	case len(errs) > 0:
		res.Incomplete = true
		return res, fmt.Errorf("bench: online run against %s stopped after %d ops: %w", p.addr, res.Ops, errors.Join(errs...))
	case ctx.Err() != nil && p.Runtime > 0:
		res.Incomplete = true
		return res, fmt.Errorf("bench: online run interrupted after %d ops: %w", res.Ops, ctx.Err())
	}
	return res, hdrErr
}

// pacing sums the fixed-rate senders' lateness and counts the ops due in
// the recorded window [warmNs, endNs) (endNs: the stop) that were never
// sent, and of those the ones a full window held back (fullAtStop).
func pacing(ts []*onlineThread, intervalNs, warmNs, endNs int64, p50Micros float64) *Pacing {
	late := hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
	own := hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
	var due, unsent, held int64
	for _, t := range ts {
		first := (warmNs - t.phaseNs + intervalNs - 1) / intervalNs // the first op due in the window
		last := (endNs - t.phaseNs + intervalNs - 1) / intervalNs   // one past the last
		late.Merge(t.late)
		own.Merge(t.own)
		due += max(last-first, 0)
		n := max(last-max(t.nextK, first), 0)
		unsent += n
		if t.fullAtStop {
			held += n
		}
	}
	pc := &Pacing{LatenessMicros: latencySummary(late), OwnLatenessMicros: latencySummary(own), Due: due, Unsent: unsent, HeldUnsent: held}
	pc.ClientBound = pc.OwnLatenessMicros.P99 > clientBoundShare*p50Micros || float64(unsent-held) > clientBoundShare*float64(due)
	return pc
}
