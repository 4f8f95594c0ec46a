package results

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
)

// CeilingRecord is one line of ceilings.jsonl: fio measured again, at the
// observed disk depth of a cell that exceeded the ceiling, over the
// segment files the row's server had just read.
type CeilingRecord struct {
	Kind          string  `json:"kind"` // "ceiling"
	Schema        int     `json:"schema_version"`
	Row           Row     `json:"row"`
	Threads       int     `json:"threads"`
	CellOpsPerSec float64 `json:"cell_ops_per_sec"` // the cell's median that triggered it
	BaseIOPS      float64 `json:"base_iops"`        // the sweep's ceiling it exceeded
	// Depth is the cell's median disk depth rounded up; DepthSource is
	// "disk" for that, "throttle" when there was no disk evidence and the
	// server's throttle limit stood in.
	Depth          int     `json:"depth"`
	DepthSource    string  `json:"depth_source"`
	Jobs           int     `json:"jobs"`
	IODepth        int     `json:"iodepth"`
	BlockBytes     int     `json:"block_bytes"`
	Engine         string  `json:"engine"`
	RuntimeSeconds int     `json:"runtime_seconds"`
	IOPS           float64 `json:"iops"`
	ClatP50Us      float64 `json:"clat_p50_us"`
	ClatP99Us      float64 `json:"clat_p99_us"`
	Footprint      string  `json:"footprint"`
	Files          int     `json:"files"`
	FootprintBytes int64   `json:"footprint_bytes"`
	// CPUs is the cpuset fio ran pinned to, the pinned server's; "" free.
	CPUs string `json:"cpus,omitempty"`
	FioCost
}

// FioCost is what one fio run of a bundle's own (at a cell's depth) cost
// and under what host, flat in its record's JSON line.
type FioCost struct {
	// CPUMicrosPerRead, CPUSystemMicrosPerRead, CPUShare and CPUBound
	// are fio's CPU (fio.CPU).
	CPUMicrosPerRead       float64 `json:"cpu_us_per_read,omitempty"`
	CPUSystemMicrosPerRead float64 `json:"cpu_sys_us_per_read,omitempty"`
	CPUShare               float64 `json:"cpu_share,omitempty"`
	CPUBound               bool    `json:"cpu_bound,omitempty"`
	// StealShare is the hypervisor's share of the host's CPU time while
	// this fio ran; nil where not counted.
	StealShare *float64  `json:"steal_share,omitempty"`
	Error      string    `json:"error,omitempty"`
	Time       time.Time `json:"time"`
}

// SetCPU records what fio's own CPU said about the run.
func (c *FioCost) SetCPU(cpu fio.CPU) {
	c.CPUMicrosPerRead, c.CPUSystemMicrosPerRead = cpu.MicrosPerRead, cpu.SystemMicrosPerRead
	c.CPUShare, c.CPUBound = cpu.Share, cpu.Bound
}

// LatencyRecord is one line of latency.jsonl: one fixed-rate step.
type LatencyRecord struct {
	Kind   string `json:"kind"` // "latency"
	Schema int    `json:"schema_version"`
	Row    Row    `json:"row"`
	// Share of BestOpsPerSec offered; BestThreads measured that best.
	Share         float64 `json:"share"`
	BestOpsPerSec float64 `json:"best_ops_per_sec"`
	Threads       int     `json:"threads"`
	InFlight      int     `json:"itp"` // ops in flight per connection, at most

	OfferedOpsPerSec  float64 `json:"offered_ops_per_sec"`
	AchievedOpsPerSec float64 `json:"achieved_ops_per_sec"`
	Ops               int64   `json:"ops"`
	Seconds           float64 `json:"seconds"`
	Misses            int64   `json:"misses"`
	Errors            int64   `json:"errors"`
	ClientSaturated   bool    `json:"client_saturated"`
	// Short: achieved < 95 % of offered.
	Short bool `json:"short,omitempty"`
	// WarmupSeconds and WarmupOps are the client's unrecorded warm-up
	// before the step, as it reported them (0 in bundles from before it
	// counted them).
	WarmupSeconds float64 `json:"warmup_seconds,omitempty"`
	WarmupOps     int64   `json:"warmup_ops,omitempty"`

	// Latencies from the intended send time, in microseconds.
	P50Micros  float64 `json:"p50_us"`
	P99Micros  float64 `json:"p99_us"`
	P999Micros float64 `json:"p99_9_us"`
	MaxMicros  float64 `json:"max_us"`
	// Hlog is the step's HdrHistogram log, relative to the bundle; ""
	// when the client gave no histogram.
	Hlog string    `json:"hlog,omitempty"`
	Time time.Time `json:"time"`
	// Pacing is the client's own lateness in the step; nil in bundles
	// from before the client measured it.
	Pacing *Pacing `json:"pacing,omitempty"`
	// HostStealShare is PassEvidence's, over the step's recorded window;
	// from NoticeableSteal on the report says the step's tail is partly
	// the host's.
	HostStealShare *float64 `json:"host_steal_share,omitempty"`
	// HostFrozenShare is the share of the client host's CPU time in which
	// its CPUs did not run at all over the same window (bench's
	// host_freezes: a CPU quota of the host running out, which steal does
	// not count); from NoticeableSteal on the report names the step's
	// tail partly the host's. nil where perf events were not allowed.
	HostFrozenShare *float64 `json:"host_frozen_share,omitempty"`
	// HostBusyShare is the share of the client host's CPU time that
	// something ran in over the same window: the client's and, where they
	// share a host, the server's. The ladder runs fio beside the step at
	// this load as well (LadderLatency.UnderLoad). nil where not read, or
	// where the steps' clients ran on other hosts than the server.
	HostBusyShare *float64 `json:"host_busy_share,omitempty"`
	// SLO names the run --slo search this step was a probe of, as
	// SLO.String spells it ("p99=1ms"), and Probe its place in that
	// search from 1; both empty for a fixed-rate step of --latency.
	SLO   string `json:"slo,omitempty"`
	Probe int    `json:"probe,omitempty"`
	// Floor names the command of the row's calibration step ("PING"):
	// run before its GET steps at the lowest step's rate, it measures the
	// network and the server answering without touching data, the floor
	// under every step's latency. Empty for a GET step and in bundles
	// from before calibration.
	Floor string `json:"floor,omitempty"`
}

// Step reports whether l is a fixed-rate GET step of --latency: neither a
// --slo probe nor the row's calibration.
func (l LatencyRecord) Step() bool { return l.SLO == "" && l.Floor == "" }

// FloorOf is row's calibration step among recs, if it has one.
func FloorOf(recs []LatencyRecord, row Row) (LatencyRecord, bool) {
	for _, l := range recs {
		if l.Row == row && l.Floor != "" {
			return l, true
		}
	}
	return LatencyRecord{}, false
}

// Pacing is how closely a fixed-rate client kept its schedule: how long
// after its intended time each recorded GET was sent, and the GETs due in
// the window it never sent.
type Pacing struct {
	// Lateness is from each GET's intended time to its send: the client's
	// own delay and, with every in-flight slot taken, the wait for the
	// server's reply that freed one.
	LatenessP50Micros float64 `json:"lateness_p50_us"`
	LatenessP99Micros float64 `json:"lateness_p99_us"`
	LatenessMaxMicros float64 `json:"lateness_max_us"`
	// OwnLatenessP99Micros is the client's part alone, from the time a GET
	// could be sent (its intended time, or the reply that freed a slot
	// for it); absent from bundles of clients that did not measure it.
	OwnLatenessP99Micros *float64 `json:"own_lateness_p99_us,omitempty"`
	Due                  int64    `json:"due"`
	Unsent               int64    `json:"unsent"`
	// HeldUnsent is how many of Unsent a connection with every in-flight
	// slot taken at the end held back: the server's delay, not the
	// client's.
	HeldUnsent int64 `json:"held_unsent,omitempty"`
	// ClientBound: the client's own lateness p99 (before it was measured
	// apart, all of it) exceeded 10 % of the step's median latency, or
	// 10 % of the due GETs went unsent (since held ones were counted
	// apart, with a slot free): the step measured the client as much as
	// the server.
	ClientBound bool `json:"client_bound"`
}

// HostStalled reports whether the host took NoticeableSteal or more of
// the step's CPU time, as steal or as freezes: enough to put a stall of a
// few ms into the p99 of a step of thousands of GETs a second.
func (l LatencyRecord) HostStalled() bool {
	noticeable := func(s *float64) bool { return s != nil && *s >= NoticeableSteal }
	return noticeable(l.HostStealShare) || noticeable(l.HostFrozenShare)
}

// NoticeableSteal is the steal share from which the report names a latency
// step's tail partly the host's (cpustat.NoticeableSteal).
const NoticeableSteal = cpustat.NoticeableSteal

// CellStealMark is the steal of a cell's server from which the report
// marks its share of the ceiling: a throughput loses about what was
// stolen, and under 2 % that is within the passes' own spread. It is also
// above the counters' grain: /proc/stat counts in 10 ms ticks, 0.5 % of a
// 2 s pass on one CPU.
const CellStealMark = 0.02

// HostsLatencyRecord is a line of hosts/latency.jsonl: one online GET phase of
// a row over every client host, the clients' HdrHistograms merged.
type HostsLatencyRecord struct {
	Row     Row           `json:"row"`
	Threads int           `json:"threads"`
	Seconds int           `json:"seconds"`
	Clients []ClientShare `json:"clients"`
	// Count is the merged histogram's count: the sum of the clients'.
	Count  int64   `json:"count"`
	P50us  float64 `json:"p50_us"`
	P99us  float64 `json:"p99_us"`
	P999us float64 `json:"p99_9_us"`
	Maxus  float64 `json:"max_us"`
	// WarmupSeconds is the unrecorded warm-up the clients reported (the
	// least of theirs), WarmupOps their warm-up ops summed; 0 in bundles
	// from before the phase had one.
	WarmupSeconds float64 `json:"warmup_seconds,omitempty"`
	WarmupOps     int64   `json:"warmup_ops,omitempty"`
	// HostStealShare is the most steal any client host read over its
	// window; nil where none was read.
	HostStealShare *float64  `json:"host_steal_share,omitempty"`
	Time           time.Time `json:"time"`
}

// HostsPlan records the hosts of a run in plan.json (never the password).
type HostsPlan struct {
	Server  HostEndpoint   `json:"server"`
	Clients []HostEndpoint `json:"clients"`
	Bind    string         `json:"server_bind"`
	Port    int            `json:"server_port"`
	Auth    bool           `json:"auth"` // a per-run password was required
}

// HostSummary is one host of a run across hosts, in results.json.
type HostSummary struct {
	Name      string        `json:"name"`
	Endpoint  string        `json:"endpoint"`
	Roles     []string      `json:"roles"` // server, client
	Paragraph string        `json:"paragraph"`
	Network   *NetworkCheck `json:"network,omitempty"`
}

// NetworkCheck is hosts/<name>/network.json: the link from one client
// host to the server, measured by tierbench bench in a container there.
type NetworkCheck struct {
	Host       string  `json:"host"`
	RTTp50us   float64 `json:"rtt_p50_us"` // PING, one in flight
	RTTp99us   float64 `json:"rtt_p99_us"`
	NoopOps    float64 `json:"noop_ops_per_sec"` // pipelined PING
	NoopThread int     `json:"noop_threads"`
	NoopBatch  int     `json:"noop_batch"`
}

// Plot is one chart of the bundle, as results.json lists it.
type Plot struct {
	File    string `json:"file"`              // relative to the bundle
	Caption string `json:"caption"`           // the alt text in report.md
	Latency bool   `json:"latency,omitempty"` // shown in the latency section
}

// LadderLayer is one layer of one ladder.
type LadderLayer struct {
	Layer     string  `json:"layer"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Share is OpsPerSec over the layer below's; 0 for the bottom layer.
	// The in-memory top is a ceiling: its Share is the layer below's
	// OpsPerSec over its own, as ShareIs says.
	Share float64 `json:"share_of_layer_below,omitempty"`
	// ShareIs names the quotient when it is not this layer ÷ the one below.
	ShareIs string `json:"share_is,omitempty"`
	// PairOpsPerSec is, for the in-memory top, the tiered server measured
	// again in passes alternated with this layer's (their median): the
	// numerator of its Share, so that both sides of that quotient come from
	// the same minutes. 0 in bundles from before, whose top's Share took
	// the layer below's OpsPerSec.
	PairOpsPerSec  float64 `json:"pair_ops_per_sec,omitempty"`
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
	Detail         string  `json:"detail"`
	// Raw is the layer's file in the bundle (ladder/…json), when it ran;
	// of a layer run in rounds, the median round's.
	Raw string `json:"raw,omitempty"`
	// RoundsOpsPerSec and RoundsRaw are every round's, in run order.
	RoundsOpsPerSec []float64 `json:"rounds_ops_per_sec,omitempty"`
	RoundsRaw       []string  `json:"rounds_raw,omitempty"`
	// Spread is (max − min) ÷ median of its rounds or passes, the noise
	// its share is read against.
	Spread float64 `json:"spread,omitempty"`
	// StealShare is the most steal of its rounds (the RESP layer: its
	// cell's): a rung that lost CPU time to the hypervisor reads low, and
	// its share of the rung below with it. nil where not read.
	StealShare *float64 `json:"steal_share,omitempty"`
	// Flag says the layer is above the one below it by more than the
	// noise: the lower one bounds nothing, and is no gap.
	Flag  string `json:"flag,omitempty"`
	Error string `json:"error,omitempty"`
}

// Ladder is one backend's layers, bottom up, and its largest drop.
type Ladder struct {
	Backend string        `json:"backend"`
	Layers  []LadderLayer `json:"layers"`
	Gap     string        `json:"gap,omitempty"`
	Note    string        `json:"note,omitempty"`
	// Latency is, with --latency, each fixed-rate step of the backend's
	// rows beside fio at the same rate and depth on the same disk.
	Latency []LadderLatency `json:"latency,omitempty"`
	// LatencySettle is the wait before those fio runs for the disk to
	// read at its ceiling again: the rungs below and fio's own file have
	// just written a dataset's worth; nil when not probed.
	LatencySettle *DiskSettle `json:"latency_settle,omitempty"`
}

// LadderLatency is one latency step beside the disk: the server's
// latencies from latency.jsonl and fio's total latency (submission and
// completion) at --rate_iops of the step's offered rate and an iodepth of
// its most GETs in flight (connections × in flight per connection).
type LadderLatency struct {
	Row              Row     `json:"row"`
	Share            float64 `json:"share"`
	OfferedOpsPerSec float64 `json:"offered_ops_per_sec"`
	Depth            int     `json:"depth"`
	P50Micros        float64 `json:"p50_us"`
	P99Micros        float64 `json:"p99_us"`
	FioIOPS          float64 `json:"fio_iops,omitempty"`
	FioP50Micros     float64 `json:"fio_p50_us,omitempty"`
	FioP99Micros     float64 `json:"fio_p99_us,omitempty"`
	// StealShare is the step's host steal (LatencyRecord.HostStealShare),
	// FioStealShare the steal while fio ran beside it: a tail the step has
	// and fio has not, with steal in the step and none in fio's run, is
	// partly the host's. nil where not read.
	StealShare    *float64 `json:"steal_share,omitempty"`
	FioStealShare *float64 `json:"fio_steal_share,omitempty"`
	// BusyShare is the step's host busy share (LatencyRecord.HostBusyShare),
	// FioBusyShare the host's while fio ran alone beside it.
	BusyShare    *float64 `json:"busy_share,omitempty"`
	FioBusyShare *float64 `json:"fio_busy_share,omitempty"`
	// FrozenShare is the step's (LatencyRecord.HostFrozenShare),
	// FioFrozenShare the share of the host's CPU time its CPUs stood still
	// while fio ran beside it: like steal, a tail the step has and fio has
	// not, with freezes in the step and fewer in fio's run, is partly the
	// host's. nil where perf events were not allowed.
	FrozenShare    *float64 `json:"frozen_share,omitempty"`
	FioFrozenShare *float64 `json:"fio_frozen_share,omitempty"`
	// UnderLoad is fio run once more at the same rate and depth with the
	// CPUs held as little idle as the step left them; nil where the step
	// was not LoadWorthHolding less idle than fio alone, or a share was
	// not read.
	UnderLoad *FioUnderLoad `json:"fio_under_load,omitempty"`
	Error     string        `json:"error,omitempty"`
}

// LoadWorthHolding is how much less idle than fio's own run (a share of
// the host's CPU time: busy, or stolen because nothing was idle) a
// latency step must have been for the ladder to run fio again under the
// step's load: below it the two runs had about the same CPUs free.
const LoadWorthHolding = 0.10

// FioUnderLoad is fio beside a latency step with spinning threads on
// every CPU, each busy for HeldShare of the time: the share that leaves
// the host as little idle as the step did (the orchestrator's loadToHold).
// On a host whose disk emulation shares the guest's CPUs the disk is
// slower so, and a step missing its targets against fio alone but not
// against this run lost the difference to the host.
type FioUnderLoad struct {
	HeldShare float64 `json:"held_share"`
	// BusyShare, StealShare and FrozenShare are the host's while this fio
	// ran.
	BusyShare   *float64 `json:"busy_share,omitempty"`
	StealShare  *float64 `json:"steal_share,omitempty"`
	FrozenShare *float64 `json:"frozen_share,omitempty"`
	IOPS        float64  `json:"iops,omitempty"`
	P50Micros   float64  `json:"p50_us,omitempty"`
	P99Micros   float64  `json:"p99_us,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Latency targets of a step against the disk (issue 25): the server's p50
// within LatencyP50AboveFioMicros of fio's at the same rate and depth, its
// p99 within LatencyP99FioTimes × fio's plus LatencyP99AboveFioMicros.
const (
	LatencyP50AboveFioMicros = 150
	LatencyP99FioTimes       = 2
	LatencyP99AboveFioMicros = 1000
)

// MeetsTargets reports whether the step's p50 and p99 are within the
// targets of fio's; false too when fio gave nothing.
func (l LadderLatency) MeetsTargets() (p50, p99 bool) {
	if l.Error != "" {
		return false, false
	}
	return l.meets(l.FioP50Micros, l.FioP99Micros)
}

// MeetsTargetsUnderLoad is MeetsTargets against fio under the step's CPU
// load; false too where that fio did not run or failed.
func (l LadderLatency) MeetsTargetsUnderLoad() (p50, p99 bool) {
	if l.Error != "" || l.UnderLoad == nil || l.UnderLoad.Error != "" {
		return false, false
	}
	return l.meets(l.UnderLoad.P50Micros, l.UnderLoad.P99Micros)
}

func (l LadderLatency) meets(fioP50, fioP99 float64) (p50, p99 bool) {
	if fioP50 <= 0 {
		return false, false
	}
	return l.P50Micros <= fioP50+LatencyP50AboveFioMicros,
		l.P99Micros <= LatencyP99FioTimes*fioP99+LatencyP99AboveFioMicros
}

// ScenarioIndex is scenarios.json, the top of a --scenario all bundle:
// each scenario's bundle, a directory below it, and its error if it failed.
type ScenarioIndex struct {
	Schema    int             `json:"schema_version"`
	Scenario  string          `json:"scenario"`
	Scenarios []ScenarioEntry `json:"scenarios"`
}

// ScenarioEntry is one scenario of a ScenarioIndex.
type ScenarioEntry struct {
	Scenario string `json:"scenario"`
	Dir      string `json:"dir"`
	Error    string `json:"error,omitempty"`
}

// HostEndpoint is a host of a run across hosts as plan.json records it:
// its name in the bundle (hosts/<name>/) and where its Docker engine was
// dialled; "" is the engine the environment names.
type HostEndpoint struct {
	Name    string `json:"name"`
	Host    string `json:"host"`
	Context string `json:"context,omitempty"`
}

// Display is the endpoint as progress lines and the report show it.
func (e HostEndpoint) Display() string {
	if e.Host == "" {
		return "the local engine"
	}
	return e.Host
}

// ReadScenarioIndex reads the scenarios.json at the top of a --scenario
// all bundle. It refuses a newer schema, and an entry whose directory is
// not one plain name below the bundle: a reader (and `tierbench report`,
// which writes there) never leaves the bundle it was given.
func ReadScenarioIndex(dir string) (ScenarioIndex, error) {
	var index ScenarioIndex
	if err := ReadJSON(dir, FileScenarios, &index); err != nil {
		return index, err
	}
	path := filepath.Join(dir, FileScenarios)
	if index.Schema > SchemaVersion {
		return index, fmt.Errorf("%w: %s has schema_version %d, this tierbench reads up to %d", ErrNewerSchema, path, index.Schema, SchemaVersion)
	}
	for _, e := range index.Scenarios {
		if e.Dir == "" || e.Dir != filepath.Base(e.Dir) || !filepath.IsLocal(e.Dir) {
			return index, fmt.Errorf("results: %s: scenario %q's directory %q is not a directory of the bundle", path, e.Scenario, e.Dir)
		}
	}
	return index, nil
}
