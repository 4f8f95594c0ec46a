package watch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
)

// AnyAddrMetrics is the one non-loopback --metrics-addr host accepted:
// the endpoint has no authentication, so it listens beyond this machine
// only when asked for every interface in so many words.
const AnyAddrMetrics = "0.0.0.0"

// ResolveMetricsAddr checks --metrics-addr: host:port or :port (then on
// loopback), the host loopback or exactly 0.0.0.0.
func ResolveMetricsAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: --metrics-addr %q: want HOST:PORT or :PORT (%v)", fault.ErrConfig, addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%w: --metrics-addr %q: port %q is not 0-65535", fault.ErrConfig, addr, port)
	}
	switch {
	case host == "" || host == "localhost":
		return net.JoinHostPort("127.0.0.1", port), nil
	case host == AnyAddrMetrics:
		return addr, nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%w: --metrics-addr %q: the endpoint has no authentication, so it listens on loopback only; give %s:%s to serve it on every interface",
			fault.ErrConfig, addr, AnyAddrMetrics, port)
	}
	return addr, nil
}

// liveCell is the cell under way as the metrics show it: the server's
// GET and error counters read once a second, their rates over the last
// second and the mean latency they imply.
type liveCell struct {
	running        bool
	getsPerSec     float64
	errorsPerSec   float64
	latencySeconds float64 // mean, by Little's law: GETs in flight ÷ GET/s
	gets, errors   int64   // since the cell began
}

// metricsServer serves the run's progress and the live cell in the
// Prometheus text format.
type metricsServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// startMetrics listens on addr (resolved) and serves /metrics from w.
func startMetrics(addr string, w *status) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(watchCollector{w})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --metrics-addr %s: %v", fault.ErrConfig, addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		m.srv.Serve(ln)
	}()
	return m, nil
}

// Addr is where the endpoint listens.
func (m *metricsServer) Addr() string { return m.ln.Addr().String() }

// Close stops the endpoint, waiting for its goroutine.
func (m *metricsServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.srv.Shutdown(ctx)
	<-m.done
}

var (
	descInfo = prometheus.NewDesc("tierbench_run_info", "The run under way: 1, labelled with its id, state, phase, row and cell.",
		[]string{"run_id", "state", "phase", "row", "cell"}, nil)
	descCellsDone  = prometheus.NewDesc("tierbench_run_cells_done", "Measured passes (cells × passes) finished.", nil, nil)
	descCellsTotal = prometheus.NewDesc("tierbench_run_cells_total", "Passes the run measures in all.", nil, nil)
	descRow        = prometheus.NewDesc("tierbench_run_row", "The row under way, from 1; 0 before the first.", nil, nil)
	descRows       = prometheus.NewDesc("tierbench_run_rows", "Rows of the run's table.", nil, nil)
	descETA        = prometheus.NewDesc("tierbench_run_eta_seconds", "Estimate of the seconds left, every phase counted (docs/watching-a-run.md).", nil, nil)
	descElapsed    = prometheus.NewDesc("tierbench_run_elapsed_seconds", "Seconds since the run began.", nil, nil)
	descRunning    = prometheus.NewDesc("tierbench_cell_running", "1 while a measured cell runs, else 0.", nil, nil)
	descGetRate    = prometheus.NewDesc("tierbench_cell_gets_per_second", "GETs the server answered over the last second of the cell under way.", nil, nil)
	descErrRate    = prometheus.NewDesc("tierbench_cell_errors_per_second", "Error replies of the server over the last second of the cell under way.", nil, nil)
	descLatency    = prometheus.NewDesc("tierbench_cell_get_latency_seconds", "Mean GET latency of the cell under way over the last second: GETs in flight ÷ GET/s (Little's law).", nil, nil)
	descGets       = prometheus.NewDesc("tierbench_cell_gets_total", "GETs the server answered since the cell under way began.", nil, nil)
	descErrors     = prometheus.NewDesc("tierbench_cell_errors_total", "Error replies since the cell under way began.", nil, nil)
)

// watchCollector turns the run's status into metrics at each scrape.
type watchCollector struct{ w *status }

func (c watchCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descCellsDone, descCellsTotal, descRow, descRows, descETA, descElapsed,
		descRunning, descGetRate, descErrRate, descLatency, descGets, descErrors} {
		ch <- d
	}
}

func (c watchCollector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	s := c.w.snapshot(now)
	c.w.mu.Lock()
	live := c.w.live
	c.w.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descInfo, 1, s.RunID, s.State, s.Phase, s.Row, s.Cell)
	gauge(descCellsDone, float64(s.CellsDone))
	gauge(descCellsTotal, float64(s.CellsTotal))
	gauge(descRow, float64(s.RowIndex))
	gauge(descRows, float64(s.Rows))
	gauge(descETA, s.ETASeconds)
	if !s.StartedAt.IsZero() {
		gauge(descElapsed, now.Sub(s.StartedAt).Seconds())
	}
	running := 0.0
	if live.running {
		running = 1
	}
	gauge(descRunning, running)
	gauge(descGetRate, live.getsPerSec)
	gauge(descErrRate, live.errorsPerSec)
	gauge(descLatency, live.latencySeconds)
	ch <- prometheus.MustNewConstMetric(descGets, prometheus.CounterValue, float64(live.gets))
	ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(live.errors))
}

// serverCounts reads the GETs (keyspace hits + misses) and error replies
// (total_error_replies, else protocol_errors) a node's INFO stats holds.
func serverCounts(ctx context.Context, p rig.ServerProbe) (gets, errs int64, err error) {
	stats, err := rig.ProbeInfo(ctx, p, "stats")
	if err != nil {
		return 0, 0, err
	}
	hits, err1 := strconv.ParseInt(stats["keyspace_hits"], 10, 64)
	misses, err2 := strconv.ParseInt(stats["keyspace_misses"], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("watch: INFO stats: keyspace_hits/misses: %w", err)
	}
	e, perr := strconv.ParseInt(stats["total_error_replies"], 10, 64)
	if perr != nil {
		e, _ = strconv.ParseInt(stats["protocol_errors"], 10, 64)
	}
	return hits + misses, e, nil
}

// Cell reads the row's servers' counters once a second while a cell
// runs, for the metrics, until the returned stop is called; inFlight is
// the GETs the cell keeps in flight (threads × batch), for the latency.
// Only with --metrics-addr: otherwise it reads nothing, so a run not
// watched sends the server nothing but its cells.
func (w *Run) Cell(ctx context.Context, tgt target.Server, inFlight int) (stop func()) {
	if w.metrics == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		read := func() (int64, int64, bool) {
			var g, e int64
			for _, n := range tgt.Nodes {
				rctx, rcancel := context.WithTimeout(ctx, 900*time.Millisecond)
				ng, ne, err := serverCounts(rctx, n.Probe)
				rcancel()
				if err != nil {
					return 0, 0, false
				}
				g, e = g+ng, e+ne
			}
			return g, e, true
		}
		g0, e0, ok := read()
		if !ok {
			return
		}
		w.status.mu.Lock()
		w.status.live = liveCell{running: true}
		w.status.mu.Unlock()
		lastG, lastE, last := g0, e0, time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			g, e, ok := read()
			if !ok {
				continue
			}
			now := time.Now()
			secs := now.Sub(last).Seconds()
			l := liveCell{running: true, gets: g - g0, errors: e - e0,
				getsPerSec: float64(g-lastG) / secs, errorsPerSec: float64(e-lastE) / secs}
			if l.getsPerSec > 0 {
				l.latencySeconds = float64(inFlight) / l.getsPerSec
			}
			w.status.mu.Lock()
			w.status.live = l
			w.status.mu.Unlock()
			lastG, lastE, last = g, e, now
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		w.status.mu.Lock()
		w.status.live.running = false
		w.status.mu.Unlock()
	}
}
