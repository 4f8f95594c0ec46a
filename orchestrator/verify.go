package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// The load checks. A missing key is a GET answered from memory, many times
// cheaper than a device read, and DBSIZE costs O(1) on tierbench and Redis
// alike, so no shortfall is tolerated.
var (
	// ErrPartialLoad: the loader or the server counts fewer keys than
	// --dbsize (or, for a server the run loaded, more).
	ErrPartialLoad = fmt.Errorf("%w: partial load", fault.ErrRefused)
	// ErrSampleMiss: a sampled GET missed or returned a value of the
	// wrong length although the key count was right.
	ErrSampleMiss = fmt.Errorf("%w: sampled GET check failed", fault.ErrRefused)
	// ErrNotOnDevice: a tiered server holds its log in memory.
	ErrNotOnDevice = fmt.Errorf("%w: the log is not on the device", fault.ErrRefused)
)

// errShortLoad marks a loader that exited non-zero after printing its
// counts: verification, not the exit status, decides about the row.
var errShortLoad = errors.New("orchestrator: the loader reported a short load")

// loadAndVerify loads the dataset (unless --skip-load) and checks it on
// every node of the target with two witnesses — the loader's
// acknowledgements and the node's DBSIZE, which must be exactly the keys
// of 0..dbsize-1 its slots hold (all of them for a server that is not a
// cluster node) — then the totals, and, for a tiered server, that the log
// really sits on the device; then GETs a random sample of the keys, each
// from the node serving it. The evidence is appended to cells.jsonl
// whatever the verdict; a cluster's record keeps each node's figures.
func (r *runner) loadAndVerify(ctx context.Context, row results.Row, tgt target.Server) error {
	rec := results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: row, DBSize: r.cfg.DBSize, Acknowledged: -1, Time: time.Now().UTC(), Owner: tgt.First().Proof}
	if tgt.Handle != nil {
		rec.Server = tgt.Handle.Placement()
		rec.ServerMode = tgt.Handle.Mode()
		rec.UringProbe = tgt.UringProbe
		rec.ServerCommand = tgt.Command
	}
	if !r.cfg.SkipLoad {
		if err := r.load(ctx, row, tgt, &rec); err != nil {
			return err
		}
	}
	if tgt.Command != "" {
		// What the server says of itself once loaded (its entry's fields).
		rec.ServerEvidence = r.serverEvidence(ctx, row, tgt.First().Probe)
	}
	want := wantKeys(tgt, r.cfg.DBSize, r.cfg.KeyLength)
	loaded := rec.Nodes // the loader's per-node acknowledgements, cluster only
	rec.Nodes = nil
	var verdicts []error
	for i, n := range tgt.Nodes {
		w, err := n.Probe.Witness(ctx)
		if err != nil {
			return fmt.Errorf("orchestrator: server %s: %w", n.Addr, err)
		}
		one := results.LoadRecord{Row: row, DBSize: want[i], Acknowledged: rec.Acknowledged, ServerKeys: w.Keys}
		if tgt.Cluster {
			one.Acknowledged = -1
			if i < len(loaded) {
				one.Acknowledged = loaded[i].Acknowledged
			}
		}
		if a, aerr := rig.ParseLogAddresses(w.Store); aerr == nil {
			one.Tiered, one.BeginAddress, one.HeadAddress, one.TailAddress, one.DeviceShare = true, a.Begin, a.Head, a.Tail, a.DeviceShare()
		} else if !errors.Is(aerr, rig.ErrNotTiered) {
			return fmt.Errorf("orchestrator: server %s: %w", n.Addr, aerr)
		}
		if i == 0 {
			rec.ServerInfo = &w.Info
			rec.Tiered, rec.DeviceShare = one.Tiered, one.DeviceShare
		}
		rec.Tiered = rec.Tiered && one.Tiered
		rec.DeviceShare = min(rec.DeviceShare, one.DeviceShare)
		rec.BeginAddress += one.BeginAddress
		rec.HeadAddress += one.HeadAddress
		rec.TailAddress += one.TailAddress
		rec.ServerKeys += one.ServerKeys
		n.Keys = one.ServerKeys
		if v := verifyLoad(one, r.cfg); v != nil {
			if tgt.Cluster {
				v = fmt.Errorf("cluster node %s (%d slots, %d of the keys): %w", n.Addr, n.Slots, want[i], v)
			}
			verdicts = append(verdicts, v)
		}
		if tgt.Cluster {
			nl := results.NodeLoad{ID: n.ID, Addr: n.Addr, Slots: n.Slots, Acknowledged: one.Acknowledged, DataDir: n.Dir, Owner: n.Proof,
				ServerKeys: one.ServerKeys, Tiered: one.Tiered, HeadAddress: one.HeadAddress, TailAddress: one.TailAddress, DeviceShare: one.DeviceShare}
			if n.Handle != nil {
				nl.Server = n.Handle.Placement()
			}
			rec.Nodes = append(rec.Nodes, nl)
		}
	}
	if tgt.Cluster {
		// The totals, as one server's: the sum of DBSIZE must be dbsize.
		total := rec
		total.Tiered = false
		if v := verifyLoad(total, r.cfg); v != nil {
			verdicts = append([]error{v}, verdicts...)
		}
	}
	verdict := errors.Join(verdicts...)
	if verdict != nil && r.cfg.Force && errors.Is(verdict, ErrNotOnDevice) && !errors.Is(verdict, ErrPartialLoad) {
		r.printf("%v; measuring anyway (--force): the device-hit check judges each cell\n", verdict)
		verdict = nil
	}
	if verdict == nil {
		across := ""
		if tgt.Cluster {
			across = fmt.Sprintf(" across %d nodes", len(tgt.Nodes))
		}
		r.printf("%s %s: sampled GET check of %d keys%s\n", titleCase(row.Backend), row.Label, min(r.cfg.DBSize, rig.MinSampleKeys), across)
		sample, err := r.sampleTarget(ctx, tgt, &rec)
		if err != nil {
			return errors.Join(err, r.cells.Append(rec))
		}
		rec.Sample = &sample
		verdict = judgeSample(sample, rec.ServerKeys, r.cfg)
		if verdict == nil && !r.cfg.SkipLoad && rec.Tiered {
			rec.Settle = r.settleDisk(ctx, row, tgt)
		}
	}
	if err := r.cells.Append(rec); err != nil {
		return errors.Join(verdict, err)
	}
	for i, nl := range rec.Nodes {
		r.printf("  node %s: %d slots, %d keys (want %d), log on device %.2f %%\n", nl.Addr, nl.Slots, nl.ServerKeys, want[i], 100*nl.DeviceShare)
	}
	if verdict != nil && tgt.Cluster {
		return fmt.Errorf("orchestrator: %s %s: %w", row.Backend, row.Label, verdict)
	}
	return verdict
}

// load runs the loader while polling DBSIZE for progress and records the
// loader's counts; a loader that reports a short load is not an error
// here: verifyLoad refuses it with the counts.
func (r *runner) load(ctx context.Context, row results.Row, tgt target.Server, rec *results.LoadRecord) error {
	r.printf("%s %s: loading %d keys of %d+%d B%s\n", titleCase(row.Backend), row.Label, r.cfg.DBSize, r.cfg.KeyLength, r.cfg.ValueLength, r.clients.Note(0))
	lctx, cancelLoad := context.WithCancelCause(ctx)
	defer cancelLoad(nil)
	stopProgress := r.loadProgress(lctx, tgt, cancelLoad)
	start := time.Now()
	out, err := r.runBench(lctx, row, tgt, "load", []string{"--op", "GET", "--load-threads", strconv.Itoa(r.cfg.LoadThreads),
		"-b", strconv.Itoa(r.cfg.LoadBatch), "--runtime", "0"}, nil)
	stopProgress()
	if err != nil && !(errors.Is(err, errShortLoad) && ctx.Err() == nil) {
		if cause := context.Cause(lctx); cause != nil && ctx.Err() == nil {
			err = cause
		}
		return fmt.Errorf("orchestrator: load of %s %s: %w", row.Backend, row.Label, err)
	}
	if out.Load == nil {
		return fmt.Errorf("orchestrator: load of %s %s: the loader reported no load section", row.Backend, row.Label)
	}
	rec.Acknowledged, rec.LoadSeconds = out.Load.Acknowledged, out.Load.Seconds
	if out.Load.Cluster != nil {
		for _, n := range out.Load.Cluster.Nodes {
			rec.Nodes = append(rec.Nodes, results.NodeLoad{ID: n.ID, Addr: n.Addr, Acknowledged: n.Hits})
		}
	}
	if rec.LoadSeconds == 0 {
		rec.LoadSeconds = time.Since(start).Seconds()
	}
	r.progress.loadedKeys += rec.Acknowledged
	r.progress.loadTime += time.Since(start)
	return nil
}

// verifyLoad applies the load checks to one load record: for a server
// the run loaded, the loader's acknowledgements and DBSIZE must both equal
// dbsize; for --skip-load, DBSIZE must be at least dbsize.
func verifyLoad(rec results.LoadRecord, cfg plan.Config) error {
	if rec.Acknowledged >= 0 && rec.Acknowledged != rec.DBSize {
		return fmt.Errorf("%w: the loader saw %d of %d keys acknowledged (%s, %d missing; want every key)",
			ErrPartialLoad, rec.Acknowledged, rec.DBSize, formatPercentBeside(share(rec.Acknowledged, rec.DBSize), 1), rec.DBSize-rec.Acknowledged)
	}
	switch {
	case rec.Acknowledged >= 0 && rec.ServerKeys != rec.DBSize:
		return fmt.Errorf("%w: the server holds %d keys after a load of %d (%s of --dbsize; want exactly --dbsize: keys were lost, or others were there before)",
			ErrPartialLoad, rec.ServerKeys, rec.DBSize, formatPercentBeside(share(rec.ServerKeys, rec.DBSize), 1))
	case rec.Acknowledged < 0 && rec.ServerKeys < rec.DBSize:
		return fmt.Errorf("%w: the server holds %d keys, %d fewer than --dbsize %d (%s); refusing to measure a partial load: drop --skip-load to load it, or give the --dbsize it holds",
			ErrPartialLoad, rec.ServerKeys, rec.DBSize-rec.ServerKeys, rec.DBSize, formatPercentBeside(share(rec.ServerKeys, rec.DBSize), 1))
	}
	// A memory-tier sweep's row holds as much in memory as its size
	// allows, by design: its cells show the device share they measure.
	if rec.Tiered && rec.DeviceShare < minDeviceShare && cfg.Spec().Tiered && rec.Row.Memory == "" {
		mem, _ := size.Parse(cfg.Memory)
		page, _ := size.Parse(cfg.Page)
		inMemory := rec.TailAddress - rec.HeadAddress
		// A server the run did not start has no --memory (validate
		// refuses it): only the 99 % rule judges it.
		if mem <= 0 || inMemory > uint64(mem+page) || rec.DeviceShare < 1-1.0/results.MinDeviceToMemory {
			memory := ""
			if mem > 0 {
				memory = " with --memory " + cfg.Memory
			}
			return fmt.Errorf("%w: only %s of the log is on the device (begin %d, head %d, tail %d; %d bytes above HeadAddress%s): reads would be served from memory",
				ErrNotOnDevice, formatPercentBeside(rec.DeviceShare, minDeviceShare), rec.BeginAddress, rec.HeadAddress, rec.TailAddress, inMemory, memory)
		}
	}
	return nil
}

// judgeSample refuses a sample with a wrong-length value, an error
// reply, or a miss rate above --max-miss-ratio (by default, one miss).
func judgeSample(s results.SampleCheck, serverKeys int64, cfg plan.Config) error {
	missShare := share(s.Missed, s.Keys)
	if s.WrongLength == 0 && s.Errors == 0 && missShare <= cfg.MaxMissRatio {
		return nil
	}
	return fmt.Errorf("%w: %d of %d sampled keys missed (%s), %d had a value of the wrong length (want %d B) and %d got an error reply, although DBSIZE says %d; first: %s",
		ErrSampleMiss, s.Missed, s.Keys, formatPercentBeside(missShare, cfg.MaxMissRatio), s.WrongLength, cfg.ValueLength, s.Errors, serverKeys, s.FirstBad)
}

// loadStallTimeout fails a load whose key count stops growing.
const loadStallTimeout = 90 * time.Second

// loadProgress prints the server's key count every two seconds until
// the returned function is called; when the count stops growing for
// loadStallTimeout it cancels the load through stall.
func (r *runner) loadProgress(ctx context.Context, tgt target.Server, stall context.CancelCauseFunc) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		start := time.Now()
		var last int64 = -1
		lastGrew := time.Now()
		for {
			if time.Since(lastGrew) > loadStallTimeout {
				stall(fmt.Errorf("orchestrator: the server's key count stayed at %d for %v: the load stalled", last, loadStallTimeout))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n, err := keyCount(ctx, tgt)
			if err == nil && n != last {
				last, lastGrew = n, time.Now()
			}
			if err == nil {
				rate := float64(n) / time.Since(start).Seconds()
				left := ""
				if rate > 0 && n < r.cfg.DBSize {
					left = fmt.Sprintf(", ~%.0fs left", float64(r.cfg.DBSize-n)/rate)
				}
				r.printf("  load: %d / %d keys (%.1f %%)%s\n", n, r.cfg.DBSize, 100*float64(n)/float64(r.cfg.DBSize), left)
			}
		}
	}()
	return func() { cancel(); <-done }
}
