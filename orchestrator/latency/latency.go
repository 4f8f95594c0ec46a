package latency

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tierbench/tierbench/internal/freeze"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// Latency under load: after a row's throughput passes, GETs at fixed
// offered rates, each a share of the row's best median, measured by
// `bench --online --rate` from each op's intended send time, so a server
// that stalls is charged for every GET it delayed (no coordinated
// omission). Steps are appended to latency.jsonl (not cells.jsonl, which
// older tierbench versions read and would refuse) and each step's
// HdrHistogram is written to latency/ as an HdrHistogram log.

// OnlineGET is the bench flags of an online GET phase beyond the row's
// benchArgs, the connections and the runtime: every op a GET, at most
// inFlight in flight per connection, offered at rate ops/sec (0: closed
// loop), after results.LatencyWarmupSeconds sent alike but not recorded. The
// fixed-rate steps and the merged phase across hosts both take their flags
// from here, so their latencies are measured alike.
func OnlineGET(inFlight int, rate float64) []string {
	return onlineOps("GET", inFlight, rate)
}

// onlineOps is onlineGET with every op an op instead: the calibration
// step's PING.
func onlineOps(op string, inFlight int, rate float64) []string {
	args := []string{"--online", "--op-workload", op, "--op-percent", "100", "--itp", strconv.Itoa(inFlight),
		"--warmup-seconds", strconv.Itoa(results.LatencyWarmupSeconds)}
	if rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(rate, 'f', 0, 64))
	}
	return args
}

// OnlineWarmup is what bench counted of an online phase's unrecorded
// warm-up: the evidence that the phase had one.
type OnlineWarmup struct {
	Seconds float64 `json:"seconds"`
	Ops     int64   `json:"ops"`
}

// Shares are the offered rates, as shares of the row's best median.
var Shares = []float64{0.10, 0.25, 0.50, 0.75, 0.90}

// OnlineOutput is the part of `bench --online --json` the steps use.
type OnlineOutput struct {
	Online *struct {
		Ops             int64         `json:"ops"`
		Seconds         float64       `json:"seconds"`
		OpsPerSec       float64       `json:"ops_per_sec"`
		Misses          int64         `json:"misses"`
		Errors          int64         `json:"errors"`
		ClientSaturated bool          `json:"client_saturated"`
		HostStealShare  *float64      `json:"host_steal_share"`
		HostBusyShare   *float64      `json:"host_busy_share"`
		HostFreezes     *freeze.Stats `json:"host_freezes"`
		Latency         struct {
			P50  float64 `json:"p50"`
			P99  float64 `json:"p99"`
			P999 float64 `json:"p99_9"`
			Max  float64 `json:"max"`
		} `json:"latency_us"`
		// Histogram is the run's HdrHistogram of nanoseconds, compressed
		// and base64 as in an HdrHistogram log line.
		Histogram string       `json:"histogram"`
		Warmup    OnlineWarmup `json:"warmup"`
		Pacing    *struct {
			Lateness struct {
				P50 float64 `json:"p50"`
				P99 float64 `json:"p99"`
				Max float64 `json:"max"`
			} `json:"lateness_us"`
			OwnLateness *struct {
				P99 float64 `json:"p99"`
			} `json:"own_lateness_us"`
			Due         int64 `json:"due"`
			Unsent      int64 `json:"unsent"`
			HeldUnsent  int64 `json:"held_unsent"`
			ClientBound bool  `json:"client_bound"`
		} `json:"pacing"`
	} `json:"online"`
}

// ParseOnline reads bench's online JSON; the histogram, when present,
// must decode.
func ParseOnline(out []byte) (OnlineOutput, *hdrhistogram.Histogram, error) {
	var o OnlineOutput
	doc, err := rig.JSONDocument(out)
	if err != nil {
		return o, nil, fmt.Errorf("orchestrator: bench --online output: %w", err)
	}
	if err := json.Unmarshal(doc, &o); err != nil {
		return o, nil, fmt.Errorf("orchestrator: bench --online output is not its JSON document: %w: %q", err, rig.Clip(out))
	}
	on := o.Online
	if on == nil {
		return o, nil, fmt.Errorf("orchestrator: bench --online output has no online result: %q", rig.Clip(out))
	}
	if on.Ops < 0 || on.Seconds < 0 || on.OpsPerSec < 0 || on.Misses < 0 || on.Errors < 0 {
		return o, nil, fmt.Errorf("orchestrator: bench --online output has negative counts: %+v", *on)
	}
	if on.Histogram == "" {
		return o, nil, nil
	}
	h, err := hdrhistogram.Decode([]byte(on.Histogram))
	if err != nil {
		return o, nil, fmt.Errorf("orchestrator: bench --online histogram: %w", err)
	}
	return o, h, nil
}

// BestCell is the row's highest median among the cells the table shows.
func BestCell(plan results.Plan, recs []results.PassRecord, row results.Row) (results.Cell, bool) {
	var best results.Cell
	for _, c := range results.Aggregate(plan, recs, nil, 0) {
		if c.Row == row && c.Excluded == "" && c.Passes > 0 && c.Median > best.Median {
			best = c
		}
	}
	return best, best.Median > 0
}

// Steps runs the fixed-rate steps of a row whose passes are done,
// skipping the steps latency.jsonl already holds (--resume). The
// registry runs it only for a run that asks for --latency.
func Steps(ctx context.Context, env Env, row results.Row) error {
	recs, _, err := results.ReadCells(env.Bundle())
	if err != nil {
		return err
	}
	best, ok := BestCell(env.Plan(), recs, row)
	if !ok {
		env.Printf("%s %s: no cell in the table, so no rate to offer: latency steps skipped\n", human.Title(row.Backend), row.Label)
		return nil
	}
	done, err := results.ReadLatency(env.Bundle())
	if err != nil {
		return err
	}
	if _, ok := results.FloorOf(done, row); !ok && len(MissingShares(done, row)) > 0 {
		if err := FloorStep(ctx, env, row, best); err != nil {
			return err
		}
	}
	for _, share := range MissingShares(done, row) {
		rec, err := Step(ctx, env, row, best, share)
		if err != nil {
			return err
		}
		env.Printf("  offered %s, achieved %s; p50 %s p99 %s p99.9 %s%s\n", human.Ops(rec.OfferedOpsPerSec), human.Ops(rec.AchievedOpsPerSec),
			plots.FormatMicros(rec.P50Micros), plots.FormatMicros(rec.P99Micros), plots.FormatMicros(rec.P999Micros), shortNote(rec))
		if err := Append(env.Bundle(), rec); err != nil {
			return err
		}
	}
	return nil
}

// floorCommand is what the calibration step sends, and floorSeconds its
// recorded seconds at most: PING is answered by every RESP server without
// touching data, so its latency is the network's, the client's and the
// server's event loop's — the floor under every GET step of the row.
const (
	FloorCommand = "PING"
	FloorSeconds = 3
)

// FloorStep measures the row's floor before its GET steps: PING at the
// lowest step's rate over the same connections and depth, appended to
// latency.jsonl with Floor set.
func FloorStep(ctx context.Context, env Env, row results.Row, best results.Cell) error {
	rec := rateRecord(env, row, best, math.Round(Shares[0]*best.Median))
	rec.Share, rec.Floor = 0, FloorCommand
	env.Printf("latency: %s %s floor: %s at %s/s for %d s after a %d s unrecorded warm-up\n", human.Title(row.Backend), row.Label,
		FloorCommand, human.Ops(rec.OfferedOpsPerSec), stepSeconds(env, rec), results.LatencyWarmupSeconds)
	rec, err := rateStep(ctx, env, row, rec, "floor", "latency-floor", HlogName(row, "floor"))
	if err != nil {
		return err
	}
	env.Printf("  floor p50 %s p99 %s p99.9 %s%s\n", plots.FormatMicros(rec.P50Micros), plots.FormatMicros(rec.P99Micros), plots.FormatMicros(rec.P999Micros), shortNote(rec))
	return Append(env.Bundle(), rec)
}

// stepSeconds is how long a fixed-rate step records: a cell's seconds, at
// most floorSeconds for the calibration.
func stepSeconds(env Env, rec results.LatencyRecord) int {
	if rec.Floor != "" {
		return min(env.Config().CellSeconds, FloorSeconds)
	}
	return env.Config().CellSeconds
}

// MissingShares are the shares of latencyShares whose step recs lack for
// row, in order.
func MissingShares(recs []results.LatencyRecord, row results.Row) []float64 {
	var out []float64
	for _, share := range Shares {
		if !slices.ContainsFunc(recs, func(l results.LatencyRecord) bool { return l.Row == row && l.SLO == "" && l.Share == share }) {
			out = append(out, share)
		}
	}
	return out
}

// Todo reports whether row still lacks a fixed-rate step latency.jsonl
// does not hold, for a row with a cell in the table (a row without one
// has no rate to offer: Steps skips it). (Across hosts, the row's merged
// online phase is the fleet's to say.) A run stopped during a row's
// latency phase has all the row's passes, so --resume asks this before it
// skips a row: what the bundle holds is kept and only what it lacks is
// run. The registry asks it only of a run with --latency.
func Todo(env Env, row results.Row) (bool, error) {
	done, _, ok, err := rowDone(env, row)
	if !ok || err != nil {
		return false, err
	}
	return len(MissingShares(done, row)) > 0, nil
}

// rowDone is what the bundle holds of row's latency and the row's best
// cell, the rate its steps and its search start from; ok is false for a
// row without a cell in the table.
func rowDone(env Env, row results.Row) (done []results.LatencyRecord, best results.Cell, ok bool, err error) {
	recs, _, err := results.ReadCells(env.Bundle())
	if err != nil {
		return nil, best, false, err
	}
	if best, ok = BestCell(env.Plan(), recs, row); !ok {
		return nil, best, false, nil
	}
	done, err = results.ReadLatency(env.Bundle())
	return done, best, err == nil, err
}

// Step offers share × best's median over best's connections for
// one cell's seconds, with up to --batch GETs in flight per connection
// (what the throughput cells kept outstanding), and writes its log.
func Step(ctx context.Context, env Env, row results.Row, best results.Cell, share float64) (results.LatencyRecord, error) {
	rec := rateRecord(env, row, best, math.Round(share*best.Median))
	rec.Share = share
	pct := int(math.Round(100 * share))
	env.Printf("latency: %s %s at %d %% of %s (t=%d): %s GET/s offered for %d s after a %d s unrecorded warm-up\n", human.Title(row.Backend), row.Label, pct,
		human.Ops(best.Median), best.Threads, human.Ops(rec.OfferedOpsPerSec), env.Config().CellSeconds, results.LatencyWarmupSeconds)
	return rateStep(ctx, env, row, rec, fmt.Sprintf("at %d %%", pct), fmt.Sprintf("latency-%d", pct), HlogName(row, strconv.Itoa(pct)))
}

// HlogName is a row's file under latency/ for one step: named by the whole
// row id, so rows that differ only in server, -b, memory or TLS keep a log
// each (named by backend and pin alone, a sweep's rows overwrote each
// other's).
func HlogName(row results.Row, step string) string {
	return strings.ReplaceAll(row.ID(), "/", "-") + "-" + step + ".hlog"
}

// rateRecord is the record of a fixed-rate step of row at rate GET/s over
// best's connections, before it is measured.
func rateRecord(env Env, row results.Row, best results.Cell, rate float64) results.LatencyRecord {
	return results.LatencyRecord{Kind: "latency", Schema: results.SchemaVersion, Row: row, Share: rate / best.Median, BestOpsPerSec: best.Median,
		Threads: best.Threads, InFlight: env.Batch(), OfferedOpsPerSec: rate}
}

// rateStep measures the fixed-rate step rec describes (what names it in
// errors, name is the client's, hlog the file under latency/) and fills
// in what the client measured.
func rateStep(ctx context.Context, env Env, row results.Row, rec results.LatencyRecord, what, name, hlog string) (results.LatencyRecord, error) {
	seconds, op := stepSeconds(env, rec), "GET"
	if rec.Floor != "" {
		op = rec.Floor
	}
	limit := rig.PhaseLimit(results.LatencyWarmupSeconds + seconds)
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	args := append([]string{"-s", "-t", strconv.Itoa(rec.Threads), "--runtime", strconv.Itoa(seconds)}, onlineOps(op, rec.InFlight, rec.OfferedOpsPerSec)...)
	stdout, err := env.RunClient(sctx, name, args)
	end := time.Now()
	if err != nil && ctx.Err() == nil && sctx.Err() != nil {
		return rec, fmt.Errorf("orchestrator: latency step %s %s %s: did not end within %v: the server stopped answering (see logs/)", row.Backend, row.Label, what, limit)
	}
	if err != nil {
		return rec, fmt.Errorf("orchestrator: latency step %s %s %s: %w", row.Backend, row.Label, what, err)
	}
	out, h, err := ParseOnline(stdout)
	if err != nil {
		return rec, err
	}
	on := out.Online
	rec.Ops, rec.Seconds, rec.AchievedOpsPerSec = on.Ops, on.Seconds, on.OpsPerSec
	rec.Misses, rec.Errors, rec.ClientSaturated = on.Misses, on.Errors, on.ClientSaturated
	rec.HostStealShare, rec.HostBusyShare = on.HostStealShare, on.HostBusyShare
	if f := on.HostFreezes; f != nil && f.CPUs > 0 && on.Seconds > 0 {
		share := f.FrozenShare(on.Seconds)
		rec.HostFrozenShare = &share
	}
	rec.WarmupSeconds, rec.WarmupOps = on.Warmup.Seconds, on.Warmup.Ops
	rec.Short = rec.AchievedOpsPerSec < results.MinAchievedShare*rec.OfferedOpsPerSec
	rec.P50Micros, rec.P99Micros, rec.P999Micros, rec.MaxMicros = on.Latency.P50, on.Latency.P99, on.Latency.P999, on.Latency.Max
	rec.Time = end.UTC()
	if pc := on.Pacing; pc != nil {
		rec.Pacing = &results.Pacing{LatenessP50Micros: pc.Lateness.P50, LatenessP99Micros: pc.Lateness.P99, LatenessMaxMicros: pc.Lateness.Max,
			Due: pc.Due, Unsent: pc.Unsent, HeldUnsent: pc.HeldUnsent, ClientBound: pc.ClientBound}
		if pc.OwnLateness != nil {
			rec.Pacing.OwnLatenessP99Micros = &pc.OwnLateness.P99
		}
	}
	if h != nil {
		us := func(ns int64) float64 { return float64(ns) / 1e3 }
		rec.P50Micros, rec.P99Micros = us(h.ValueAtQuantile(50)), us(h.ValueAtQuantile(99))
		rec.P999Micros, rec.MaxMicros = us(h.ValueAtQuantile(99.9)), us(h.Max())
		rec.Hlog = filepath.ToSlash(filepath.Join(results.DirLatency, hlog))
		if err := writeHlog(filepath.Join(env.Bundle(), rec.Hlog), h, start, end, rec); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// writeHlog writes one step's histogram as an HdrHistogram log with one
// interval, which HdrHistogram's own tools read and plot.
func writeHlog(path string, h *hdrhistogram.Histogram, start, end time.Time, rec results.LatencyRecord) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("orchestrator: latency dir: %w", err)
	}
	f, err := safe.CreateOrTruncate(path, 0o644)
	if err != nil {
		return fmt.Errorf("orchestrator: write %s: %w", path, err)
	}
	w := hdrhistogram.NewHistogramLogWriter(f)
	h.SetStartTimeMs(start.UnixMilli())
	h.SetEndTimeMs(end.UnixMilli())
	err = errors.Join(
		w.OutputLogFormatVersion(),
		w.OutputStartTime(start.UnixMilli()),
		w.OutputBaseTime(start.UnixMilli()),
		w.OutputComment(fmt.Sprintf("[tierbench %s %s: %s at %.0f ops/sec offered (%.0f %% of %.0f), %d connections; values in nanoseconds from each op's intended send time]",
			rec.Row.Backend, rec.Row.Label, cmp.Or(rec.Floor, "GET"), rec.OfferedOpsPerSec, 100*rec.OfferedOpsPerSec/rec.BestOpsPerSec, rec.BestOpsPerSec, rec.Threads)),
		w.OutputLegend(),
	)
	w.SetBaseTime(start.UnixMilli())
	if err == nil {
		err = w.OutputIntervalHistogram(h)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("orchestrator: write %s: %w", path, err)
	}
	return nil
}

func Append(dir string, rec results.LatencyRecord) error {
	return results.AppendJSONL(dir, results.FileLatency, rec)
}

func shortNote(rec results.LatencyRecord) string {
	note := ""
	if pc := rec.Pacing; pc != nil {
		note = fmt.Sprintf("; sends late p50 %s p99 %s", plots.FormatMicros(pc.LatenessP50Micros), plots.FormatMicros(pc.LatenessP99Micros))
		if pc.Unsent > 0 {
			note += fmt.Sprintf(", %d of %d due never sent", pc.Unsent, pc.Due)
			if pc.HeldUnsent > 0 {
				note += fmt.Sprintf(" (%d held by full windows)", pc.HeldUnsent)
			}
		}
		if pc.ClientBound {
			note += "  CLIENT-BOUND"
		}
	}
	if rec.Short {
		note += fmt.Sprintf("  SHORT: achieved %.1f %% of the offered rate", 100*rec.AchievedOpsPerSec/rec.OfferedOpsPerSec)
	}
	return note
}
