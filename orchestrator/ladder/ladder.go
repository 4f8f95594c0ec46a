package ladder

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// Layer names, bottom up.
const (
	LayerFio    = "fio"
	LayerDevice = "Device"
	LayerKV     = "KV"
	LayerRESP   = "RESP"
)

// gapSide says where a drop between two layers is spent, in the seed's words.
var gapSide = map[string]string{
	LayerDevice:   "device-side: tierbench's IO path below the store",
	LayerKV:       "store-side: the index, the log and the pending-read path",
	LayerRESP:     "server-side: RESP parsing, the network and the sessions",
	LayerInMemory: "tier-side: the tiered server on the in-RAM device against the untiered in-memory one",
}

// ladderSeconds is each lower layer's measured time: the run's cell.
func (r *run) ladderSeconds() int { return max(r.cfg.CellSeconds, 1) }

// Run measures the layers below the RESP cells just taken and prints the
// ladders on stdout; it writes ladder.json, ladder.md and the layers' raw
// JSON in env's bundle.
func Run(ctx context.Context, env Env, stdout io.Writer) error {
	return newRun(env).ladder(ctx, stdout)
}

// ladder is Run on r.
func (r *run) ladder(ctx context.Context, stdout io.Writer) error {
	var res results.Results
	if err := results.ReadJSON(r.out, results.FileResults, &res); err != nil {
		return err
	}
	var pre results.Preflight
	if b, err := os.ReadFile(filepath.Join(r.out, results.FilePreflight)); err == nil {
		pre, _ = results.ParsePreflight(b)
	}
	if err := os.MkdirAll(filepath.Join(r.out, "ladder"), 0o755); err != nil {
		return fmt.Errorf("orchestrator: ladder: %w", err)
	}
	var ladders []results.Ladder
	r.env.SetPhase()
	for _, backend := range Backends(r.cfg, r.started) {
		l := results.Ladder{Backend: backend}
		best, ok := bestRESPCell(res, backend)
		place := r.rungPlaceOf(best, ok)
		if !r.cfg.Spec().InRAM {
			fl, c := fioLayer(pre, place)
			l.Layers = append(l.Layers, fl)
			place.fio = fioShape(c)
		}
		if !r.started {
			l.Note = "an external server has no layers below RESP that tierbench can run: RESP and fio only"
		} else {
			// The fio rung comes from the best cell's row's curve (the
			// pinned one for a pinned row); without a best cell, best.Row
			// is zero and that is the host's.
			l.Layers = r.lowerLayers(ctx, backend, place, l.Layers, r.env.RowBaseline(best.Row))
		}
		l.Layers = append(l.Layers, respLayer(best, ok, res.Plan.Workload.Batch))
		if r.cfg.Spec().LadderTop && r.started {
			l.Layers = append(l.Layers, r.inMemoryLayer(ctx, best, ok))
		}
		finishLadder(&l)
		l.Latency, l.LatencySettle = r.latencyBeside(ctx, backend)
		ladders = append(ladders, l)
	}
	if err := results.WriteJSON(r.out, results.FileLadder, ladders); err != nil {
		return err
	}
	text := report.Ladders(ladders)
	if err := results.WriteFile(r.out, "ladder.md", []byte(text)); err != nil {
		return err
	}
	fmt.Fprint(stdout, "\n"+text)
	return nil
}

// fioLayer is the ladder's fio rung: the preflight's ceiling on the CPUs
// the rungs above run on (the pinned server's, when measured there),
// returned with the rung.
func fioLayer(pre results.Preflight, place rungPlace) (results.LadderLayer, results.FioCeiling) {
	ce := pre.Ceilings()
	c, on := ce.Host, "on the whole host"
	if place.cpus != "" && ce.Pinned.IOPS > 0 {
		c, on = ce.Pinned, "on the server's CPUs "+ce.Pinned.CPUs
	}
	layer := results.LadderLayer{Layer: LayerFio, OpsPerSec: c.IOPS, Detail: "the preflight's depth-sweep ceiling " + on + ", 512 B random reads"}
	switch {
	case c.IOPS <= 0:
		layer.Error = "no fio ceiling (--no-fio, or fio is missing)"
	case c.Bound:
		layer.Detail += fmt.Sprintf("; fio cpu-bound there (%.0f %% of its %d CPU(s), %.1f CPU µs per read): the disk may do more", 100*c.Share, c.CPUCount, c.MicrosPerRead)
	case c.MicrosPerRead > 0:
		layer.Detail += fmt.Sprintf("; fio %.1f CPU µs per read", c.MicrosPerRead)
	}
	if c.MicrosPerRead > 0 {
		layer.CPUMicrosPerOp = c.MicrosPerRead
	}
	return layer, c
}

// Backends are the backends whose ladders a run of cfg measures; started
// says the run starts its servers (else it measures one already running).
func Backends(cfg plan.Config, started bool) []string {
	if !started {
		return []string{"external"}
	}
	if !cfg.Spec().Tiered {
		return nil // no device under an untiered store
	}
	return cfg.Backends
}

// respLayer is the RESP layer of the backend's best cell (any pin, any
// thread count); runBatch is the run's -b, the row's when it has none.
func respLayer(c results.Cell, ok bool, runBatch int) results.LadderLayer {
	if !ok {
		return results.LadderLayer{Layer: LayerRESP, Error: "no RESP cell was shown"}
	}
	batch := ""
	if c.Row.Batch == 0 {
		batch = fmt.Sprintf(" -b %d", runBatch)
	}
	l := results.LadderLayer{Layer: LayerRESP, OpsPerSec: c.Median, CPUMicrosPerOp: c.CPUMicrosPerOp, StealShare: c.Steal(),
		Detail: fmt.Sprintf("the best cell: %s t=%d%s (CPU of server + client)", c.Row.Label, c.Threads, batch)}
	if c.Median > 0 {
		l.Spread = (c.Max - c.Min) / c.Median
	}
	return l
}

// finishLadder fills each layer's share of the one below, flags a layer
// above the one below it by more than the noise, and names the largest
// drop into a layer that is not below the one above it. A drop within the
// noise is no gap: a layer at 0.96 of the one below it lost nothing that
// a second run could tell from chance.
func finishLadder(l *results.Ladder) {
	for i := 1; i < len(l.Layers); i++ {
		below, cur := l.Layers[i-1], &l.Layers[i]
		if below.OpsPerSec <= 0 || cur.OpsPerSec <= 0 {
			continue
		}
		cur.Share = cur.OpsPerSec / below.OpsPerSec
		if cur.Layer == LayerInMemory {
			cur.Share = cmp.Or(cur.PairOpsPerSec, below.OpsPerSec) / cur.OpsPerSec // the ceiling is on top
		}
	}
	suspect := aboveBelow(l)
	worst, withinShare, within, withinNoise := 2.0, 2.0, "", 0.0
	for i := 1; i < len(l.Layers); i++ {
		below, cur := l.Layers[i-1], &l.Layers[i]
		// A layer at or above the one below lost nothing there: no gap.
		if cur.Share <= 0 || cur.Share >= 1 || suspect[i] {
			continue
		}
		if noise := ladderNoise(l, i); cur.Share >= 1-noise {
			if cur.Share < withinShare {
				withinShare = cur.Share
				within = fmt.Sprintf("%s and %s, %.2f", below.Layer, cur.Layer, cur.Share)
				withinNoise = noise
			}
			continue
		}
		if cur.Share < worst {
			worst = cur.Share
			l.Gap = fmt.Sprintf("the gap is between %s and %s: %.2f; %s", below.Layer, cur.Layer, cur.Share, gapSide[cur.Layer])
		}
	}
	switch {
	case l.Note != "" && l.Gap == "":
		l.Gap = l.Note
	case l.Gap == "" && within != "":
		l.Gap = fmt.Sprintf("no gap is named: no layer fell below the one under it by more than the noise (the largest drop, between %s, is within %.0f %%)", within, 100*withinNoise)
		if withinNoise >= ladderWideNoise {
			l.Gap += "; rounds that far apart measured the disk at different moments (a rung that loads its own dataset reads right after writing it), not the layers: run the ladder again before reading it"
		}
	case l.Gap == "" && slices.ContainsFunc(l.Layers, func(x results.LadderLayer) bool { return x.Share > 0 }):
		l.Gap = "no gap is named: every layer kept at least the ops/s of the one below it, or passed it (flagged below)"
	}
}

// ladderWideNoise is a noise past which a ladder's shares say nothing of
// the layers: at the reference scale the KV rung's rounds, each read
// right after its own load, spread far past it
// (docs/notes/2026-12-07-comment-figures.md has the figure).
const ladderWideNoise = 0.5

// Rounds is how many times the lower layers run, in alternating
// order; each layer is the median round (odd, so the median is a round
// that ran).
const Rounds = 3

// lowerLayers runs the Device and KV layers Rounds times, the order
// swapped each round so that neither always runs on a warmer or quieter
// machine, with fio between them where it can run again (fioAgain), and
// returns the layers below RESP: below (the preflight's fio rung, or
// none in RAM) with fio's replaced by its median round, then Device and
// KV, each its median round. Each KV round's reads wait after its load
// for the fio rung's latest IOPS.
func (r *run) lowerLayers(ctx context.Context, backend string, place rungPlace, below []results.LadderLayer, base *hostcheck.FIOBaseline) []results.LadderLayer {
	devDir := filepath.Join(r.cfg.DataDir, "ladder-device")
	defer os.RemoveAll(devDir)
	shape, sweep := deviceShape{threads: 1, qd: 512}, ""
	if backend != results.ScenarioLocalMemory {
		shape, sweep = r.pickDeviceShape(ctx, backend, place)
	}
	var fioOps float64
	if len(below) > 0 {
		fioOps = below[0].OpsPerSec
	}
	again := len(below) > 0 && base != nil && r.fio && backend != results.ScenarioLocalMemory
	var devs, kvs, fios []results.LadderLayer
	for i := 0; i < Rounds; i++ {
		order := []string{LayerDevice, LayerFio, LayerKV}
		if i%2 == 1 {
			order = []string{LayerKV, LayerFio, LayerDevice}
		}
		for _, name := range order {
			if name == LayerFio && !again {
				continue
			}
			r.printf("ladder %s: %s layer, round %d/%d, %d s\n", backend, name, i+1, Rounds, r.ladderSeconds())
			// The rungs run on this machine: its steal over the round is
			// theirs.
			stolen := cpustat.StartWatch("/")
			switch name {
			case LayerDevice:
				d := r.deviceLayer(ctx, backend, strconv.Itoa(i+1), place, shape)
				d.StealShare = stolen.StealShare()
				devs = append(devs, d)
			case LayerFio:
				f := r.fioAgain(ctx, base, place, filepath.Join(devDir, "segment.0"))
				f.StealShare = stolen.StealShare()
				if f.Error == "" {
					fioOps = f.OpsPerSec
				}
				fios = append(fios, f)
			case LayerKV:
				// kv reports the steal of its reads' window; the round's,
				// its load and wait included, only stands in without it.
				k := r.kvLayer(ctx, backend, i+1, place, fioOps)
				if k.StealShare == nil {
					k.StealShare = stolen.StealShare()
				}
				kvs = append(kvs, k)
			}
		}
	}
	dev := medianRound(devs)
	if sweep != "" {
		dev.Detail += "; the shape is " + sweep
	}
	out := slices.Clone(below)
	if again {
		out[0] = fioRung(below[0], medianRound(fios))
	}
	return append(out, dev, medianRound(kvs))
}

// medianRound is the round of median ops/s (its CPU and raw JSON with
// it), every round's ops/s and file kept; a failed round fails the layer.
func medianRound(rounds []results.LadderLayer) results.LadderLayer {
	var ops []float64
	var raws []string
	for _, x := range rounds {
		if x.Error != "" {
			return x
		}
		ops, raws = append(ops, x.OpsPerSec), append(raws, x.Raw)
	}
	med, _, _ := results.Median(ops)
	var m results.LadderLayer
	var steal *float64
	for _, x := range rounds {
		if x.OpsPerSec == med {
			m = x
		}
		steal = results.MaxShare(steal, x.StealShare)
	}
	m.StealShare = steal
	m.RoundsOpsPerSec, m.RoundsRaw, m.Spread = ops, raws, spreadOf(ops)
	m.Detail += fmt.Sprintf(", median of %d rounds alternated with the other layer", len(rounds))
	return m
}

// deviceLayer runs `tierbench device` at shape, where place says; round
// names its files.
func (r *run) deviceLayer(ctx context.Context, backend, round string, place rungPlace, shape deviceShape) results.LadderLayer {
	layer := results.LadderLayer{Layer: LayerDevice}
	args := []string{"device", "--backend", backend, "--block", "512", "--threads", strconv.Itoa(shape.threads),
		"--runtime", strconv.Itoa(r.ladderSeconds()), "--json"}
	if backend == results.ScenarioLocalMemory {
		args = append(args, "--device-completion-threads", "4", "--device-throttle-limit", "512")
	} else {
		dir := filepath.Join(r.cfg.DataDir, "ladder-device")
		fileBytes := fileBytesOf(r.cfg)
		args = append(args, "--dir", dir, "--file-size", strconv.FormatInt((fileBytes+(1<<20)-1)>>20, 10)+"m")
	}
	args = append(args, "--qd", strconv.Itoa(shape.qd))
	layer.Detail = fmt.Sprintf("tierbench device --backend %s, 512 B random reads, %s, %s", backend, shape, place.Where())
	var out struct {
		IOPS      float64 `json:"iops"`
		CPUPerOp  float64 `json:"cpu_us_per_op"`
		OpsCount  int64   `json:"ops"`
		ErrorsCnt int64   `json:"errors"`
	}
	layer.Raw, layer.Error = r.runLayer(ctx, fmt.Sprintf("ladder/%s-device-%s.json", backend, round), args, place.env(), &out)
	layer.OpsPerSec, layer.CPUMicrosPerOp = out.IOPS, out.CPUPerOp
	return layer
}

// kvLayer runs `tierbench kv` with the server's store flags and dataset,
// where place says, at one thread per server CPU and at the best cell's
// connections, each keeping its -b reads in flight; the better run is
// the round's. On the disk its reads wait after its own load until they
// reach 90 % of fioOps (or stop getting faster; with no fio ceiling
// they do not wait, as the passes do not): the load has just written
// the whole dataset, and at the reference scale rounds that read at once
// spread far past ladderWideNoise.
func (r *run) kvLayer(ctx context.Context, backend string, round int, place rungPlace, fioOps float64) results.LadderLayer {
	layer := results.LadderLayer{Layer: LayerKV}
	threads := place.kvThreads()
	itp := min(max(place.batch, 1), 4096)
	args := []string{"kv", "--storage-tier", "--memory", r.cfg.Memory, "--page", r.cfg.Page, "--segment", r.cfg.Segment, "--index", r.cfg.Index,
		"--dbsize", strconv.FormatInt(r.cfg.DBSize, 10), "--keylength", strconv.Itoa(r.cfg.KeyLength), "--valuelength", strconv.Itoa(r.cfg.ValueLength),
		"--load-threads", strconv.Itoa(min(r.cfg.LoadThreads, 2*runtime.NumCPU())), "-t", joinInts(threads), "--itp", strconv.Itoa(itp), "--rumd", "100,0,0,0",
		"--runtime", strconv.Itoa(r.ladderSeconds()), "--json"}
	if backend == results.ScenarioLocalMemory {
		args = append(args, "--device-type", "localmemory", "--device-completion-threads", "4", "--device-throttle-limit", "512")
	} else {
		dir := filepath.Join(r.cfg.DataDir, "ladder-kv")
		args = append(args, "--device-type", "native", "--device-io-backend", backend, "--logdir", dir)
		if fioOps > 0 {
			args = append(args, "--settle", "--settle-target", strconv.FormatFloat(fioOps, 'f', 0, 64))
		}
		defer os.RemoveAll(dir)
	}
	kind := map[bool]string{true: "localmemory", false: "native " + backend}[backend == results.ScenarioLocalMemory]
	layer.Detail = fmt.Sprintf("tierbench kv --device-type %s, the run's --memory %s --page %s --index %s and %d keys, 100 %% GET, --itp %d, %s, t=%s",
		kind, r.cfg.Memory, r.cfg.Page, r.cfg.Index, r.cfg.DBSize, itp, place.Where(), joinInts(threads))
	var out struct {
		Settle *struct {
			ProbeOpsPerSec []float64 `json:"probe_ops_per_sec"`
			Seconds        float64   `json:"seconds"`
			Settled        bool      `json:"settled"`
			Why            string    `json:"why"`
		} `json:"settle"`
		Runs []struct {
			Threads     int      `json:"threads"`
			OpsPerSec   float64  `json:"ops_per_sec"`
			CPUPerOp    float64  `json:"cpu_us_per_op"`
			NotFound    int64    `json:"not_found"`
			DeviceReads int64    `json:"device_reads"`
			Ops         int64    `json:"ops"`
			StealShare  *float64 `json:"steal_share"`
		} `json:"runs"`
	}
	layer.Raw, layer.Error = r.runLayer(ctx, fmt.Sprintf("ladder/%s-kv-%d.json", backend, round), args, place.env(), &out)
	if len(out.Runs) > 0 {
		run := out.Runs[0]
		for _, x := range out.Runs[1:] {
			if x.OpsPerSec > run.OpsPerSec {
				run = x
			}
		}
		layer.OpsPerSec, layer.CPUMicrosPerOp, layer.StealShare = run.OpsPerSec, run.CPUPerOp, run.StealShare
		if len(threads) > 1 {
			layer.Detail += fmt.Sprintf(", the better run: t=%d", run.Threads)
		}
		if s := out.Settle; s != nil {
			layer.Detail += kvSettleText(s.ProbeOpsPerSec, s.Seconds, s.Settled, s.Why)
		}
		if run.NotFound > 0 && layer.Error == "" {
			layer.Error = fmt.Sprintf("%d of %d reads found nothing", run.NotFound, run.Ops)
		}
	}
	return layer
}

// kvSettleText says how a KV round's reads came back after its load.
func kvSettleText(probes []float64, seconds float64, settled bool, why string) string {
	if len(probes) == 0 {
		return ""
	}
	var ops []string
	for _, v := range probes {
		ops = append(ops, human.Ops(v))
	}
	if settled {
		return fmt.Sprintf("; its reads waited %.0f s after its load (probes %s ops/s)", seconds, strings.Join(ops, ", "))
	}
	return fmt.Sprintf("; its reads began after %.0f s on a disk **not back to its ceiling** (probes %s ops/s: %s)", seconds, strings.Join(ops, ", "), why)
}

// runLayer runs one lower layer as a child of this run, keeps its JSON in
// the bundle under name and decodes it into v; it returns the file and
// an error text for the report.
func (r *run) runLayer(ctx context.Context, name string, args, env []string, v any) (string, string) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(r.ladderSeconds()+600)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.cfg.Binary, args...)
	var stdout bytes.Buffer
	logf, err := safe.CreateOrTruncate(filepath.Join(r.out, results.DirLogs, strings.ReplaceAll(strings.TrimPrefix(name, "ladder/"), ".json", ".log")), 0o644)
	if err != nil {
		return "", err.Error()
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = &stdout, logf
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	runErr := cmd.Run()
	if err := results.WriteFile(r.out, name, stdout.Bytes()); err != nil {
		return "", err.Error()
	}
	if runErr != nil {
		return name, fmt.Sprintf("tierbench %s: %v (log logs/%s)", args[0], runErr, filepath.Base(logf.Name()))
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		return name, fmt.Sprintf("tierbench %s --json: %v", args[0], err)
	}
	return name, ""
}
