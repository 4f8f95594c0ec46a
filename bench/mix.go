package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// mixOp is an operation of an offline mix (--op-mix). RMW is a GET and a
// SET of the same key sent back to back in one batch; the others are one
// command each, MGET carrying mixMGetKeys keys.
type mixOp uint8

const (
	mixGet mixOp = iota
	mixSet
	mixIncr
	mixDel
	mixMGet
	mixRMW
	numMixOps
)

var mixNames = [numMixOps]string{"GET", "SET", "INCR", "DEL", "MGET", "RMW"}

func (o mixOp) String() string { return mixNames[o] }

// wire is the command that carries o (RMW: its GET, then a SET).
func (o mixOp) wire() opcode {
	return [numMixOps]opcode{opGet, opSet, opIncr, opDel, opMGet, opGet}[o]
}

// mixMGetKeys is how many keys an MGET of a mix carries; each counts as an
// op, as in an MGET cell.
const mixMGetKeys = 10

// MixShare is one operation of an offline mix and its percentage of the
// ops.
type MixShare struct {
	Op      string
	Percent int
}

// Workloads are the named mixes of --workload: the operation shares of
// YCSB's core workloads A (update heavy), B (read mostly), C (read only)
// and F (read-modify-write). YCSB draws their keys zipfian, which
// --key-dist zipf:0.99 adds; the presets set the mix alone.
var Workloads = map[string]string{
	"ycsb-a": "GET:50,SET:50",
	"ycsb-b": "GET:95,SET:5",
	"ycsb-c": "GET:100",
	"ycsb-f": "GET:50,RMW:50",
}

// ParseOpMix reads a mix spelled OP:PERCENT,… (any of GET, SET, INCR,
// DEL, MGET, RMW, each at most once, whole percentages above 0 adding up
// to 100), returning the shares in the order given, names in upper case.
func ParseOpMix(s string) ([]MixShare, error) {
	var out []MixShare
	seen := [numMixOps]bool{}
	sum := 0
	for _, part := range strings.Split(s, ",") {
		name, pct, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("op mix %q: %q is not OP:PERCENT", clipText(s), clipText(part))
		}
		op, found := mixOp(0), false
		for i, n := range mixNames {
			if equalFoldASCII(strings.TrimSpace(name), n) {
				op, found = mixOp(i), true
			}
		}
		if !found {
			return nil, fmt.Errorf("op mix %q: %q is not one of GET, SET, INCR, DEL, MGET, RMW", clipText(s), clipText(name))
		}
		if seen[op] {
			return nil, fmt.Errorf("op mix %q: %s is given twice", clipText(s), op)
		}
		seen[op] = true
		v, err := strconv.Atoi(strings.TrimSpace(pct))
		if err != nil || v < 1 || v > 100 {
			return nil, fmt.Errorf("op mix %q: %s's share %q is not a whole percentage 1..100", clipText(s), op, clipText(pct))
		}
		sum += v
		out = append(out, MixShare{Op: op.String(), Percent: v})
	}
	if sum != 100 {
		return nil, fmt.Errorf("op mix %q: the shares add up to %d, not 100", clipText(s), sum)
	}
	return out, nil
}

// MixString spells a mix as ParseOpMix reads it.
func MixString(mix []MixShare) string {
	parts := make([]string, len(mix))
	for i, m := range mix {
		parts[i] = m.Op + ":" + strconv.Itoa(m.Percent)
	}
	return strings.Join(parts, ",")
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// planMix validates Config.OpMix and fills the plan's draw table.
func (p *plan) planMix() error {
	cfg := p.Config
	shares, err := ParseOpMix(MixString(cfg.OpMix))
	if err != nil {
		return usagef("--op-mix: %v", err)
	}
	at := 0
	changes := ""
	for _, m := range shares {
		var op mixOp
		for i, n := range mixNames {
			if n == m.Op {
				op = mixOp(i)
			}
		}
		if op == mixIncr || op == mixDel {
			changes = op.String()
		}
		if op == mixIncr && cfg.ValueLength > 18 {
			return usagef("--op-mix with INCR needs values of at most 18 digits (a 64-bit integer); --valuelength is %d", cfg.ValueLength)
		}
		p.mix = append(p.mix, mixEntry{op: op, percent: m.Percent})
		for range m.Percent {
			p.mixTable[at] = op
			at++
		}
	}
	switch {
	case cfg.Online:
		return usagef("--op-mix is offline; --online mixes with --op-workload and --op-percent")
	case cfg.Cluster:
		return usagef("--op-mix drives one server; --cluster-bench runs single-command cells")
	case cfg.Pipeline == PipelineWindow:
		return usagef("--op-mix sends whole batches (an RMW is two commands); use --pipeline batch")
	case cfg.Verify && changes != "":
		return usagef("--verify checks GET values against the loaded ones, and the mix's %s changes them", changes)
	}
	return nil
}

// mixEntry is one operation of the plan's mix.
type mixEntry struct {
	op      mixOp
	percent int
}

// mixCmd is one command of a mix batch: its bytes start at req[at], its
// keys at keys[key], and it is (part of) an op of kind op.
type mixCmd struct {
	at   int
	key  int32
	wire opcode
	op   mixOp
}

// mixBatches is the command list of a mix thread's batches: batch i's
// commands are cmds[cmdOffsets[i]:cmdOffsets[i+1]].
type mixBatches struct {
	cmdOffsets []int
	cmds       []mixCmd
	layouts    [opPing + 1]reqLayout // by wire command; MGET with mixMGetKeys keys
}

// buildMixBatches draws one thread's batches of Batch ops each from the
// mix, and their keys, and encodes them.
func buildMixBatches(p *plan, threads, thread int) *threadBatches {
	b := p.Batch
	nb := max((prebuiltOps(p, threads)+b-1)/b, 1)
	stream := uint64(threads)<<32 | uint64(thread)
	tb := &threadBatches{offsets: []int{0}, rng: keyRNG(p.Seed, stream), mix: &mixBatches{cmdOffsets: []int{0}}}
	m := tb.mix
	for _, op := range []opcode{opGet, opSet, opIncr, opDel} {
		m.layouts[op] = newLayout(op, 1, p.keyLength, p.ValueLength)
	}
	m.layouts[opMGet] = newLayout(opMGet, mixMGetKeys, p.keyLength, p.ValueLength)
	opRNG := rand.New(rand.NewPCG(p.Seed, mix64(stream^0x6d69786f7073)))
	emit := func(wire opcode, op mixOp, n int) {
		first := len(tb.keys)
		for range n {
			tb.keys = append(tb.keys, p.sampler.Next(tb.rng))
		}
		m.cmds = append(m.cmds, mixCmd{at: len(tb.req), key: int32(first), wire: wire, op: op})
		tb.req = appendCommand(tb.req, wire, tb.keys[first:], p.keyLength, p.ValueLength)
	}
	for i := range nb {
		for range b {
			switch op := p.mixTable[opRNG.IntN(len(p.mixTable))]; op {
			case mixRMW:
				emit(opGet, op, 1)
				k := tb.keys[len(tb.keys)-1]
				m.cmds = append(m.cmds, mixCmd{at: len(tb.req), key: int32(len(tb.keys)), wire: opSet, op: op})
				tb.keys = append(tb.keys, k)
				tb.req = appendCommand(tb.req, opSet, tb.keys[len(tb.keys)-1:], p.keyLength, p.ValueLength)
			case mixMGet:
				emit(opMGet, op, mixMGetKeys)
			default:
				emit(op.wire(), op, 1)
			}
		}
		tb.offsets = append(tb.offsets, len(tb.req))
		m.cmdOffsets = append(m.cmdOffsets, len(m.cmds))
		if p.PrebuiltOpsPerThread == 0 && len(tb.req) >= maxPrebuiltBytes && i+1 < nb {
			break
		}
	}
	return tb
}

// redrawMixBatch gives batch i's commands fresh keys in place; an RMW's
// SET takes the key its GET drew.
func (tb *threadBatches) redrawMixBatch(p *plan, i int) {
	m := tb.mix
	for _, c := range m.cmds[m.cmdOffsets[i]:m.cmdOffsets[i+1]] {
		l := &m.layouts[c.wire]
		keys := tb.keys[c.key : int(c.key)+len(l.keyAt)]
		if c.op == mixRMW && c.wire == opSet {
			keys[0] = tb.keys[c.key-1]
		} else {
			for j := range keys {
				keys[j] = p.sampler.Next(tb.rng)
			}
		}
		l.fill(tb.req[c.at:c.at+l.size], keys, p.keyLength, p.ValueLength)
	}
}

// threadMix is one thread's figures per mix operation. Hits, misses and
// errors count replies (an RMW has two, an MGET one per key); ops counts
// operations (an RMW is one, an MGET one per key).
type threadMix struct {
	counts [numMixOps]replyCounts
	ops    [numMixOps]int64
	// pend holds the latencies of the batch in flight, recorded once
	// the batch counts (--start-at drops one answered past the window).
	pend []pendingLatency
}

type pendingLatency struct {
	op mixOp
	ns int64
}

// mixMark is a thread's mix figures before its batch in flight.
type mixMark struct {
	counts [numMixOps]replyCounts
	ops    [numMixOps]int64
}

func newMixHistograms() *[numMixOps]*hdrhistogram.Histogram {
	var h [numMixOps]*hdrhistogram.Histogram
	for i := range h {
		h[i] = hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
	}
	return &h
}

// mixReplies consumes the replies of a mix batch that arrived, tallying
// each by its operation; an op's latency runs from its batch's first
// write to the wake-up that read its (last) reply.
func (l *clientLoop) mixReplies(c *loopConn) {
	t := c.t
	tb, tm := t.batches, t.mix
	m := tb.mix
	cmds := m.cmds[m.cmdOffsets[c.batch]:m.cmdOffsets[c.batch+1]]
	now := int64(-1)
	for c.left > 0 {
		cmd := &cmds[len(cmds)-c.left]
		n := len(m.layouts[cmd.wire].keyAt)
		t.rr.op = cmd.wire
		before := t.rr.counts
		ok, err := t.rr.tryReply(tb.keys[cmd.key : int(cmd.key)+n])
		if err != nil {
			l.fail(c, fmt.Errorf("read %s reply: %w", cmd.op, err))
			return
		}
		if !ok {
			return
		}
		after, tally := t.rr.counts, &tm.counts[cmd.op]
		tally.hits += after.hits - before.hits
		tally.misses += after.misses - before.misses
		tally.errors += after.errors - before.errors
		tally.mismatches += after.mismatches - before.mismatches
		if cmd.op != mixRMW || cmd.wire == opSet {
			tm.ops[cmd.op] += int64(n)
			if now < 0 {
				now = int64(time.Since(l.t0))
			}
			tm.pend = append(tm.pend, pendingLatency{op: cmd.op, ns: now - c.sentNs})
		}
		c.left--
	}
	l.batchDone(c)
}

// mixResults fills a mix cell's per-operation figures and totals from its
// threads and the loops' latency histograms.
func mixResults(p *plan, res *CellResult, ts []*offlineThread, loops []*clientLoop) {
	res.Op = MixString(p.OpMix)
	res.Ops = 0
	for _, e := range p.mix {
		r := OpResult{Op: e.op.String(), Percent: e.percent}
		for _, t := range ts {
			c := t.mix.counts[e.op]
			r.Ops += t.mix.ops[e.op]
			r.Hits += c.hits
			r.Misses += c.misses
			r.Errors += c.errors
			r.Mismatches += c.mismatches
		}
		h := hdrhistogram.New(histLowestNs, histHighestNs, histDigits)
		for _, l := range loops {
			h.Merge(l.mixHists[e.op])
		}
		r.LatencyMicros = latencySummary(h)
		r.OpsPerSec = float64(r.Ops) / max(res.Seconds, 1e-9)
		res.Ops += r.Ops
		res.Mix = append(res.Mix, r)
	}
}

func printMix(w io.Writer, c *CellResult) {
	for _, r := range c.Mix {
		fmt.Fprintf(w, "[%s]: %d%% of ops, %d ops, %.0f ops/sec, hits %d misses %d errors %d, latency us p50 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
			r.Op, r.Percent, r.Ops, r.OpsPerSec, r.Hits, r.Misses, r.Errors, r.LatencyMicros.P50, r.LatencyMicros.P99, r.LatencyMicros.P999, r.LatencyMicros.Max)
	}
}
