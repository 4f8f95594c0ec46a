package pass

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/bench"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// What a mixed cell (--workload) and a memory-tier sweep's cell record
// besides the GET figures: each operation's ops/sec, the server's
// written bytes, and the store's own counters of its log and of the GETs
// it served from the device, read around the pass on every node.

// storeReading is a target's counters at one moment, summed over its
// nodes: /proc/<pid>/io write_bytes (-1 unknown) and, where the server
// reports them (tierbench's own), INFO store's log addresses and INFO
// stats' device_gets.
type storeReading struct {
	writeBytes          int64
	counted             bool
	tail, flushed, gets int64
	cacheHits           int64 // INFO store ReadCache.Hits; 0 without a read cache
}

// readStore reads every node's write counter and store counters. A
// counter a node does not give leaves the reading without it; it never
// fails the pass, which has its own evidence.
func readStore(ctx context.Context, tgt target.Server) storeReading {
	s := storeReading{counted: true}
	for _, n := range tgt.Nodes {
		wb := int64(-1)
		if n.Probe.Counts() {
			if v, err := n.Probe.WriteBytes(ctx); err == nil {
				wb = v
			}
		}
		if wb < 0 || s.writeBytes < 0 {
			s.writeBytes = -1
		} else {
			s.writeBytes += wb
		}
		tail, flushed, gets, hits, ok := storeCounters(ctx, n.Probe)
		s.counted = s.counted && ok
		s.tail, s.flushed, s.gets, s.cacheHits = s.tail+tail, s.flushed+flushed, s.gets+gets, s.cacheHits+hits
	}
	return s
}

// storeCounters reads Log.TailAddress, Log.FlushedAddress (INFO store)
// and device_gets (INFO stats) of one node; ok is false when it reports
// any of them missing (a server that is not tierbench's own). hits is
// INFO store's ReadCache.Hits, 0 from a server without one.
func storeCounters(ctx context.Context, p rig.ServerProbe) (tail, flushed, gets, hits int64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	store, err := rig.ProbeInfo(ctx, p, "store")
	if err != nil {
		return 0, 0, 0, 0, false
	}
	stats, err := rig.ProbeInfo(ctx, p, "stats")
	if err != nil {
		return 0, 0, 0, 0, false
	}
	var vals [3]int64
	for i, f := range []string{store["Log.TailAddress"], store["Log.FlushedAddress"], stats["device_gets"]} {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return 0, 0, 0, 0, false
		}
		vals[i] = v
	}
	hits, _ = strconv.ParseInt(store["ReadCache.Hits"], 10, 64)
	return vals[0], vals[1], vals[2], max(hits, 0), true
}

// recordMix puts a pass's per-operation figures and the change of its
// store readings into rec.
func recordMix(rec *results.PassRecord, cell rig.BenchCell, before, after storeReading) {
	for _, o := range cell.Mix {
		rec.Mix = append(rec.Mix, results.OpRate{Op: o.Op, Ops: o.Ops, OpsPerSec: float64(o.Ops) / max(cell.Seconds, 1e-9)})
		if results.WritesOp(o.Op) {
			rec.Sets += o.Ops
		}
	}
	if before.writeBytes >= 0 && after.writeBytes >= 0 {
		rec.WriteBytes = after.writeBytes - before.writeBytes
	}
	if before.counted && after.counted {
		rec.StoreCounted = true
		rec.LogGrowth = after.tail - before.tail
		rec.LogWritten = after.flushed - before.flushed
		rec.DeviceGets = after.gets - before.gets
		rec.CacheHits = after.cacheHits - before.cacheHits
	}
}

// mixLine is a pass's progress line of its operations and writes; "" for
// a GET cell of a run that is not a sweep.
func mixLine(rec results.PassRecord) string {
	s := ""
	for i, o := range rec.Mix {
		sep := ", "
		if i == 0 {
			sep = "  "
		}
		s += fmt.Sprintf("%s%s %s/s", sep, o.Op, human.Ops(o.OpsPerSec))
	}
	if rec.Sets > 0 {
		s += fmt.Sprintf("; %.0f B written per SET, log +%s", rec.WriteBytesPerSet, human.Bytes(rec.LogGrowth))
	}
	if rec.StoreCounted && (rec.Row.Memory != "" || rec.Sets > 0) {
		s += fmt.Sprintf("; %.1f %% of GETs read the device (INFO stats device_gets)", 100*rec.DeviceGetShare)
	}
	if s == "" {
		return ""
	}
	return s + "\n"
}

// SetShare is the share of the measured cells' ops that write a record
// (SET and RMW); 0 for GETs alone.
func SetShare(c plan.Config) float64 {
	mix, err := c.OpMix()
	if mix == "" || err != nil {
		return 0
	}
	shares, err := bench.ParseOpMix(mix)
	if err != nil {
		return 0
	}
	pct := 0
	for _, s := range shares {
		if results.WritesOp(s.Op) {
			pct += s.Percent
		}
	}
	return float64(pct) / 100
}

// RecheckAfterMix repeats the exact load check after a row's cells when
// they wrote (a mix with SET or RMW): a SET rewrites a loaded key with a
// value of the loaded length, so DBSIZE must still be exactly --dbsize
// (on a cluster, each node's slots' share) and a fresh uniform sample of
// the keys must all answer values of that length. A failure refuses the
// row as a failed load would, after its passes are recorded.
func (r *Runner) RecheckAfterMix(ctx context.Context, row results.Row, tgt target.Server) error {
	cfg := r.env.Config()
	if SetShare(cfg) == 0 {
		return nil
	}
	keys, err := keyCount(ctx, tgt)
	if err != nil {
		return fmt.Errorf("pass: %s %s: DBSIZE after the mix: %w", row.Backend, row.Label, err)
	}
	rec := results.RecheckRecord{Kind: "recheck", Schema: results.SchemaVersion, Row: row, DBSize: cfg.DBSize, ServerKeys: keys}
	verdict := error(nil)
	if keys != cfg.DBSize && !(cfg.SkipLoad && keys > cfg.DBSize) {
		verdict = fmt.Errorf("%w: %s %s: the server holds %d keys after the mix, %d before (--dbsize); its SETs and RMWs rewrite loaded keys and must not change the count",
			ErrPartialLoad, row.Backend, row.Label, keys, cfg.DBSize)
	} else {
		if rec.Sample, err = sampleTarget(ctx, cfg, tgt, &results.LoadRecord{}); err != nil {
			return err
		}
		if err := judgeSample(rec.Sample, keys, cfg); err != nil {
			verdict = fmt.Errorf("pass: %s %s: after the mix: %w", row.Backend, row.Label, err)
		}
	}
	rec.Error, rec.Time = errString(verdict), time.Now().UTC()
	if err := results.AppendJSONL(r.env.Out(), results.FileRechecks, rec); err != nil {
		return errors.Join(verdict, err)
	}
	if verdict != nil {
		return verdict
	}
	sample := rec.Sample
	r.printf("%s %s: after the mix: DBSIZE %d, exactly --dbsize; %d sampled keys each answered a %d B value\n",
		human.Title(row.Backend), row.Label, keys, sample.Keys, cfg.ValueLength)
	return nil
}

// errString is err's text, "" for none.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
