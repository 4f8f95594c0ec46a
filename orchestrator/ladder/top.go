package ladder

import (
	"context"
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// The top of the LocalMemory ladder is the untiered in-memory server
// (scenario 1's: `tierbench server --index` alone) on the same dataset and
// shape, measured by the same client at the thread count and -b of the
// best localmemory RESP cell. It is the ceiling the tiered server on the
// in-RAM device is held against, so its share reads the other way: the
// tiered server's ops/s ÷ the untiered one's. A drop there is what the
// device tier itself costs.
//
// Both sides of that share are measured in the same minutes: the tiered
// server of the best cell's row is started again beside the untiered one
// and their passes alternate, the order swapped each round. Against the
// best cell of the matrix, taken minutes before on a host whose speed
// drifts between minutes, the share moved widely, above and below 1, over
// runs of one code (docs/notes/2026-12-07-comment-figures.md has the
// figures).

// LayerInMemory is the untiered server's RESP layer, the LocalMemory
// ladder's top.
const LayerInMemory = "RESP in-memory"

// fileInMemoryLayer is the in-memory layer's raw JSON in the bundle.
const fileInMemoryLayer = "ladder/localmemory-inmemory.json"

// TopServerRaw is one server of the ladder's top: its flags, the load's
// counts and every pass as cells.jsonl would hold it.
type TopServerRaw struct {
	ServerArgs []string             `json:"server_args"`
	Load       results.LoadRecord   `json:"load"`
	Passes     []results.PassRecord `json:"passes"`
}

// InMemoryRaw is the in-memory layer's raw JSON: the untiered server's,
// and the tiered server's whose passes alternated with it.
type InMemoryRaw struct {
	TopServerRaw
	Tiered TopServerRaw `json:"tiered"`
}

// bestRESPCell is the highest median RESP cell of backend the table shows.
func bestRESPCell(res results.Results, backend string) (results.Cell, bool) {
	var best results.Cell
	for _, c := range res.Cells {
		if c.Row.Backend != backend && backend != "external" || c.Excluded != "" || c.Passes == 0 {
			continue
		}
		if c.Median > best.Median {
			best = c
		}
	}
	return best, best.Median > 0
}

// inMemoryLayer starts the untiered server and the tiered server of
// best's row again, each on the run's dataset, and measures --passes
// passes of each (Rounds at least) at best's thread count and -b,
// alternated; the layer is the untiered server's median, its share the
// tiered server's median ÷ that.
func (r *run) inMemoryLayer(ctx context.Context, best results.Cell, ok bool) results.LadderLayer {
	layer := results.LadderLayer{Layer: LayerInMemory, ShareIs: "RESP ÷ " + LayerInMemory + ", the tiered server measured again in passes alternated with it"}
	if !ok {
		layer.Error = "no localmemory RESP cell to match"
		return layer
	}
	tiered := best.Row
	tiered.Label, tiered.Ladder = "ladder top, "+best.Row.Label, true
	untiered := results.Row{Backend: results.ScenarioMemory, Pin: best.Row.Pin, Label: tiered.Label, Batch: r.cfg.BatchOf(best.Row), Ladder: true}
	raw, err := r.measureTop(ctx, tiered, untiered, best.Threads)
	if werr := results.WriteJSON(r.out, fileInMemoryLayer, raw); werr == nil {
		layer.Raw = fileInMemoryLayer
	}
	if err != nil {
		layer.Error = err.Error()
		return layer
	}
	for _, side := range []struct {
		what string
		raw  TopServerRaw
	}{{"untiered", raw.TopServerRaw}, {"tiered", raw.Tiered}} {
		for _, p := range side.raw.Passes {
			if why := passExclusion(p); why != "" {
				layer.Error = fmt.Sprintf("the %s server's pass %d kept out: %s", side.what, p.Pass, why)
				return layer
			}
		}
	}
	var ops, cpu, tieredOps []float64
	for _, p := range raw.Passes {
		ops, cpu = append(ops, p.OpsPerSec), append(cpu, p.CPUMicrosPerOp)
	}
	for _, p := range raw.Tiered.Passes {
		tieredOps = append(tieredOps, p.OpsPerSec)
	}
	layer.OpsPerSec, _, _ = results.Median(ops)
	layer.CPUMicrosPerOp, _, _ = results.Median(cpu)
	layer.PairOpsPerSec, _, _ = results.Median(tieredOps)
	layer.Detail = fmt.Sprintf("the untiered server (tierbench server --index %s), the same %d keys, t=%d -b %d as the best localmemory cell (CPU of server + client), its passes alternated with the tiered server's, started again at that cell's shape: %s ops/s (median of %d), the share's numerator",
		r.cfg.Index, r.cfg.DBSize, best.Threads, untiered.Batch, human.Ops(layer.PairOpsPerSec), len(tieredOps))
	return layer
}

// passExclusion says why a pass of the ladder's top cannot stand: misses,
// or device reads through the kernel (the untiered store reads none, the
// tiered one reads the in-RAM device).
func passExclusion(p results.PassRecord) string {
	switch {
	case p.TooManyMiss:
		return fmt.Sprintf("%d misses and %d errors in %d GETs", p.Misses, p.Errors, p.Ops)
	case p.DeviceRead:
		return fmt.Sprintf("%.1f device bytes per GET: not memory-bound", p.ReadBytesPerGet)
	}
	return ""
}

// measureTop starts the two servers of the ladder's top, loads and warms
// each, then takes their passes alternately, the order swapped each
// round; the servers are stopped before it returns.
func (r *run) measureTop(ctx context.Context, tiered, untiered results.Row, threads int) (InMemoryRaw, error) {
	var raw InMemoryRaw
	r.printf("ladder localmemory: %s layer, the untiered server at t=%d -b %d, its passes alternated with the tiered server's\n", LayerInMemory, threads, untiered.Batch)
	sides := []struct {
		what string
		row  results.Row
		raw  *TopServerRaw
		srv  Server
	}{{what: "tiered", row: tiered, raw: &raw.Tiered}, {what: "untiered", row: untiered, raw: &raw.TopServerRaw}}
	for i := range sides {
		srv, err := r.startTopServer(ctx, sides[i].row, threads, sides[i].raw)
		if srv != nil {
			defer func() {
				cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				srv.Stop(cctx)
			}()
		}
		if err != nil {
			return raw, err
		}
		sides[i].srv = srv
	}
	for p := 1; p <= max(r.cfg.Passes, Rounds); p++ {
		for j := range sides {
			side := &sides[(p+j)%len(sides)]
			rec, err := side.srv.TakePass(ctx, threads, p)
			if err != nil {
				return raw, err
			}
			r.printf("  %s: %s ops/s, %.1f device bytes per GET\n", side.what, human.Ops(rec.OpsPerSec), rec.ReadBytesPerGet)
			side.raw.Passes = append(side.raw.Passes, rec)
		}
	}
	return raw, nil
}

// startTopServer starts one server of the ladder's top on the run's data
// dir, loads the run's dataset, requires every key and warms it up. A
// server is returned even with an error whenever one was started, for
// the caller to stop.
func (r *run) startTopServer(ctx context.Context, row results.Row, threads int, raw *TopServerRaw) (Server, error) {
	srv, err := r.env.StartServer(ctx, row)
	if err != nil {
		return srv, err
	}
	if raw.ServerArgs, err = srv.Args(); err != nil {
		return srv, err
	}
	raw.Load = results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: row, DBSize: r.cfg.DBSize, Acknowledged: -1, Time: time.Now().UTC()}
	if err := srv.Load(ctx, &raw.Load); err != nil {
		return srv, err
	}
	keys, err := srv.Keys(ctx)
	if err != nil {
		return srv, err
	}
	raw.Load.ServerKeys = keys
	if raw.Load.Acknowledged != r.cfg.DBSize || keys != r.cfg.DBSize {
		return srv, fmt.Errorf("orchestrator: ladder: the server of %s acknowledged %d and holds %d keys, want %d", row.ID(), raw.Load.Acknowledged, keys, r.cfg.DBSize)
	}
	if r.cfg.WarmupSeconds > 0 {
		if err := srv.Warm(ctx, threads, r.cfg.WarmupSeconds); err != nil {
			return srv, fmt.Errorf("orchestrator: ladder: warm-up of the server of %s: %w", row.ID(), err)
		}
	}
	return srv, nil
}
