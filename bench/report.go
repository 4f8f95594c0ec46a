package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/freeze"
)

// Report is the --json document: the load (null when skipped), one cell per
// offline thread count, and the online run (null in offline mode). The field
// names are a contract: the orchestrator and other tools read them.
type Report struct {
	Load   *LoadResult   `json:"load"`
	Cells  []CellResult  `json:"cells"`
	Online *OnlineResult `json:"online"`
	// TLS is what the connections agreed with the server; absent over
	// plain TCP.
	TLS *TLSInfo `json:"tls,omitempty"`
}

// TLSInfo is the TLS of a run's connections (the first one's: all speak
// to one server, or to one cluster's nodes).
type TLSInfo struct {
	Version     string `json:"version"`      // "TLS 1.3"
	CipherSuite string `json:"cipher_suite"` // "TLS_AES_128_GCM_SHA256"
	ServerName  string `json:"server_name"`  // the name sent and checked
	Verified    bool   `json:"verified"`     // false with --insecure: the server's certificate was not checked
}

// LoadResult is the MSET load phase. Acknowledged counts keys whose MSET was
// answered +OK: an MSET of k keys acknowledges k.
type LoadResult struct {
	Keys         int64   `json:"keys"`
	Acknowledged int64   `json:"acknowledged"`
	Seconds      float64 `json:"seconds"`
	OpsPerSec    float64 `json:"ops_per_sec"`
	Threads      int     `json:"threads"`
	Batch        int     `json:"batch"`
	Errors       int64   `json:"errors"`
	FirstError   string  `json:"first_error"`
	Incomplete   bool    `json:"incomplete"`
	// Cluster is the per-node breakdown with --cluster-bench.
	Cluster *ClusterResult `json:"cluster,omitempty"`
}

// CellResult is one offline cell: one op at one thread count. Ops counts
// keys answered (hits + misses + errors); OpsPerSec is Ops / Seconds, so a
// miss is in the throughput but always reported beside it.
type CellResult struct {
	Op               string  `json:"op"`
	Threads          int     `json:"threads"`
	Batch            int     `json:"batch"`
	Pipeline         string  `json:"pipeline"` // batch or window (Config.Pipeline)
	Ops              int64   `json:"ops"`
	Seconds          float64 `json:"seconds"`
	OpsPerSec        float64 `json:"ops_per_sec"`
	Hits             int64   `json:"hits"`
	Misses           int64   `json:"misses"`
	Errors           int64   `json:"errors"`
	Mismatches       int64   `json:"mismatches"`
	Verified         bool    `json:"verified"`
	FirstError       string  `json:"first_error"`
	BytesSent        int64   `json:"bytes_sent"`
	BytesReceived    int64   `json:"bytes_received"`
	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	ClientSaturated  bool    `json:"client_saturated"`
	// HostStealShare is the share of this host's CPU time, every CPU's,
	// that the hypervisor took during the window (/proc/stat's steal);
	// nil where the kernel does not count it.
	HostStealShare *float64 `json:"host_steal_share,omitempty"`
	Incomplete     bool     `json:"incomplete"`
	Zipf           bool     `json:"zipf"` // KeyDist is zipf
	// KeyDist is the key distribution, spelled as --key-dist takes it
	// ("uniform", "zipf:0.99", …).
	KeyDist string `json:"key_dist"`
	// KeysRedrawn: each batch's keys were drawn anew once it was
	// answered (skewed distributions), so the cell drew from every key
	// of the distribution; false: the cell cycled its pre-built keys.
	KeysRedrawn bool `json:"keys_redrawn"`
	// PrebuiltOpsPerThread is how many requests (keys drawn in advance)
	// each thread cycles through.
	PrebuiltOpsPerThread int `json:"prebuilt_ops_per_thread"`
	// ClientLoops is how many event-loop threads drove the connections;
	// 0 for --cluster-bench, which runs a goroutine per thread.
	ClientLoops int `json:"client_loops"`
	// IdleWait is how the loops waited with nothing to read
	// (Config.IdleNap): "auto" (naps sized from the waits measured),
	// "nap" (IdleNapMicros, then park) or "park" (at once).
	IdleWait string `json:"client_idle_wait,omitempty"`
	// IdleNapMicros is the loops' fixed idle nap before parking; 0 with
	// "auto" and "park".
	IdleNapMicros float64 `json:"client_idle_nap_us,omitempty"`
	// IdleWaits counts the times a loop found nothing ready, IdleNaps
	// and IdleParks how many naps and parks those waits took (every
	// loop's, summed).
	IdleWaits int64 `json:"client_idle_waits,omitempty"`
	IdleNaps  int64 `json:"client_idle_naps,omitempty"`
	IdleParks int64 `json:"client_idle_parks,omitempty"`
	// FirstNapMicros ("auto") is the loops' first nap after going idle
	// when the cell ended, the median over loops: about the wait for
	// replies the loops measured.
	FirstNapMicros float64 `json:"client_first_nap_us,omitempty"`
	// Cluster is the per-node breakdown with --cluster-bench.
	Cluster *ClusterResult `json:"cluster,omitempty"`
	Window  *Window        `json:"window,omitempty"`
	// Mix is the per-operation breakdown of an --op-mix cell, whose Op
	// is the mix ("GET:95,SET:5"). There Ops counts operations (an RMW
	// is one, an MGET one per key: the sum of the Mix entries' ops) while
	// Hits, Misses and Errors count replies (an RMW has two).
	Mix []OpResult `json:"mix,omitempty"`
}

// OpResult is one operation of an --op-mix cell. Ops counts operations,
// Hits, Misses and Errors replies, as in CellResult. LatencyMicros runs
// from the first write of the op's batch to the wake-up that read its
// reply (an RMW: its SET's reply), so it includes the time the op waited
// behind the batch's earlier ones, as pipelined latency does.
type OpResult struct {
	Op            string         `json:"op"`
	Percent       int            `json:"percent"`
	Ops           int64          `json:"ops"`
	OpsPerSec     float64        `json:"ops_per_sec"`
	Hits          int64          `json:"hits"`
	Misses        int64          `json:"misses"`
	Errors        int64          `json:"errors"`
	Mismatches    int64          `json:"mismatches"`
	LatencyMicros LatencySummary `json:"latency_us"`
}

// Window is the shared measurement window of a --start-at run.
type Window struct {
	StartUnixMs int64   `json:"start_unix_ms"`
	Seconds     float64 `json:"seconds"`
	// LateSeconds is how long after the start the client was ready; its
	// connections measured only the rest of the window.
	LateSeconds float64 `json:"late_seconds"`
}

// OnlineResult is the --online run as a whole.
type OnlineResult struct {
	Workload         []WorkloadShare `json:"workload"`
	Threads          int             `json:"threads"`
	InFlight         int             `json:"itp"`
	RateOpsPerSec    float64         `json:"rate"` // offered load; 0: closed loop
	Ops              int64           `json:"ops"`
	Seconds          float64         `json:"seconds"`
	OpsPerSec        float64         `json:"ops_per_sec"`
	Hits             int64           `json:"hits"`
	Misses           int64           `json:"misses"`
	Errors           int64           `json:"errors"`
	Mismatches       int64           `json:"mismatches"`
	Verified         bool            `json:"verified"`
	FirstError       string          `json:"first_error"`
	ClientCPUSeconds float64         `json:"client_cpu_seconds"`
	ClientSaturated  bool            `json:"client_saturated"`
	// HostStealShare is CellResult's, over the recorded window (after
	// the warm-up).
	HostStealShare *float64 `json:"host_steal_share,omitempty"`
	// HostBusyShare is the share of this host's CPU time, every CPU's,
	// that something ran in over the same window (the client, the server
	// when it is here, anything else): a virtual disk may be slower while
	// the guest's CPUs are busy, and the ladder holds fio to this load.
	HostBusyShare *float64 `json:"host_busy_share,omitempty"`
	// HostFreezes are the times this machine's CPUs did not run at all
	// over the same window (package freeze): a host's CPU quota running
	// out, which steal does not count. Absent where perf events are not
	// allowed (kernel.perf_event_paranoid above 0 without CAP_PERFMON).
	HostFreezes   *freeze.Stats  `json:"host_freezes,omitempty"`
	Incomplete    bool           `json:"incomplete"`
	LatencyMicros LatencySummary `json:"latency_us"`
	// Histogram is the whole run's latency HdrHistogram (nanoseconds) in
	// the library's compressed V2 encoding, base64: merging those of
	// several clients gives the percentiles of all their ops.
	Histogram string  `json:"histogram"`
	Window    *Window `json:"window,omitempty"`
	// Warmup is the unrecorded start (--warmup-seconds), counted apart:
	// its error replies and mismatches still fail the run.
	Warmup WarmupResult `json:"warmup"`
	// Pacing is how closely a fixed-rate run kept its schedule; nil for a
	// closed loop.
	Pacing *Pacing `json:"pacing,omitempty"`
}

// Pacing is how late a fixed-rate run sent: how long after its intended
// time each recorded op was sent, the client's own part of that, and the
// ops due in the window it never sent.
type Pacing struct {
	// LatenessMicros is from each op's intended time to its send: the
	// client's own delay, and with every in-flight slot taken, the wait
	// for the server's reply that freed one.
	LatenessMicros LatencySummary `json:"lateness_us"`
	// OwnLatenessMicros is the client's part alone: from the time the op
	// could be sent (its intended time, or the reply that freed a slot
	// for it) to its send.
	OwnLatenessMicros LatencySummary `json:"own_lateness_us"`
	// Due is the ops due in the recorded window, up to the stop; Unsent
	// those never sent, and HeldUnsent those of them that a connection
	// with every in-flight slot taken at the stop held back: the server's
	// delay, like the lateness a full window causes.
	Due        int64 `json:"due"`
	Unsent     int64 `json:"unsent"`
	HeldUnsent int64 `json:"held_unsent"`
	// ClientBound: the client's own lateness p99 exceeded clientBoundShare
	// of the median latency, or that share of the due ops went unsent with
	// a slot free. A server slower than the schedule, which fills the
	// in-flight slots, does not make a run client-bound: its delay is in
	// the latency.
	ClientBound bool `json:"client_bound"`
	// Loops is how many paced event loops sent (0: Go's timers, over TLS);
	// SpinSeconds the CPU time they spent spinning towards due times, which
	// the run's client CPU includes and client_saturated does not count.
	Loops       int     `json:"loops,omitempty"`
	SpinSeconds float64 `json:"spin_seconds,omitempty"`
	// OwnCPUs: the loops were told no server shares their CPUs
	// (Config.OwnCPUs) and so spun through their gaps.
	OwnCPUs bool `json:"own_cpus,omitempty"`
}

// WarmupResult counts the ops of the online warm-up, which are sent at the
// offered rate but kept out of the latencies and the figures above.
type WarmupResult struct {
	Seconds    float64 `json:"seconds"`
	Ops        int64   `json:"ops"`
	Hits       int64   `json:"hits"`
	Misses     int64   `json:"misses"`
	Errors     int64   `json:"errors"`
	Mismatches int64   `json:"mismatches"`
}

// WorkloadShare is one command of the online mix.
type WorkloadShare struct {
	Op      string `json:"op"`
	Percent int    `json:"percent"`
}

// LatencySummary is the latency distribution in microseconds. With a
// --rate, latency runs from each op's intended send time.
type LatencySummary struct {
	Min  float64 `json:"min"`
	P5   float64 `json:"p5"`
	P50  float64 `json:"p50"`
	Avg  float64 `json:"avg"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// cpuSeconds is this process's user+system CPU time so far.
func cpuSeconds() float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// saturated reports whether the client used at least 90 % of the CPUs its
// threads could run on: then it, not the server, may be the limit.
func saturated(cpuSec, wallSec float64, threads int) bool {
	if wallSec <= 0 {
		return false
	}
	usable := float64(min(threads, runtime.GOMAXPROCS(0)))
	return cpuSec/wallSec >= 0.9*usable
}

func printTLS(w io.Writer, t *TLSInfo) {
	how := "certificate verified for " + t.ServerName
	if !t.Verified {
		how = "certificate NOT verified (--insecure)"
	}
	fmt.Fprintf(w, "[TLS]: %s, %s, %s\n", t.Version, t.CipherSuite, how)
}

func printLoad(w io.Writer, l *LoadResult) {
	fmt.Fprintf(w, "[Total time]: %.2f ms for %d ops\n", l.Seconds*1e3, l.Acknowledged+l.Errors)
	fmt.Fprintf(w, "[Acknowledged]: %d of %d keys (MSET, %d threads, %d keys per MSET)\n", l.Acknowledged, l.Keys, l.Threads, l.Batch)
	if l.Errors > 0 {
		fmt.Fprintf(w, "[Errors]: %d keys refused; first: %s\n", l.Errors, l.FirstError)
	}
	if l.Incomplete {
		fmt.Fprintln(w, "[Incomplete]: the load stopped early")
	}
	printClusterLines(w, l.Cluster)
}

func printCell(w io.Writer, c *CellResult) {
	keys := c.KeyDist
	if c.KeysRedrawn {
		keys += " (redrawn as each batch is answered)"
	}
	fmt.Fprintf(w, "Operation type: %s, threads: %d, batch: %d, keys: %s, %d requests pre-built per thread\n", c.Op, c.Threads, c.Batch, keys, c.PrebuiltOpsPerThread)
	fmt.Fprintf(w, "[Total time]: %.2f ms for %d ops\n", c.Seconds*1e3, c.Ops)
	fmt.Fprintf(w, "[Throughput]: %.0f ops/sec\n", c.OpsPerSec)
	printMix(w, c)
	fmt.Fprintf(w, "[Hits]: %d [Misses]: %d [Errors]: %d\n", c.Hits, c.Misses, c.Errors)
	if c.Misses > 0 && (c.Op == "GET" || c.Op == "MGET") {
		fmt.Fprintf(w, "[Warning]: %.2f%% of reads were misses: those keys were never loaded, and a miss is far cheaper than a hit\n", 100*float64(c.Misses)/float64(max(c.Ops, 1)))
	}
	if c.Errors > 0 {
		fmt.Fprintf(w, "[First error]: %s\n", c.FirstError)
	}
	if c.Verified {
		fmt.Fprintf(w, "[Verify]: %d mismatched values, %d misses, %d errors\n", c.Mismatches, c.Misses, c.Errors)
	}
	fmt.Fprintf(w, "[Client CPU]: %.2f s user+sys over %.2f s wall (%.2f CPUs)", c.ClientCPUSeconds, c.Seconds, c.ClientCPUSeconds/max(c.Seconds, 1e-9))
	if c.ClientSaturated {
		fmt.Fprint(w, " SATURATED: the client may be the bottleneck; the server may be faster than this")
	}
	fmt.Fprintln(w)
	printSteal(w, c.HostStealShare)
	if c.Incomplete {
		fmt.Fprintln(w, "[Incomplete]: the cell stopped early; the figures cover what was done")
	}
	printClusterLines(w, c.Cluster)
}

// latencySummary turns a histogram of nanoseconds into microseconds.
func latencySummary(h *hdrhistogram.Histogram) LatencySummary {
	if h.TotalCount() == 0 {
		return LatencySummary{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return LatencySummary{
		Min:  us(h.Min()),
		P5:   us(h.ValueAtQuantile(5)),
		P50:  us(h.ValueAtQuantile(50)),
		Avg:  h.Mean() / 1e3,
		P95:  us(h.ValueAtQuantile(95)),
		P99:  us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)),
		Max:  us(h.Max()),
	}
}

const onlineHeader = "min (us); 5th (us); median (us); avg (us); 95th (us); 99th (us); 99.9th (us); total_ops; iter_tops; tpt (Kops/sec)"

func printOnlineRow(w io.Writer, l LatencySummary, totalOps, iterOps int64, iterSeconds float64) {
	fmt.Fprintf(w, "%.1f; %.1f; %.1f; %.1f; %.1f; %.1f; %.1f; %d; %d; %.2f\n",
		l.Min, l.P5, l.P50, l.Avg, l.P95, l.P99, l.P999, totalOps, iterOps, float64(iterOps)/max(iterSeconds, 1e-9)/1e3)
}

func printOnlineSummary(w io.Writer, r *OnlineResult) {
	fmt.Fprintf(w, "[Total]: %d ops in %.2f s: %.0f ops/sec, latency us min %.1f median %.1f 99th %.1f 99.9th %.1f max %.1f\n",
		r.Ops, r.Seconds, r.OpsPerSec, r.LatencyMicros.Min, r.LatencyMicros.P50, r.LatencyMicros.P99, r.LatencyMicros.P999, r.LatencyMicros.Max)
	if r.RateOpsPerSec > 0 {
		fmt.Fprintf(w, "[Rate]: offered %.0f ops/sec; latency counted from each op's intended send time\n", r.RateOpsPerSec)
	}
	if pc := r.Pacing; pc != nil {
		fmt.Fprintf(w, "[Pacing]: sends late by p50 %.1f p99 %.1f max %.1f us after their intended time, the client's own part p99 %.1f max %.1f us (the rest waited for a reply to free an in-flight slot); %d of the window's %d ops never sent",
			pc.LatenessMicros.P50, pc.LatenessMicros.P99, pc.LatenessMicros.Max, pc.OwnLatenessMicros.P99, pc.OwnLatenessMicros.Max, pc.Unsent, pc.Due)
		if pc.HeldUnsent > 0 {
			fmt.Fprintf(w, ", %d of them held by connections whose in-flight slots were all taken at the end", pc.HeldUnsent)
		}
		if pc.ClientBound {
			fmt.Fprintf(w, " CLIENT-BOUND: the client's own lateness p99 above %.0f %% of the median latency, or that share of the ops unsent with a slot free", 100*clientBoundShare)
		}
		fmt.Fprintln(w)
	}
	if r.Warmup.Seconds > 0 {
		fmt.Fprintf(w, "[Warm-up]: %d ops in the first %.2f s, sent alike but not recorded: the figures cover the %.2f s after\n", r.Warmup.Ops, r.Warmup.Seconds, r.Seconds)
	}
	fmt.Fprintf(w, "[Hits]: %d [Misses]: %d [Errors]: %d\n", r.Hits, r.Misses, r.Errors)
	if r.Errors > 0 {
		fmt.Fprintf(w, "[First error]: %s\n", r.FirstError)
	}
	if r.Verified {
		fmt.Fprintf(w, "[Verify]: %d mismatched values, %d misses, %d errors\n", r.Mismatches, r.Misses, r.Errors)
	}
	fmt.Fprintf(w, "[Client CPU]: %.2f s user+sys over %.2f s wall", r.ClientCPUSeconds, r.Seconds)
	if r.ClientSaturated {
		fmt.Fprint(w, " SATURATED: the client may be adding latency")
	}
	fmt.Fprintln(w)
	printSteal(w, r.HostStealShare)
	printFreezes(w, r.HostFreezes, r.Seconds)
	if r.Incomplete {
		fmt.Fprintln(w, "[Incomplete]: the run stopped early; the figures cover what was done")
	}
}
