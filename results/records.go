package results

import (
	"fmt"
	"strings"
)

// PassEvidence is what the disk and the server's CPU did during one GET
// phase, beside the client's ops. The rates divide by the phase's own
// seconds (bench's measured time): the counters are sampled just before
// the client starts and just after it exits, and outside the phase the
// idle server neither reads nor computes, so the few ms of client start-up
// add nothing to the counts but would dilute a wall-clock rate.
type PassEvidence struct {
	// DiskDevices are the physical disks below the data dir whose
	// /proc/diskstats counters were summed (md and dm members); none when
	// they could not be resolved. They count every process's reads on
	// those disks, not only the server's.
	DiskDevices       []string `json:"disk_devices,omitempty"`
	DiskReads         uint64   `json:"disk_reads"`          // Δ reads completed
	DiskWeightedMs    uint64   `json:"disk_weighted_io_ms"` // Δ weighted ms doing I/O
	DiskWindowSeconds float64  `json:"disk_window_seconds"` // wall time between the samples
	DiskReadsPerSec   float64  `json:"disk_reads_per_sec"`  // iostat r/s over the phase
	DiskQueueDepth    float64  `json:"disk_queue_depth"`    // iostat aqu-sz over the phase
	DiskNote          string   `json:"disk_note,omitempty"` // why there is no disk evidence

	// ServerCPUSeconds is the server's utime+stime over the phase
	// (/proc/<pid>/stat), ServerCPUs the CPUs its Cpus_allowed_list
	// holds, ServerCPUShare the first over the phase × the second.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	// ServerSystemCPUSeconds is the stime part of ServerCPUSeconds: the
	// server's time in the kernel (0 in bundles from before it was kept).
	ServerSystemCPUSeconds float64 `json:"server_system_cpu_seconds,omitempty"`
	ServerCPUs             int     `json:"server_cpus"`
	ServerCPUShare         float64 `json:"server_cpu_share"`
	ServerCPUBound         bool    `json:"server_cpu_bound,omitempty"`
	ClientCPUs             int     `json:"client_cpus"`
	ClientCPUShare         float64 `json:"client_cpu_share"`
	// HostStealShare is the share of the client host's CPU time the
	// hypervisor took during the phase (/proc/stat's steal, as the client
	// read it; the most of several client hosts'). With the client and
	// the server on one machine it is the server's host too. nil where the
	// kernel does not count it, and in bundles from before.
	HostStealShare *float64 `json:"host_steal_share,omitempty"`
	// ServerStealShare is the steal of the server's CPUs during the phase,
	// from its own host's /proc/stat over its Cpus_allowed_list: what the
	// hypervisor took from the server itself. nil where not read.
	ServerStealShare *float64 `json:"server_steal_share,omitempty"`
	// ClockTicks is the kernel's USER_HZ the stat ticks were divided by.
	ClockTicks int    `json:"clock_ticks_per_sec,omitempty"`
	CPUNote    string `json:"cpu_note,omitempty"`
}

// CellEvidence is the median of the passes' evidence, and the marks a
// cell keeps in the table with a flag.
type CellEvidence struct {
	DiskReadsPerSec float64 `json:"disk_reads_per_sec,omitempty"`
	DiskQueueDepth  float64 `json:"disk_queue_depth,omitempty"`
	ServerCPUShare  float64 `json:"server_cpu_share,omitempty"`
	ClientCPUShare  float64 `json:"client_cpu_share,omitempty"`
	// HostStealShare and ServerStealShare are the most steal any counted
	// pass saw; nil when none was read.
	HostStealShare   *float64 `json:"host_steal_share,omitempty"`
	ServerStealShare *float64 `json:"server_steal_share,omitempty"`
	// ServerCPUBound: at least one pass used ≥ 90 % of the server's CPUs.
	ServerCPUBound bool `json:"server_cpu_bound,omitempty"`
	// ServerCPUMicrosPerGet is the median of the passes' server CPU
	// (utime + stime) per GET answered, in µs; 0 when it was not read.
	ServerCPUMicrosPerGet float64 `json:"server_cpu_us_per_get,omitempty"`
	// ServerSystemMicrosPerGet is the kernel's part of it (stime), the
	// median over the same passes; 0 when it was not read.
	ServerSystemMicrosPerGet float64 `json:"server_system_cpu_us_per_get,omitempty"`
	// Ceiling is the IOPS the cell is divided by: the preflight sweep's
	// best, or a re-measurement at the cell's depth when that is higher.
	Ceiling float64 `json:"ceiling_iops,omitempty"`
	// CeilingPinned: the cell's row is pinned and held against fio on
	// the server's own CPUs (Ceilings.Pinned), not on the whole host.
	CeilingPinned bool `json:"ceiling_pinned,omitempty"`
	// AboveCeiling: the cell exceeded 1.02 × its ceiling even after fio
	// was measured again at its depth; AboveCeilingWhy says by how much
	// and what the disk saw.
	AboveCeiling    bool   `json:"above_ceiling,omitempty"`
	AboveCeilingWhy string `json:"above_ceiling_why,omitempty"`
}

// NodeLoad is one node's load evidence in cells.jsonl.
type NodeLoad struct {
	ID           string       `json:"id"`
	Addr         string       `json:"addr"`
	Slots        int          `json:"slots"`
	Acknowledged int64        `json:"acknowledged"` // keys the loader saw acknowledged there; -1 when skipped
	ServerKeys   int64        `json:"server_keys"`  // its DBSIZE after the load
	Tiered       bool         `json:"tiered"`
	DeviceShare  float64      `json:"device_share,omitempty"`
	HeadAddress  uint64       `json:"head_address,omitempty"`
	TailAddress  uint64       `json:"tail_address,omitempty"`
	DataDir      string       `json:"data_dir,omitempty"`
	Server       Placement    `json:"server_placement"`
	Owner        *OwnerProof  `json:"owner,omitempty"`
	Sample       *SampleCheck `json:"sampled_check,omitempty"` // the sampled GETs of its keys
}

// NodePass is one node's share of a pass in cells.jsonl.
type NodePass struct {
	ID               string    `json:"id"`
	Addr             string    `json:"addr"`
	Ops              int64     `json:"ops"`
	OpsPerSec        float64   `json:"ops_per_sec"`
	Keys             int64     `json:"keys"` // its DBSIZE after the load
	ReadBytes        int64     `json:"read_bytes"`
	ReadBytesPerGet  float64   `json:"read_bytes_per_get"`
	ServerCPUSeconds float64   `json:"server_cpu_seconds"`
	Server           Placement `json:"server_placement"`
	// DeviceReads is the change of this shard's INFO store
	// Device.CompletedReads over the GETs (scenario 3 only).
	DeviceReads       int64   `json:"device_reads,omitempty"`
	DeviceReadsPerGet float64 `json:"device_reads_per_get,omitempty"`
}

// CellNode is one cluster node's share of a cell: the medians over the
// passes of its ops/sec and device bytes per GET, and its key count.
type CellNode struct {
	ID              string  `json:"id"`
	Addr            string  `json:"addr"`
	OpsPerSec       float64 `json:"median_ops_per_sec"`
	ReadBytesPerGet float64 `json:"read_bytes_per_get"`
	// DeviceReadsPerGet is its INFO store device reads per GET
	// (scenario 3 only).
	DeviceReadsPerGet float64 `json:"device_reads_per_get,omitempty"`
	Keys              int64   `json:"keys"`
}

// ClientShare is one client's part of a cell, kept in its pass record.
type ClientShare struct {
	Host        string    `json:"host"`
	Threads     int       `json:"threads"`
	Ops         int64     `json:"ops"`
	Hits        int64     `json:"hits"`
	Misses      int64     `json:"misses"`
	Errors      int64     `json:"errors"`
	OpsPerSec   float64   `json:"ops_per_sec"`
	LateSeconds float64   `json:"late_seconds"`
	Placement   Placement `json:"placement"` // read on its host
	JSON        string    `json:"json"`      // its bench JSON, relative to the bundle
}

// OwnerProof is the evidence that a pid is the server at an address: the
// LISTEN socket's inode found among the pid's open files, and the pid the
// server itself reports in INFO server, when it reports one.
type OwnerProof struct {
	Addr      string `json:"addr"`
	PID       int    `json:"pid"`
	Command   string `json:"command,omitempty"` // /proc/<pid>/comm
	Listen    string `json:"listen"`            // the LISTEN entry's local address
	Inode     uint64 `json:"socket_inode"`
	InfoPID   int64  `json:"info_process_id,omitempty"` // INFO server's process_id; 0 = not reported
	Namespace string `json:"pid_namespace_ids,omitempty"`
	// Found says the pid was not given but found as the socket's owner.
	Found bool `json:"found,omitempty"`
}

// Sentence says what the proof established, for progress and report.
func (p OwnerProof) Sentence() string {
	s := fmt.Sprintf("pid %d", p.PID)
	if p.Command != "" {
		s += " (" + p.Command + ")"
	}
	how := "owns"
	if p.Found {
		how = "found as the owner of"
	}
	s += fmt.Sprintf(" %s the socket listening on %s (inode %d)", how, p.Listen, p.Inode)
	if p.InfoPID != 0 {
		s += fmt.Sprintf("; INFO server's process_id %d agrees", p.InfoPID)
		if p.Namespace != "" {
			s += fmt.Sprintf(" (its pids by namespace: %s)", p.Namespace)
		}
	}
	return s
}

// ServerInfo is what a server says about itself (INFO server, memory and
// persistence, and CONFIG GET where it answers), recorded with each load
// so the report describes the server that ran, not the one tierbench
// would have started.
type ServerInfo struct {
	Name            string `json:"name"` // redis, valkey, garnet, dragonfly, tierbench, …
	Version         string `json:"version,omitempty"`
	ProcessID       string `json:"process_id,omitempty"`
	MaxMemory       string `json:"maxmemory,omitempty"` // bytes, as reported
	MaxMemoryPolicy string `json:"maxmemory_policy,omitempty"`
	UsedMemory      string `json:"used_memory,omitempty"`
	IOThreads       string `json:"io_threads,omitempty"`
	Persistence     string `json:"persistence,omitempty"`
}

// Describe is the report's sentence for an external server.
func (si ServerInfo) Describe() string {
	var b strings.Builder
	b.WriteString(si.Name)
	if si.Version != "" {
		b.WriteString(" " + si.Version)
	}
	var facts []string
	if si.MaxMemory != "" {
		m := "maxmemory " + si.MaxMemory
		if si.MaxMemory == "0" {
			m += " (no limit)"
		}
		if si.MaxMemoryPolicy != "" {
			m += ", policy " + si.MaxMemoryPolicy
		}
		facts = append(facts, m)
	}
	if si.UsedMemory != "" {
		facts = append(facts, "used_memory "+si.UsedMemory+" after the load")
	}
	if si.IOThreads != "" {
		facts = append(facts, "io-threads "+si.IOThreads)
	}
	if si.Persistence != "" {
		facts = append(facts, si.Persistence)
	}
	if len(facts) > 0 {
		b.WriteString(" (" + strings.Join(facts, "; ") + ")")
	}
	return b.String()
}

// SampleCheck is the result of the sampled hit check: GETs of a uniform
// random sample of the key space, before any measuring.
type SampleCheck struct {
	Keys        int64   `json:"keys"`
	Missed      int64   `json:"missed"`
	WrongLength int64   `json:"wrong_length"`
	Errors      int64   `json:"errors"`
	FirstBad    string  `json:"first_bad,omitempty"` // the first key that failed and how
	Seconds     float64 `json:"seconds"`
}
