package kvbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/settle"
	"github.com/tierbench/tierbench/server/store"
)

// SettleResult is the wait between the load and the runs (Config.Settle)
// for the disk to read at its ceiling again: the load has just written
// the whole dataset, and a disk still writing it back reads slower for
// seconds to minutes (the ladder's KV rounds at the reference scale, each
// right after its own load, spread too far apart to say anything of the
// store).
type SettleResult struct {
	// ProbeOpsPerSec are the probes in order: read-only rounds of the
	// store, ProbeSeconds each, at Threads threads and the runs' --itp.
	ProbeOpsPerSec []float64 `json:"probe_ops_per_sec"`
	ProbeSeconds   int       `json:"probe_seconds"`
	Threads        int       `json:"threads"`
	// TargetOpsPerSec is what the disk is held against (the fio ceiling
	// the caller knows); 0: none, the wait ends on a plateau.
	TargetOpsPerSec float64 `json:"target_ops_per_sec,omitempty"`
	// Seconds is the wait from the first probe to the end of the last.
	Seconds float64 `json:"seconds"`
	// Settled: the last probe read settle.Share of the target (or, with
	// none, the probes stopped getting faster); else Why says where the
	// wait ended.
	Settled bool   `json:"settled"`
	Why     string `json:"why,omitempty"`
}

// awaitDisk probes the loaded store with read-only rounds until
// settle.Verdict ends the wait, printing each probe. The probes read
// only, whatever the runs' mix, so the runs find the store as loaded.
func awaitDisk(ctx context.Context, st *store.Store, cfg Config, out io.Writer) (*SettleResult, error) {
	probe := cfg
	probe.Runtime = settle.ProbeSeconds * time.Second
	probe.RUMD = [4]int{100, 0, 0, 0}
	threads := slices.Max(cfg.Threads)
	s := &SettleResult{ProbeSeconds: settle.ProbeSeconds, Threads: threads, TargetOpsPerSec: cfg.SettleTargetOpsPerSec}
	n := 0 // probes begun
	o, err := settle.Await(s.TargetOpsPerSec, func() (float64, error) {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		n++
		r, err := runMix(ctx, st, probe, threads)
		if err != nil {
			return 0, fmt.Errorf("kvbench: settle probe %d: %w", n, err)
		}
		return r.OpsPerSec, nil
	}, func(ops float64) {
		fmt.Fprintf(out, "[Settle] probe %d: %s ops/sec%s\n", n, human.Ops(ops), targetText(ops, s.TargetOpsPerSec))
	})
	if err != nil {
		return nil, err
	}
	s.ProbeOpsPerSec, s.Seconds, s.Settled, s.Why = o.Probes, o.Seconds, o.Settled, o.Why
	switch {
	case s.Settled && s.TargetOpsPerSec > 0:
		fmt.Fprintf(out, "[Settle] back to %.0f %% of the target after %.0f s\n", 100*settle.Share, s.Seconds)
	case s.Settled:
		fmt.Fprintf(out, "[Settle] no faster after %.0f s (%s)\n", s.Seconds, s.Why)
	default:
		fmt.Fprintf(out, "[Settle] not back after %.0f s (%s); measuring anyway\n", s.Seconds, s.Why)
	}
	return s, nil
}

// targetText is a probe's share of the target, for its human line; ""
// without a target.
func targetText(ops, target float64) string {
	if target <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.0f %% of the %s target)", 100*ops/target, human.Ops(target))
}
