package orchestrator

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/results"
)

// The top of the LocalMemory ladder is the untiered in-memory server
// (scenario 1's: `tierbench server --index` alone) on the same dataset and
// shape, measured by the same client at the thread count and -b of the
// best localmemory RESP cell. It is the ceiling the tiered server on the
// in-RAM device is held against, so its share reads the other way:
// localmemory RESP ÷ in-memory RESP, the tiered server's share of the
// untiered one. A drop there is what the device tier itself costs.

// layerInMemory is the untiered server's RESP layer, the LocalMemory
// ladder's top.
const layerInMemory = "RESP in-memory"

// fileInMemoryLayer is the in-memory layer's raw JSON in the bundle.
const fileInMemoryLayer = "ladder/localmemory-inmemory.json"

// inMemoryRaw is the in-memory layer's raw JSON: the server's flags, the
// load's counts and every pass as cells.jsonl would hold it.
type inMemoryRaw struct {
	ServerArgs []string             `json:"server_args"`
	Load       results.LoadRecord   `json:"load"`
	Passes     []results.PassRecord `json:"passes"`
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

// inMemoryLayer starts the untiered server on a wiped data dir, loads the
// run's dataset, checks it and measures --passes passes (ladderRounds at
// least) at best's thread count and -b; the layer is their median.
func (r *runner) inMemoryLayer(ctx context.Context, best results.Cell, ok bool) results.LadderLayer {
	layer := results.LadderLayer{Layer: layerInMemory, ShareIs: "RESP ÷ " + layerInMemory}
	if !ok {
		layer.Error = "no localmemory RESP cell to match"
		return layer
	}
	row := results.Row{Backend: results.ScenarioMemory, Pin: best.Row.Pin, Label: "ladder top, " + best.Row.Label, Batch: r.batchOf(best.Row)}
	layer.Detail = fmt.Sprintf("the untiered server (tierbench server --index %s), the same %d keys, t=%d -b %d as the best localmemory cell (CPU of server + client); share read as localmemory RESP ÷ this",
		r.cfg.Index, r.cfg.DBSize, best.Threads, row.Batch)
	raw, err := r.measureInMemory(ctx, row, best.Threads)
	if werr := results.WriteJSON(r.out, fileInMemoryLayer, raw); werr == nil {
		layer.Raw = fileInMemoryLayer
	}
	if err != nil {
		layer.Error = err.Error()
		return layer
	}
	var ops, cpu []float64
	for _, p := range raw.Passes {
		if why := passExclusion(p); why != "" {
			layer.Error = fmt.Sprintf("pass %d kept out: %s", p.Pass, why)
			return layer
		}
		ops, cpu = append(ops, p.OpsPerSec), append(cpu, p.CPUMicrosPerOp)
	}
	layer.OpsPerSec, _, _ = results.Median(ops)
	layer.CPUMicrosPerOp, _, _ = results.Median(cpu)
	return layer
}

// passExclusion says why a pass of the in-memory layer cannot stand:
// misses, or device reads under the untiered store.
func passExclusion(p results.PassRecord) string {
	switch {
	case p.TooManyMiss:
		return fmt.Sprintf("%d misses and %d errors in %d GETs", p.Misses, p.Errors, p.Ops)
	case p.DeviceRead:
		return fmt.Sprintf("%.1f device bytes per GET: not memory-bound", p.ReadBytesPerGet)
	}
	return ""
}

// measureInMemory runs the in-memory layer's server, load, warm-up and
// passes; the server is stopped before it returns.
func (r *runner) measureInMemory(ctx context.Context, row results.Row, threads int) (inMemoryRaw, error) {
	var raw inMemoryRaw
	r.printf("ladder localmemory: %s layer, the untiered server at t=%d -b %d\n", layerInMemory, threads, row.Batch)
	tgt, err := r.startServer(ctx, row)
	if err != nil {
		return raw, err
	}
	if tgt.srv != nil {
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tgt.srv.stop(cctx)
		}()
	}
	port, _ := strconv.Atoi(tgt.addr[strings.LastIndexByte(tgt.addr, ':')+1:])
	if raw.ServerArgs, err = r.serverArgs(row, port, r.cfg.DataDir); err != nil {
		return raw, err
	}
	raw.Load = results.LoadRecord{Kind: "load", Schema: results.SchemaVersion, Row: row, DBSize: r.cfg.DBSize, Acknowledged: -1, Time: time.Now().UTC()}
	if err := r.load(ctx, row, tgt, &raw.Load); err != nil {
		return raw, err
	}
	w, err := tgt.first().probe.witness(ctx)
	if err != nil {
		return raw, err
	}
	raw.Load.ServerKeys = w.Keys
	if raw.Load.Acknowledged != r.cfg.DBSize || w.Keys != r.cfg.DBSize {
		return raw, fmt.Errorf("orchestrator: ladder: the untiered server acknowledged %d and holds %d keys, want %d", raw.Load.Acknowledged, w.Keys, r.cfg.DBSize)
	}
	if r.cfg.WarmupSeconds > 0 {
		if _, _, err := r.bench(ctx, row, tgt, "warmup", threads, r.cfg.WarmupSeconds); err != nil {
			return raw, fmt.Errorf("orchestrator: ladder: warm-up of the untiered server: %w", err)
		}
	}
	for p := 1; p <= max(r.cfg.Passes, ladderRounds); p++ {
		rec, err := r.takePass(ctx, row, tgt, threads, p)
		if err != nil {
			return raw, err
		}
		r.printf("  %s ops/s, %.1f device bytes per GET\n", FormatOps(rec.OpsPerSec), rec.ReadBytesPerGet)
		raw.Passes = append(raw.Passes, rec)
	}
	return raw, nil
}
