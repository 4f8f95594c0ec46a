package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// The clients of a phase across hosts: the cell's connections split over
// the client hosts, every client started at one shared time and measuring
// the same window; offline their counts are summed, online their
// HdrHistograms merged.

// LeadTime is how far ahead of now a cell's shared start is set:
// time for every engine to create its client container and for the
// clients to connect and build their requests, with room for a loaded
// host: a client ready after the shared start measures nothing of its
// window.
const LeadTime = 4 * time.Second

// SplitThreads divides a cell's connections over n client hosts: equal
// shares, the remainder one each to the first hosts.
func SplitThreads(threads, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = threads / n
		if i < threads%n {
			out[i]++
		}
	}
	return out
}

// clientOut is one client's run of a phase.
type clientOut struct {
	host    string
	threads int
	pl      results.Placement
	rep     Report
	raw     []byte
	err     error
}

// Report is the part of a client's bench JSON (kept under
// hosts/<name>/clients/) the fleet reads beyond rig.BenchOutput: the
// window and the online run.
type Report struct {
	Cells []struct {
		rig.BenchCell
		Window *Window `json:"window"`
	} `json:"cells"`
	Online *OnlineRun `json:"online"`
}

// OnlineRun is what a client host's online run says of its window.
type OnlineRun struct {
	Ops            int64                `json:"ops"`
	Histogram      string               `json:"histogram"`
	Window         *Window              `json:"window"`
	Warmup         latency.OnlineWarmup `json:"warmup"`
	HostStealShare *float64             `json:"host_steal_share"`
}

// Window is the shared window a client measured, and how late after
// its start the client was ready.
type Window struct {
	StartUnixMs int64   `json:"start_unix_ms"`
	Seconds     float64 `json:"seconds"`
	LateSeconds float64 `json:"late_seconds"`
}

// runClientsOnce runs one phase on every client host with its share of
// threads, all starting at one time, and keeps each client's JSON under
// hosts/<name>/clients/. The first client that fails stops the others and
// is the error, naming its host. warmup is the seconds of unrecorded
// warm-up extra asks of an online phase (bench --warmup-seconds): bench
// runs them just before the shared start, so the start is set that much
// later and every client still has the whole lead time to get ready.
// It does not judge the clients' readiness: runClients does.
func (f *Hosts) runClientsOnce(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds, warmup int, extra []string, lead time.Duration) ([]clientOut, error) {
	h := f.Driver
	shares := SplitThreads(threads, len(h.Clients))
	lead += time.Duration(warmup) * time.Second
	start := time.Now().Add(lead).Truncate(time.Millisecond)
	limit := lead + rig.PhaseLimit(seconds)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	outs := make([]clientOut, len(shares))
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, n := range shares {
		d := h.Clients[i]
		outs[i] = clientOut{host: d.Endpoint.Name, threads: n}
		if n == 0 {
			continue
		}
		args := append(f.env.BenchArgs(tgt), "-s", "-t", strconv.Itoa(n), "--runtime", strconv.Itoa(seconds),
			"--start-at", strconv.FormatInt(start.UnixMilli(), 10))
		args = append(args, extra...)
		spec := rig.ClientSpec{Name: name + "-" + d.Endpoint.Name, Host: i, Args: args,
			LogPath: filepath.Join(f.env.Bundle, results.DirLogs, fmt.Sprintf("client-%s-%s-%s.log", f.env.RowFile(row), name, d.Endpoint.Name))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[i]
			o.raw, o.pl, o.err = h.RunClient(pctx, spec)
			if o.err == nil {
				doc, err := rig.JSONDocument(o.raw)
				if err == nil {
					err = json.Unmarshal(doc, &o.rep)
				}
				if err != nil {
					o.err = fmt.Errorf("host %s: client %s: bench output: %w", d.Endpoint.Name, spec.Name, err)
				}
			}
			if o.err != nil {
				once.Do(func() { first = o.err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		if ctx.Err() == nil && pctx.Err() != nil && errors.Is(first, context.DeadlineExceeded) {
			return nil, fmt.Errorf("fleet: the %d s phase at t=%d did not end within %v: the server stopped answering (see logs/)", seconds, threads, limit)
		}
		return nil, first
	}
	for i := range outs {
		if outs[i].threads == 0 {
			continue
		}
		dir := filepath.Join(f.env.Bundle, results.DirHosts, outs[i].host, "clients")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("fleet: bundle: %w", err)
		}
		if err := results.WriteFile(dir, fmt.Sprintf("%s-%s-%s.json", row.Backend, row.Pin, name), outs[i].raw); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// maxLeadDoublings bounds how often a phase is run again with twice the
// lead because a client was not ready at the shared start.
const maxLeadDoublings = 3

// runClients runs one phase on every client host from one shared start
// (runClientsOnce). A client that was ready later than a tenth of the
// window after the start measured only part of it, and the clients'
// windows no longer coincide: the phase is run again, with the lead
// doubled and kept for the run's later phases, up to maxLeadDoublings
// times; then the phase fails naming the host, rather than recording a
// window some clients missed.
func (f *Hosts) runClients(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds, warmup int, extra []string) ([]clientOut, error) {
	h := f.Driver
	if h.Lead == 0 {
		h.Lead = LeadTime
	}
	for attempt := 0; ; attempt++ {
		outs, err := f.runClientsOnce(ctx, row, tgt, name, threads, seconds, warmup, extra, h.Lead)
		if err != nil {
			return nil, err
		}
		host, late := latestClient(outs)
		if late <= 0.1*float64(seconds) {
			return outs, nil
		}
		if attempt == maxLeadDoublings {
			return nil, fmt.Errorf("fleet: host %s: the client was ready %.2f s after the shared start of a %d s window even with a %v lead: the host is too loaded to measure a shared window", host, late, seconds, h.Lead)
		}
		h.Lead *= 2
		f.env.Printf("  host %s: the client was ready %.2f s after the shared start: the phase is run again with a %v lead\n", host, late, h.Lead)
	}
}

// latestClient is the client host that was ready last after its phase's
// shared start, and by how many seconds.
func latestClient(outs []clientOut) (string, float64) {
	host, late := "", 0.0
	for _, o := range outs {
		var w *Window
		switch {
		case o.threads == 0:
		case o.rep.Online != nil:
			w = o.rep.Online.Window
		case len(o.rep.Cells) == 1:
			w = o.rep.Cells[0].Window
		}
		if w != nil && w.LateSeconds > late {
			host, late = o.host, w.LateSeconds
		}
	}
	return host, late
}

// bench runs one offline GET phase over the client hosts and sums it:
// ops, hits, misses and errors are the sums of the clients' counts inside
// the shared window, and the rate is that sum over the window.
func (f *Hosts) bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	batch := f.env.Config.BatchOf(row)
	outs, err := f.runClients(ctx, row, tgt, name, threads, seconds, 0, append(slices.Clone(f.env.CellOps), "-b", strconv.Itoa(batch)))
	if err != nil {
		return rig.BenchCell{}, results.Placement{}, err
	}
	// The pass record's client placement is the first client's; each
	// client's own is in its share.
	pl := outs[0].pl
	sum := rig.BenchCell{Op: "GET", Threads: threads, Batch: batch, Seconds: float64(seconds)}
	for _, o := range outs {
		if o.threads == 0 {
			continue
		}
		if len(o.rep.Cells) != 1 || o.rep.Cells[0].Window == nil {
			return rig.BenchCell{}, pl, fmt.Errorf("fleet: host %s: client %s reported %d cells without a window, want one windowed cell", o.host, name, len(o.rep.Cells))
		}
		c := o.rep.Cells[0]
		if c.Window.Seconds != float64(seconds) {
			return rig.BenchCell{}, pl, fmt.Errorf("fleet: host %s: client %s measured a %v s window, want %d s", o.host, name, c.Window.Seconds, seconds)
		}
		sum.Ops += c.Ops
		sum.Mix = append(sum.Mix, c.Mix...)
		sum.Hits += c.Hits
		sum.Misses += c.Misses
		sum.Errors += c.Errors
		sum.ClientCPUSeconds += c.ClientCPUSeconds
		sum.ClientSaturated = sum.ClientSaturated || c.ClientSaturated
		sum.HostStealShare = results.MaxShare(sum.HostStealShare, c.HostStealShare)
		sum.Incomplete = sum.Incomplete || c.Incomplete
		sum.Clients = append(sum.Clients, results.ClientShare{Host: o.host, Threads: o.threads, Ops: c.Ops, Hits: c.Hits, Misses: c.Misses, Errors: c.Errors,
			OpsPerSec: c.OpsPerSec, LateSeconds: c.Window.LateSeconds, Placement: o.pl,
			JSON: filepath.Join(results.DirHosts, o.host, "clients", fmt.Sprintf("%s-%s-%s.json", row.Backend, row.Pin, name))})
	}
	sum.OpsPerSec = float64(sum.Ops) / float64(seconds)
	return sum, pl, nil
}

// latencyDone reports whether hosts/latency.jsonl holds row's phase.
func latencyDone(dir string, row results.Row) (bool, error) {
	done, err := results.ReadHostsLatency(dir)
	return slices.ContainsFunc(done, func(l results.HostsLatencyRecord) bool { return l.Row == row }), err
}

// latency runs the row's online phase (closed loop, one op in flight
// per connection, after the same unrecorded warm-up as the fixed-rate
// steps) over the client hosts and merges their histograms with the
// library's Merge: percentiles of all the ops, never averages of the
// clients' percentiles. A phase hosts/latency.jsonl already holds is kept
// (--resume).
func (f *Hosts) latency(ctx context.Context, row results.Row, tgt target.Server) error {
	if done, err := latencyDone(f.env.Bundle, row); done || err != nil {
		return err
	}
	h, cfg := f.Driver, f.env.Config
	threads := max(len(h.Clients), min(cfg.Threads[0], 8))
	f.env.Printf("%s %s: latency, %d s online at t=%d over %d client host(s) after a %d s unrecorded warm-up\n", human.Title(row.Backend), row.Label,
		cfg.CellSeconds, threads, len(h.Clients), results.LatencyWarmupSeconds)
	outs, err := f.runClients(ctx, row, tgt, "latency", threads, cfg.CellSeconds, results.LatencyWarmupSeconds, latency.OnlineGET(1, 0))
	if err != nil {
		return fmt.Errorf("fleet: latency phase of %s %s: %w", row.Backend, row.Label, err)
	}
	rec := results.HostsLatencyRecord{Row: row, Threads: threads, Seconds: cfg.CellSeconds, Time: time.Now().UTC()}
	var merged *hdrhistogram.Histogram
	for _, o := range outs {
		if o.threads == 0 {
			continue
		}
		if o.rep.Online == nil {
			return fmt.Errorf("fleet: host %s: the latency client reported no online run", o.host)
		}
		hist, err := hdrhistogram.Decode([]byte(o.rep.Online.Histogram))
		if err != nil {
			return fmt.Errorf("fleet: host %s: the latency client's histogram: %w", o.host, err)
		}
		if merged == nil {
			merged = hdrhistogram.New(hist.LowestTrackableValue(), hist.HighestTrackableValue(), int(hist.SignificantFigures()))
		}
		if dropped := merged.Merge(hist); dropped > 0 {
			return fmt.Errorf("fleet: host %s: %d latencies outside the merged histogram's range", o.host, dropped)
		}
		w := o.rep.Online.Warmup
		if len(rec.Clients) == 0 || w.Seconds < rec.WarmupSeconds {
			rec.WarmupSeconds = w.Seconds
		}
		rec.WarmupOps += w.Ops
		rec.HostStealShare = results.MaxShare(rec.HostStealShare, o.rep.Online.HostStealShare)
		rec.Clients = append(rec.Clients, results.ClientShare{Host: o.host, Threads: o.threads, Ops: hist.TotalCount(),
			JSON: filepath.Join(results.DirHosts, o.host, "clients", fmt.Sprintf("%s-%s-latency.json", row.Backend, row.Pin))})
	}
	if merged == nil {
		return fmt.Errorf("fleet: latency phase of %s %s: no client ran", row.Backend, row.Label)
	}
	us := func(q float64) float64 { return float64(merged.ValueAtQuantile(q)) / 1e3 }
	rec.Count = merged.TotalCount()
	rec.P50us, rec.P99us, rec.P999us, rec.Maxus = us(50), us(99), us(99.9), float64(merged.Max())/1e3
	f.env.Printf("  latency µs p50 %.1f p99 %.1f p99.9 %.1f over %d ops (%d clients merged)\n", rec.P50us, rec.P99us, rec.P999us, rec.Count, len(rec.Clients))
	return appendJSONLine(filepath.Join(f.env.Bundle, results.DirHosts, results.FileHostsLatency), rec)
}

// appendJSONLine appends v as one line to path and syncs it.
func appendJSONLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	return errors.Join(err, f.Sync(), f.Close())
}
