package results

import (
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/settle"
)

// SchemaVersion is the version of results.json and of the cells.jsonl
// lines; a reader refuses a bundle with a newer one.
const SchemaVersion = 2

// Bundle file names, relative to the bundle.
const (
	FileFingerprint = "fingerprint.json"
	FilePreflight   = "preflight.json"
	FileCells       = "cells.jsonl"
	FileResults     = "results.json"
	FileTable       = "table.md"
	FileReport      = "report.md"
	FilePlan        = "plan.json"
	DirLogs         = "logs"
	// FileScenarios indexes the per-scenario bundles of a --scenario all
	// bundle, which has no plan or results of its own.
	FileScenarios = "scenarios.json"
	// FileCeilings holds the fio re-measurements, one JSON line each,
	// appended and fsynced like cells.jsonl.
	FileCeilings = "ceilings.jsonl"
	// FileLatency holds the fixed-rate latency steps (not cells.jsonl,
	// which older tierbench versions read and would refuse); DirLatency
	// each step's HdrHistogram log.
	FileLatency = "latency.jsonl"
	DirLatency  = "latency"
	// FileLadder holds the ladder of layers below RESP.
	FileLadder = "ladder.json"
	// DirHosts holds one directory per host of a run across hosts: its
	// preflight.json and FileNetwork; FileHostsLatency under it the
	// merged online phase of each row.
	DirHosts = "hosts"
	// FileTLSCA is the certificate (PEM) of the CA a run with --tls made
	// for its servers; its key, and the servers' and clients' keys, are
	// never in the bundle.
	FileTLSCA        = "tls-ca.pem"
	FileNetwork      = "network.json"
	FileHostsLatency = "latency.jsonl"
)

// Placement is where a process may run: the sets asked for and the
// effective ones read back from /proc/<pid>/status.
type Placement struct {
	WantCPUs string `json:"want_cpus,omitempty"` // cpulist asked for; "" = any
	WantMems string `json:"want_mems,omitempty"`
	CPUs     string `json:"cpus"` // Cpus_allowed_list
	Mems     string `json:"mems"` // Mems_allowed_list
	Policy   string `json:"mempolicy,omitempty"`
}

// Row is one backend × pin row of the matrix.
type Row struct {
	Backend string `json:"backend"` // libaio | uring | the external server's name
	Pin     string `json:"pin"`     // pinned | none
	Label   string `json:"label"`   // the NUMA column, e.g. "srv node-0 / cli node-1"
	// Shards is the number of tierbench shards of a --shards row; 0 or 1
	// is one server.
	Shards int `json:"shards,omitempty"`
	// Batch is the row's -b when the scenario makes it a row (scenario
	// 3's -b 1024 and -b 256); 0 takes the run's --batch.
	Batch int `json:"batch,omitempty"`
	// Server is the catalogue name of the row's server (package sut) in
	// a run that named --server or --server-cmd; "" is tierbench's own
	// server, as in every bundle from before servers were a dimension.
	Server string `json:"server,omitempty"`
	// Memory is the server's --memory of a memory-tier sweep's row
	// (run --memory 16m,128m,…), spelled as given; "" takes the run's
	// one --memory, as every bundle from before sweeps.
	Memory string `json:"memory,omitempty"`
	// ReadCache is the server's --readcache-memory of a read-cache sweep's
	// row (run --readcache-memory 32m,128m,…), spelled as given; "" is
	// the cache off, as in every bundle from before it.
	ReadCache string `json:"readcache,omitempty"`
	// TLS says the row's clients and probes spoke TLS to its server (run
	// --tls on or both, across hosts by default, --server-addr
	// rediss://); false, as in every bundle from before TLS, is plain TCP.
	TLS bool `json:"tls,omitempty"`
	// Ladder marks a server the ladder started for a rung of its own (the
	// localmemory ladder's top: the untiered server and the tiered one
	// measured again beside it), not a row of the plan.
	Ladder bool `json:"ladder,omitempty"`
}

// OwnServer is the name of tierbench's own server, the one a row whose
// Server is "" ran.
const OwnServer = "tierbench"

// ServerName is the name of the row's server: OwnServer for "".
func (r Row) ServerName() string {
	if r.Server == "" {
		return OwnServer
	}
	return r.Server
}

// ID tells the rows of one plan apart, as cells.jsonl's records are
// matched to the plan's rows; Plan.RowKey tells rows apart across bundles.
func (r Row) ID() string {
	k := r.Backend + "/" + r.Pin
	if r.Batch > 0 {
		k += fmt.Sprintf("/b=%d", r.Batch)
	}
	if r.Shards > 1 {
		// A scenario 3 row has both: -b 256 on 2 shards is not -b 256 on one.
		k += fmt.Sprintf("/shards=%d", r.Shards)
	}
	if r.Server != "" {
		k += "/server=" + r.Server
	}
	if r.Memory != "" {
		k += "/memory=" + r.Memory
	}
	if r.ReadCache != "" {
		k += "/readcache=" + r.ReadCache
	}
	if r.TLS {
		k += "/tls"
	}
	if r.Ladder {
		k += "/ladder"
	}
	return k
}

// PassRecord is one line of cells.jsonl: one GET phase of one cell.
type PassRecord struct {
	Kind    string `json:"kind"` // "pass"
	Schema  int    `json:"schema_version"`
	Row     Row    `json:"row"`
	Threads int    `json:"threads"`
	Pass    int    `json:"pass"` // 1-based
	Batch   int    `json:"batch"`

	Ops       int64   `json:"ops"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	Hits      int64   `json:"hits"`
	Misses    int64   `json:"misses"`
	Errors    int64   `json:"errors"`
	// Gets counts the ops of a mixed cell (--workload) that read a key:
	// its GETs, RMWs and MGET keys, which the per-GET figures divide by;
	// absent (0) for a GET cell, where every op is a GET.
	Gets int64 `json:"gets,omitempty"`

	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	ClientSaturated  bool    `json:"client_saturated"`
	Incomplete       bool    `json:"incomplete"`

	// ReadBytes is the server's /proc/<pid>/io read_bytes delta over the
	// phase; -1 when the server's pid is unknown.
	ReadBytes       int64   `json:"read_bytes"`
	ReadBytesPerGet float64 `json:"read_bytes_per_get"`

	// Exclusions: a cell with any of these set is kept out of the table.
	MissRatio    float64 `json:"miss_ratio"`
	TooManyMiss  bool    `json:"too_many_misses,omitempty"`
	MemoryServed bool    `json:"memory_served,omitempty"`
	Unverified   bool    `json:"device_reads_unverified,omitempty"`
	// DeviceReads is the change of the server's INFO store
	// Device.CompletedReads over the phase (scenario 3's evidence).
	DeviceReads       int64   `json:"device_reads,omitempty"`
	DeviceReadsPerGet float64 `json:"device_reads_per_get,omitempty"`
	// DeviceRead marks a memory-bound pass that read ≥ 1 % of a sector per
	// GET; NoDeviceReads a localmemory pass under 0.9 device reads per GET.
	DeviceRead    bool `json:"device_read,omitempty"`
	NoDeviceReads bool `json:"no_device_reads,omitempty"`

	// CPUMicrosPerOp is the server's CPU over the phase (PassEvidence,
	// summed over a cluster's nodes) plus the client's, per GET answered.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// FioBesideIOPS is what fio read right after the phase, the server
	// idle: the ceiling's best point (its jobs × iodepth, on its CPUs)
	// over the server's files, read-only, for BesideSeconds. 0 where it
	// was not measured (no ceiling, a cluster, --no-fio, fio failed).
	FioBesideIOPS float64 `json:"fio_beside_iops,omitempty"`
	// Nodes is each master's share when the row's server is a cluster.
	Nodes []NodePass `json:"nodes,omitempty"`
	// MixEvidence is what a mixed cell's operations did (results/mix.go).
	MixEvidence

	Server Placement `json:"server_placement"`
	Client Placement `json:"client_placement"`
	PassEvidence
	// Clients are the client hosts' shares of a cell run across hosts;
	// Ops, Hits, Misses and Errors are their sums.
	Clients []ClientShare `json:"clients,omitempty"`
	Time    time.Time     `json:"time"`
}

// LoadRecord is a cells.jsonl line with the load evidence of one row.
type LoadRecord struct {
	Kind   string `json:"kind"` // "load"
	Schema int    `json:"schema_version"`
	Row    Row    `json:"row"`

	DBSize       int64   `json:"dbsize"`       // keys asked for
	Acknowledged int64   `json:"acknowledged"` // keys the loader saw acknowledged; -1 when skipped
	LoadSeconds  float64 `json:"load_seconds"`
	ServerKeys   int64   `json:"server_keys"` // DBSIZE after the load

	Tiered       bool    `json:"tiered"`
	BeginAddress uint64  `json:"begin_address,omitempty"`
	HeadAddress  uint64  `json:"head_address,omitempty"`
	TailAddress  uint64  `json:"tail_address,omitempty"`
	DeviceShare  float64 `json:"device_share,omitempty"` // (Head−Begin)/(Tail−Begin)

	Server     Placement `json:"server_placement"`
	ServerMode string    `json:"server_mode,omitempty"` // process | docker, privileged | …
	UringProbe string    `json:"uring_probe,omitempty"` // preflight's io_uring check where the server ran

	Owner      *OwnerProof `json:"owner,omitempty"`       // the pid proven to own the listening socket
	ServerInfo *ServerInfo `json:"server_info,omitempty"` // what the server says it is
	// ServerCommand is the started server's command line as run, quoted
	// as a shell reads it (an image's as "docker run --entrypoint
	// ENTRYPOINT IMAGE ARGS…"), the paths of its password and TLS files
	// in it, never the password; "" for a server the run did not start.
	ServerCommand string `json:"server_command,omitempty"`
	// ServerEvidence are the INFO fields its catalogue entry names
	// ("section:field" → value), read after the load.
	ServerEvidence map[string]string `json:"server_evidence,omitempty"`
	Sample         *SampleCheck      `json:"sampled_check,omitempty"` // the sampled GET check after the load
	// Settle is how the disk came back after the load, before the
	// passes; nil where it was not probed (no fio ceiling, an in-RAM
	// device, a cluster, --skip-load, or a bundle from before it).
	Settle *DiskSettle `json:"disk_settle,omitempty"`
	// Nodes is each master's evidence when the row's server is a cluster.
	Nodes []NodeLoad `json:"nodes,omitempty"`
	Time  time.Time  `json:"time"`
}

// DiskSettle is the wait after a load for the disk to read at its
// ceiling again. A large load leaves the disk slower for minutes (here,
// after the reference dataset's load, the first passes read far fewer
// GETs a second than the third, every one with the disk's queue full), so
// the passes start once fio over the server's own files, read-only, reads
// at least SettleShare of the row's ceiling, or stops getting faster.
type DiskSettle struct {
	// ProbeIOPS are the probes in order, each ProbeSeconds of fio at
	// Jobs × IODepth in flight (the ceiling's best point).
	ProbeIOPS    []float64 `json:"probe_iops"`
	ProbeSeconds int       `json:"probe_seconds"`
	Jobs         int       `json:"jobs"`
	IODepth      int       `json:"iodepth"`
	CeilingIOPS  float64   `json:"ceiling_iops"`
	// Seconds is the wait from the first probe to the end of the last.
	Seconds float64 `json:"seconds"`
	// Settled: the last probe reached SettleShare of the ceiling; else
	// Why says where the wait ended (a plateau below it, the time limit,
	// or fio's error).
	Settled bool   `json:"settled"`
	Why     string `json:"why,omitempty"`
}

// SettleShare is the share of its ceiling a probe must read for the disk
// to count as settled after a load.
const SettleShare = settle.Share

// BesideSeconds is how long the fio after each pass runs
// (PassRecord.FioBesideIOPS): the shortest fio run, since it runs after
// every pass of every cell; the disk's phases last tens of seconds.
const BesideSeconds = 1

// FailRecord is a cells.jsonl line saying a row could not be finished.
type FailRecord struct {
	Kind   string `json:"kind"` // "fail"
	Schema int    `json:"schema_version"`
	Row    Row    `json:"row"`
	Error  string `json:"error"`
	// Refused says the row was refused (a partial load, a sampled miss, a
	// wrong process) rather than broken: its cells are marked refused.
	Refused bool      `json:"refused,omitempty"`
	Time    time.Time `json:"time"`
}

// Plan is what a run set out to do; --resume reads it back.
type Plan struct {
	Schema  int       `json:"schema_version"`
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started"`
	Runtime string    `json:"runtime"` // the runtime actually used
	// Workload is the run's configuration as it resolved (workload.go).
	Workload  Workload   `json:"config"`
	Rows      []Row      `json:"rows"`
	Nodes     int        `json:"numa_nodes"`
	Version   string     `json:"tierbench_version,omitempty"`
	Hostname  string     `json:"hostname,omitempty"`
	MaxMisses float64    `json:"max_miss_ratio"`
	Hosts     *HostsPlan `json:"hosts,omitempty"`
}

// Results is results.json: the plan, the load evidence and each cell's
// median with its spread.
type Results struct {
	Schema int `json:"schema_version"`
	// Scenario is the reference's server set-up measured (workload.go).
	Scenario string       `json:"scenario,omitempty"`
	Plan     Plan         `json:"plan"`
	Finished time.Time    `json:"finished"`
	Loads    []LoadRecord `json:"loads"`
	Failures []FailRecord `json:"failures,omitempty"`
	Cells    []Cell       `json:"cells"`
	// FioIOPS512 is the fio random-read ceiling at 512 B; 0 when unknown.
	FioIOPS512 float64 `json:"fio_iops_512"`
	// FioCeilings are the host's and the pinned server's ceilings with
	// what fio's CPU said at each; nil without a fio baseline.
	FioCeilings *Ceilings `json:"fio_ceilings,omitempty"`
	// Plots are the bundle's SVG charts, drawn by the renderer.
	Plots []Plot `json:"plots,omitempty"`
	// Ceilings are the fio re-measurements of cells above the ceiling.
	Ceilings []CeilingRecord `json:"ceilings,omitempty"`
	// Latency are the fixed-rate steps of latency.jsonl.
	Latency []LatencyRecord `json:"latency,omitempty"`
	// Rechecks are the load checks repeated after a mix that writes.
	Rechecks []RecheckRecord `json:"rechecks,omitempty"`
	// FioCPU is fio's CPU per read at cells' own depths through their
	// rows' interfaces (fio-cpu.jsonl).
	FioCPU []FioCPURecord `json:"fio_cpu,omitempty"`
	// Files are the sha256 sums of every other file of the bundle, taken
	// as results.json was written (checksum.go).
	Files []FileSum `json:"files,omitempty"`

	// Passes are the raw records behind the cells (cells.jsonl), for
	// the report's evidence; never written to results.json.
	Passes []PassRecord `json:"-"`
	// Hosts and LinkWarnings describe a run across hosts.
	Hosts        []HostSummary `json:"hosts,omitempty"`
	LinkWarnings []string      `json:"link_warnings,omitempty"`
}

// Cell is one table cell: a row and a thread count, over its passes.
type Cell struct {
	Row     Row     `json:"row"`
	Threads int     `json:"threads"`
	Passes  int     `json:"passes"`
	Median  float64 `json:"median_ops_per_sec"`
	Min     float64 `json:"min_ops_per_sec"`
	Max     float64 `json:"max_ops_per_sec"`
	// ReadBytesPerGet is the median device bytes per GET.
	ReadBytesPerGet float64 `json:"read_bytes_per_get"`
	MissRatio       float64 `json:"max_miss_ratio"`
	// Excluded says why the cell is kept out of the table ("" = shown).
	Excluded string `json:"excluded,omitempty"`
	// FioShare is Median / the cell's ceiling; 0 when unknown.
	FioShare float64 `json:"fio_share,omitempty"`
	// BesideShare is the median over the passes of each pass's ops/s ÷
	// the fio that ran right after it (PassRecord.FioBesideIOPS): the
	// share of the ceiling with server and fio side by side, seconds
	// apart, where the ceiling's own fio ran before any row. 0 where no
	// pass had one.
	BesideShare float64 `json:"fio_beside_share,omitempty"`
	CellEvidence
	// CPUMicrosPerOp is the median of the passes' server + client CPU
	// per GET; 0 when the server's CPU was not read.
	CPUMicrosPerOp float64 `json:"cpu_us_per_op,omitempty"`
	// Nodes is each cluster node's median share of the cell.
	Nodes []CellNode `json:"nodes,omitempty"`
	// CellMix is the medians of the passes' MixEvidence.
	CellMix
}
