package results

import (
	"cmp"

	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/diskstats"
)

// The verdicts' thresholds, the methodology's (DESIGN.md). A re-rendered
// bundle is judged by this tierbench's, whatever the run recorded.
const (
	// SectorBytes is the device's logical block: a storage-bound GET of a
	// record smaller than it reads at least one.
	SectorBytes = 512
	// MinSectorShare: a cell is memory-served below this share of a
	// sector per GET. The dataset is ≥ 20 × --memory, so up to 1/20 of the
	// keys may be answered from the in-memory log and an honest cell reads
	// ≥ 95 % of a sector per GET (the reference's 100 M keys: 99.9 %); a
	// cell served from memory reads next to nothing.
	MinSectorShare = 0.9
	// MaxMemorySectorShare: a memory-bound cell reads less than this share
	// of a sector per GET from the device (scenario 1's inverted check).
	MaxMemorySectorShare = 0.01
	// MinDeviceReadsPerGet: a localmemory cell's server counts at least
	// this many device reads per GET (INFO store Device.CompletedReads).
	MinDeviceReadsPerGet = 0.9
	// ServerCPUBoundShare: a pass in which the server used at least this
	// share of the CPUs it was allowed measured the server's CPU, not the
	// disk.
	ServerCPUBoundShare = 0.9
	// AboveCeilingTolerance: a cell above this multiple of its ceiling
	// makes fio measure again at the cell's depth; a cell still above this
	// multiple of the higher of the two is marked above-ceiling. Two per
	// cent is the spread of back-to-back fio runs here.
	AboveCeilingTolerance = 1.02
	// LinkBoundShare: a client that reached this share of its link's
	// pipelined no-op rate may have been held back by the link, not the
	// server: the report says so beside the table.
	LinkBoundShare = 0.9
	// MinAchievedShare: a latency step that achieved less of its offered
	// rate is marked short: the client or the server could not keep up,
	// and its latency is mostly queueing.
	MinAchievedShare = 0.95
	// LatencyWarmupSeconds precede every online phase at its rate,
	// unrecorded (bench --warmup-seconds): each step, and each client of
	// the phase across hosts, is a new client process whose first second
	// carries connection set-up and first touches, a tail that would
	// otherwise mask how p99 grows with the offered load.
	LatencyWarmupSeconds = 1
	// MinDeviceToMemory is how many times the in-memory log the dataset
	// must exceed, so that at most 1/20 of the keys can be answered from
	// memory.
	MinDeviceToMemory = 20
)

// Reasons a cell is kept out of the table (Cell.Excluded).
const (
	ExcludedMisses        = "misses"
	ExcludedMemoryServed  = "memory-served"
	ExcludedUnverified    = "unverified"
	ExcludedFailed        = "failed"
	ExcludedRefused       = "refused"
	ExcludedDeviceRead    = "device-read"
	ExcludedNoDeviceReads = "no-device-reads"
)

// JudgePass fills the derived fields and the exclusion marks of a pass;
// maxMiss is the share of misses (and errors) a pass may have.
func JudgePass(rec *PassRecord, maxMiss float64) {
	answered := rec.Hits + rec.Misses + rec.Errors
	if answered == 0 {
		answered = rec.Ops
	}
	if answered > 0 {
		rec.MissRatio = float64(rec.Misses+rec.Errors) / float64(answered)
	}
	rec.TooManyMiss = rec.MissRatio > maxMiss || rec.Ops == 0
	JudgeMix(rec)
	if IsScenarioRow(rec.Row) {
		judgeScenario(rec)
		return
	}
	if rec.ReadBytes < 0 {
		rec.Unverified = true
		return
	}
	if gets := rec.gets(); gets > 0 {
		rec.ReadBytesPerGet = float64(rec.ReadBytes) / float64(gets)
	}
	// A memory-tier sweep's row is partly served from memory by design:
	// its device share is measured and shown, never a reason to keep it
	// out. A read cache's row is judged as any other: a cell its cache
	// serves is memory-served, never shown as device-bound.
	rec.MemoryServed = rec.ReadBytesPerGet < MinSectorShare*SectorBytes && (rec.Row.Memory == "" || rec.Row.ReadCache != "")
}

// gets is how many of the pass's ops read a key: Gets in a mixed cell,
// every op in a GET cell.
func (rec *PassRecord) gets() int64 {
	if rec.Gets > 0 {
		return rec.Gets
	}
	return rec.Ops
}

// judgeScenario marks a memory or localmemory pass: scenario 1's cell
// must read less than 1 % of a sector per GET from the device, scenario
// 3's server must count ≥ 0.9 device reads per GET.
func judgeScenario(rec *PassRecord) {
	switch rec.Row.Backend {
	case ScenarioMemory:
		if rec.ReadBytes < 0 {
			rec.Unverified = true
			return
		}
		if gets := rec.gets(); gets > 0 {
			rec.ReadBytesPerGet = float64(rec.ReadBytes) / float64(gets)
		}
		rec.DeviceRead = rec.ReadBytesPerGet >= MaxMemorySectorShare*SectorBytes
	case ScenarioLocalMemory:
		if rec.DeviceReads < 0 {
			rec.Unverified = true
			return
		}
		if gets := rec.gets(); gets > 0 {
			rec.DeviceReadsPerGet = float64(rec.DeviceReads) / float64(gets)
			rec.ReadBytesPerGet = float64(max(rec.ReadBytes, 0)) / float64(gets)
		}
		rec.NoDeviceReads = rec.DeviceReadsPerGet < MinDeviceReadsPerGet
		// A shard whose reads missed its device fails the cell even when
		// the others' reads carry the total over the line.
		for i := range rec.Nodes {
			n := &rec.Nodes[i]
			if n.Ops > 0 {
				n.DeviceReadsPerGet = float64(n.DeviceReads) / float64(n.Ops)
				rec.NoDeviceReads = rec.NoDeviceReads || n.DeviceReads < 0 || n.DeviceReadsPerGet < MinDeviceReadsPerGet
			}
		}
		// The in-RAM device reads nothing through the kernel: bytes in
		// /proc io mean a native device sits under the store.
		rec.DeviceRead = rec.ReadBytes > 0 && rec.ReadBytesPerGet >= MaxMemorySectorShare*SectorBytes
	}
}

// ScenarioExclusion is the reason a scenario pass keeps its cell out.
func ScenarioExclusion(rec PassRecord) string {
	switch {
	case rec.DeviceRead:
		return ExcludedDeviceRead
	case rec.NoDeviceReads:
		return ExcludedNoDeviceReads
	}
	return ""
}

// JudgeEvidence derives the rates, shares and the CPU-bound mark from
// the raw counts, so a re-rendered report applies this tierbench's rules.
func JudgeEvidence(rec *PassRecord) {
	ev := &rec.PassEvidence
	secs := rec.Seconds
	if secs <= 0 {
		secs = ev.DiskWindowSeconds
	}
	if len(ev.DiskDevices) > 0 && secs > 0 {
		d := diskstats.Delta{ReadsCompleted: ev.DiskReads, WeightedMs: ev.DiskWeightedMs}
		ev.DiskReadsPerSec, ev.DiskQueueDepth = d.ReadsPerSec(secs), d.QueueDepth(secs)
	}
	ev.ServerCPUs = cpuCount(rec.Server.CPUs)
	ev.ClientCPUs = cpuCount(rec.Client.CPUs)
	ev.ServerCPUShare, ev.ClientCPUShare = 0, 0
	if secs > 0 && ev.ServerCPUs > 0 {
		ev.ServerCPUShare = ev.ServerCPUSeconds / secs / float64(ev.ServerCPUs)
	}
	if secs > 0 && ev.ClientCPUs > 0 {
		ev.ClientCPUShare = rec.ClientCPUSeconds / secs / float64(ev.ClientCPUs)
	}
	ev.ServerCPUBound = ev.ServerCPUShare >= ServerCPUBoundShare
}

func cpuCount(list string) int {
	cpus, err := cpulist.Parse(list)
	if err != nil {
		return 0
	}
	return len(cpus)
}

// Steal is the steal a cell is judged by: its server's CPUs', read on the
// server's host, or where that was not read the host's as the client read
// it; nil when neither was.
func (e CellEvidence) Steal() *float64 {
	if e.ServerStealShare != nil {
		return e.ServerStealShare
	}
	return e.HostStealShare
}

// MaxShare is the larger of two shares that may not have been read (nil).
func MaxShare(a, b *float64) *float64 {
	if a == nil || b != nil && *b > *a {
		return b
	}
	return a
}

// SummarizeEvidence is the cell's evidence over the passes it counts.
func SummarizeEvidence(recs []PassRecord) CellEvidence {
	var ce CellEvidence
	var rps, depth, srv, cli, perGet, systemPerGet []float64
	for _, r := range recs {
		JudgeEvidence(&r)
		if gets := cmp.Or(r.Gets, r.Ops); r.ServerCPUSeconds > 0 && gets > 0 {
			perGet = append(perGet, r.ServerCPUSeconds*1e6/float64(gets))
			if r.ServerSystemCPUSeconds > 0 {
				systemPerGet = append(systemPerGet, r.ServerSystemCPUSeconds*1e6/float64(gets))
			}
		}
		if len(r.DiskDevices) > 0 {
			rps = append(rps, r.DiskReadsPerSec)
			depth = append(depth, r.DiskQueueDepth)
		}
		srv = append(srv, r.ServerCPUShare)
		cli = append(cli, r.ClientCPUShare)
		ce.HostStealShare = MaxShare(ce.HostStealShare, r.HostStealShare)
		ce.ServerStealShare = MaxShare(ce.ServerStealShare, r.ServerStealShare)
		ce.ServerCPUBound = ce.ServerCPUBound || r.ServerCPUBound
	}
	ce.DiskReadsPerSec, _, _ = Median(rps)
	ce.DiskQueueDepth, _, _ = Median(depth)
	ce.ServerCPUShare, _, _ = Median(srv)
	ce.ClientCPUShare, _, _ = Median(cli)
	ce.ServerCPUMicrosPerGet, _, _ = Median(perGet)
	ce.ServerSystemMicrosPerGet, _, _ = Median(systemPerGet)
	return ce
}
