package ladder

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/results"
)

// The rungs below RESP run at shapes the server's own run had, or they
// measure something the server never does (a device rung of 1 thread ×
// 4096 reads in flight read far below fio at the reference scale, below
// even the KV and RESP rungs above it): on the CPUs the best RESP cell's
// server had (its cpuset when the row is pinned, so the device layer picks
// the same completion threads and rings), and at the cell's connections
// and -b as well as at one submitter per CPU, the better of the two.

// rungPlace is where and at what shape the lower rungs run: the best
// RESP cell's server budget and client shape.
type rungPlace struct {
	cpus, mems string // the server's cpuset and memory nodes when its row is pinned; "" free
	cpuCount   int    // CPUs the server could use
	threads    int    // the best cell's client connections
	batch      int    // its -b: GETs each connection keeps in flight
	// fio is the fio rung's best point as a device shape (its jobs, each
	// with its share of the reads in flight); zero without a fio rung.
	fio deviceShape
}

// rungPlaceOf is the place of the lower rungs under best (ok: there is a
// best cell; without one they run free at one submitter per CPU).
func (r *run) rungPlaceOf(best results.Cell, ok bool) rungPlace {
	p := rungPlace{cpuCount: runtime.NumCPU(), threads: runtime.NumCPU(), batch: r.cfg.Batch}
	if !ok {
		return p
	}
	p.threads, p.batch = best.Threads, r.cfg.BatchOf(best.Row)
	if pin := r.env.Pinning(); best.Row.Pin == plan.PinPinned && pin.ServerCPUs != "" {
		p.cpus, p.mems = pin.ServerCPUs, pin.ServerMems
		if list, err := cpulist.Parse(p.cpus); err == nil && len(list) > 0 {
			p.cpuCount = len(list)
		}
	}
	return p
}

// Where says on which CPUs a rung ran.
func (p rungPlace) Where() string {
	if p.cpus == "" {
		return fmt.Sprintf("free on the host's %d CPUs", p.cpuCount)
	}
	return fmt.Sprintf("pinned to the best cell's server CPUs %s", p.cpus)
}

// env pins a rung's process as the best cell's server was pinned
// (ExecPinnedChild applies it in the child); nil when it ran free.
func (p rungPlace) env() []string {
	if p.cpus == "" {
		return nil
	}
	env := []string{process.EnvPinCPUs + "=" + p.cpus}
	if p.mems != "" {
		env = append(env, process.EnvPinMems+"="+p.mems)
	}
	return env
}

// deviceShape is one `tierbench device` shape: threads workers, each
// keeping qd reads in flight.
type deviceShape struct{ threads, qd int }

func (s deviceShape) String() string {
	return fmt.Sprintf("%d thread(s) × %d in flight", s.threads, s.qd)
}

// deviceShapes are the device rung's candidates on a native backend:
// one submitter per server CPU sharing the server's throttle depth; the
// best cell's connections each with its -b in flight, as the server's
// sessions submit (their total capped at the throttle limit); and fio's
// best point, so that the rung is not held below fio by a shape fio was
// not measured at (at the reference scale the first two read less than fio
// at its own best point; docs/notes/2026-12-07-comment-figures.md has the
// figures). Each shape appears once.
func (p rungPlace) deviceShapes() []deviceShape {
	limit := device.DefaultThrottleLimit
	perCPU := deviceShape{threads: max(p.cpuCount, 1), qd: (limit + max(p.cpuCount, 1) - 1) / max(p.cpuCount, 1)}
	t := max(p.threads, 1)
	conn := deviceShape{threads: t, qd: max(1, min(max(p.batch, 1), limit/t))}
	shapes := []deviceShape{perCPU}
	for _, s := range []deviceShape{conn, p.fio} {
		if s.threads > 0 && s.qd > 0 && !slices.Contains(shapes, s) {
			shapes = append(shapes, s)
		}
	}
	return shapes
}

// fioShape is ceiling's best point as a device shape: its jobs, each
// with an equal share of the reads in flight; zero when the point is not
// known (no fio, or a bundle from before the points were kept).
func fioShape(c results.FioCeiling) deviceShape {
	if c.Jobs < 1 || c.Depth < c.Jobs {
		return deviceShape{}
	}
	return deviceShape{threads: c.Jobs, qd: c.Depth / c.Jobs}
}

// kvThreads are the KV rung's thread counts: one per server CPU and the
// best cell's connections; the rung is the better run.
func (p rungPlace) kvThreads() []int {
	ts := []int{max(p.cpuCount, 1)}
	if t := max(p.threads, 1); t != ts[0] {
		ts = append(ts, t)
	}
	return ts
}

// pickDeviceShape runs each candidate shape once for the rung's seconds
// and keeps the one of most IOPS; sweep says what each gave, for the
// layer's detail. One candidate is taken without a run.
func (r *run) pickDeviceShape(ctx context.Context, backend string, place rungPlace) (deviceShape, string) {
	shapes := place.deviceShapes()
	if len(shapes) == 1 {
		return shapes[0], ""
	}
	best, bestOps := shapes[0], -1.0
	var said []string
	for i, s := range shapes {
		r.printf("ladder %s: Device shape %d/%d, %s, %d s\n", backend, i+1, len(shapes), s, r.ladderSeconds())
		l := r.deviceLayer(ctx, backend, fmt.Sprintf("shape-%d", i+1), place, s)
		said = append(said, fmt.Sprintf("%s: %s", s, opsOrError(l)))
		if l.Error == "" && l.OpsPerSec > bestOps {
			best, bestOps = s, l.OpsPerSec
		}
	}
	return best, fmt.Sprintf("the best of a sweep (%s)", strings.Join(said, "; "))
}

func opsOrError(l results.LadderLayer) string {
	if l.Error != "" {
		return "failed"
	}
	return human.Ops(l.OpsPerSec) + " IOPS"
}

// ladderNoiseFloor is the least spread a ladder takes for noise: back-to-
// back runs of one layer on this kind of shared machine differ by that
// much even when their rounds agree.
const ladderNoiseFloor = 0.05

// spreadOf is (max − min) ÷ median of a layer's rounds; 0 with fewer
// than two.
func spreadOf(ops []float64) float64 {
	if len(ops) < 2 {
		return 0
	}
	med, lo, hi := results.Median(ops)
	if med <= 0 {
		return 0
	}
	return (hi - lo) / med
}

// ladderNoise is the noise between layer i and the one below it: the
// larger of the floor and either layer's spread.
func ladderNoise(l *results.Ladder, i int) float64 {
	return max(ladderNoiseFloor, l.Layers[i-1].Spread, l.Layers[i].Spread)
}

// aboveBelow flags each layer above the one below it by more than the
// noise (ladderNoise): the lower
// rung ran at a worse operating point or a slower moment, so it bounds
// nothing and the drop into it is no gap. It returns which layers'
// drops from below are not to be read as gaps.
func aboveBelow(l *results.Ladder) map[int]bool {
	suspect := map[int]bool{}
	for i := 1; i < len(l.Layers); i++ {
		below, cur := l.Layers[i-1], &l.Layers[i]
		if cur.Share <= 0 {
			continue
		}
		noise := ladderNoise(l, i)
		if cur.Share <= 1+noise {
			continue
		}
		if cur.Layer == LayerInMemory {
			cur.Flag = fmt.Sprintf("the tiered server's RESP is %.2f × the untiered one's, beyond the noise (%.0f %%): the top ran at a slower moment, not a ceiling the tier passed", cur.Share, 100*noise)
			continue
		}
		cur.Flag = fmt.Sprintf("%s is %.2f × %s below it, beyond the noise (%.0f %%): %s ran at a worse operating point or a slower moment than %s, so it bounds nothing and the drop into it is not read as a gap",
			cur.Layer, cur.Share, below.Layer, 100*noise, below.Layer, cur.Layer)
		suspect[i-1] = true
	}
	return suspect
}
