package results

import (
	"cmp"
	"slices"
)

// Scenarios of the reference, told apart by where reads land.
const (
	// ScenarioStorage is scenario 2: the tiered server on the native
	// device, reads hit the disk (the backend × pin matrix).
	ScenarioStorage = "storage"
	// ScenarioMemory is scenario 1: the untiered server, the dataset in
	// RAM; a cell must read (almost) nothing from the device.
	ScenarioMemory = "memory"
	// ScenarioLocalMemory is scenario 3: the tiered server on the
	// syscall-free localmemory device; every GET is a device read that
	// /proc io cannot see, so the server's own counter is the evidence.
	ScenarioLocalMemory = "localmemory"
	// ScenarioAll runs the three in sequence into one bundle.
	ScenarioAll = "all"
)

// Scenarios lists the scenario names in the order "all" runs them.
var Scenarios = []string{ScenarioMemory, ScenarioStorage, ScenarioLocalMemory}

// ScenarioTitle is the section heading of each scenario, the reference's.
var ScenarioTitle = map[string]string{
	ScenarioMemory:      "1. Memory-bound — data in RAM",
	ScenarioStorage:     "2. NVMe storage-bound — reads hit real disk",
	ScenarioLocalMemory: "3. Memory-device-bound — reads hit the in-RAM device",
}

// Workload is plan.json's "config": the run's configuration as it
// resolved. Its JSON names are fixed here, field by field — they are the
// names tierbench has always written (once the Go names of the run's
// configuration), so bundles of every schema read into it — and no longer
// follow any Go type of the run: a flag added to `tierbench run` enters
// the bundle only by a field added here. Fields are never removed or
// renamed; a reader of an older bundle sees a new field's zero.
type Workload struct {
	Profile string `json:"Profile"` // quick | reference (default quick)
	// Scenario is storage (the default), memory, localmemory or all:
	// which of the reference's server set-ups runs.
	Scenario string `json:"Scenario"`
	// Ladder measures the layers below RESP after the matrix: fio,
	// `tierbench device`, `tierbench kv`; on by default in the reference
	// profile.
	Ladder bool `json:"Ladder"`

	DBSize      int64 `json:"DBSize"`      // keys loaded and read (--dbsize)
	KeyLength   int   `json:"KeyLength"`   // bytes per key (--keylength)
	ValueLength int   `json:"ValueLength"` // bytes per value (--valuelength)
	Threads     []int `json:"Threads"`     // client connections per cell, one table column each (-t)
	Batch       int   `json:"Batch"`       // GETs per pipelined batch (-b)
	CellSeconds int   `json:"CellSeconds"` // seconds per measured GET phase (bench --runtime)
	Passes      int   `json:"Passes"`      // passes per cell; the table shows their median

	WarmupSeconds int `json:"WarmupSeconds"` // seconds of the unrecorded first GET phase (default CellSeconds)
	LoadThreads   int `json:"LoadThreads"`   // loader connections (default 8)
	LoadBatch     int `json:"LoadBatch"`     // keys per loader MSET batch (default 4096 as in the reference)

	// Memory, Page, Segment and Index size the server, passed to
	// `tierbench server` as Garnet writes them.
	Memory  string `json:"Memory"`
	Page    string `json:"Page"`
	Segment string `json:"Segment"`
	Index   string `json:"Index"`
	// ReadCacheMemory is the server's --readcache-memory: "" off, one
	// size, or a list, a read-cache sweep; absent before the read cache
	// and when off.
	ReadCacheMemory string `json:"ReadCacheMemory,omitempty"`

	Backends []string `json:"Backends"` // libaio, uring
	Pins     []string `json:"Pins"`     // pinned, none

	DataDir string `json:"DataDir"` // the server's --logdir; wiped before each row
	OutDir  string `json:"OutDir"`  // the results bundle; created
	Resume  string `json:"Resume"`  // a bundle to complete: its cells already done are skipped

	Runtime string `json:"Runtime"` // docker | process | auto
	Binary  string `json:"Binary"`  // the static tierbench binary to run (default: this executable)

	// ServerHost and ClientHosts are Docker engines: the server's, and
	// the client hosts' comma-separated; both empty: the local engine or
	// processes. ServerBind is where the server listens (default: its
	// address on the route to the first other client host).
	ServerHost  string `json:"ServerHost"`
	ClientHosts string `json:"ClientHosts"`
	ServerBind  string `json:"ServerBind"`

	ServerAddr string `json:"ServerAddr"` // HOST:PORT of a server already running: measure it instead of starting one
	ServerPID  int    `json:"ServerPID"`  // its pid on this host, for /proc/<pid>/io
	// ServerPIDs are the pids of a cluster's masters (--server-pid a,b,c),
	// each matched to the node whose listening socket it owns.
	ServerPIDs []int `json:"ServerPIDs"`
	// Shards lists the shard counts to run, one row each per backend × pin
	// (--shards 1,2); empty is one server. DataDirs is a --data list, one
	// directory per shard.
	Shards   []int    `json:"Shards"`
	DataDirs []string `json:"DataDirs"`
	SkipLoad bool     `json:"SkipLoad"` // do not load; still verify the key count

	Force      bool `json:"Force"`      // measure even when a preflight check failed
	NoFio      bool `json:"NoFio"`      // skip the fio baseline (the report then has no ceiling)
	FioSeconds int  `json:"FioSeconds"` // seconds per step of the fio depth sweep (0 = preflight's default)
	Silent     bool `json:"Silent"`     // no progress lines on stderr

	// StateDir keeps pid files of running children so a later run can
	// remove what an interrupted one left.
	StateDir string `json:"StateDir"`
	// MetricsAddr serves the run's progress and the cell under way in
	// the Prometheus text format; "" serves nothing (and is not written).
	MetricsAddr string `json:"MetricsAddr,omitempty"`

	// MaxMissRatio is the share of missed GETs a cell may have and still be
	// shown (--max-miss-ratio); 0, the default, keeps out a cell with any
	// miss. It also bounds the sampled hit check before measuring.
	MaxMissRatio float64 `json:"MaxMissRatio"`
	// KeepData keeps the last row's segment files in DataDir when the run
	// ends (--keep-data); by default a run removes what it wrote there.
	KeepData bool `json:"KeepData"`
	// Latency runs the fixed-rate latency steps after each row's passes
	// (--latency); on in the reference profile.
	Latency bool `json:"Latency"`
	// ServerInfo keeps every node's whole INFO after each row's passes
	// in server-info.jsonl (--server-info); absent when off.
	ServerInfo bool `json:"ServerInfo,omitempty"`

	// Servers are the catalogue names (package sut) of the servers
	// measured side by side, one set of rows each (--server); empty is
	// tierbench's own alone. ServerCmd starts one more from a template
	// (--server-cmd), ServerBin is the program file of the one catalogue
	// server besides tierbench (--server-bin), ServerImage the image that
	// runs it under Docker (--server-image), which is pulled only with
	// Pull (--pull). Absent before servers were a dimension.
	Servers     []string `json:"Servers,omitempty"`
	ServerCmd   string   `json:"ServerCmd,omitempty"`
	ServerBin   string   `json:"ServerBin,omitempty"`
	ServerImage string   `json:"ServerImage,omitempty"`
	Pull        bool     `json:"Pull,omitempty"`

	// KeyDist is the key distribution of the measured cells and the
	// latency steps (--key-dist, as keyspace.ParseDist reads it); empty
	// is uniform. Mix makes each measured cell a mix (--workload: a
	// preset of bench.Workloads or OP:PERCENT,…; "Workload" in the
	// bundle); empty is GETs alone.
	KeyDist string `json:"KeyDist,omitempty"`
	Mix     string `json:"Workload,omitempty"`

	// SLO is the latency bound of the capacity search after each row's
	// passes (--slo p99=1ms), as SLO.String spells it; "" runs none.
	SLO string `json:"SLO,omitempty"`

	// TLS is --tls: on, off or both (a row dimension); "" is on across
	// hosts beyond loopback and off otherwise. ServerTLS and ServerUser
	// come from --server-addr rediss://user@host:port (its password is
	// never recorded); CACert and Insecure check its certificate.
	TLS        string `json:"TLS,omitempty"`
	ServerTLS  bool   `json:"ServerTLS,omitempty"`
	ServerUser string `json:"ServerUser,omitempty"`
	// AuthFile and AuthEnv give that server's password: the first line
	// of a file, or an environment variable by name (never a command
	// line, which every user of the host can read), so --resume reads it
	// again.
	AuthFile string `json:"AuthFile,omitempty"`
	AuthEnv  string `json:"AuthEnv,omitempty"`
	CACert   string `json:"CACert,omitempty"`
	Insecure bool   `json:"Insecure,omitempty"`

	// Given lists the flags set explicitly, by name without dashes
	// ("passes", "warmup-seconds", "data").
	Given []string `json:"Given"`
}

// ScenarioName is the run's scenario, storage when none was named (a
// bundle from before scenarios).
func (w Workload) ScenarioName() string { return cmp.Or(w.Scenario, ScenarioStorage) }

// BatchOf is row's -b: the row's own (a scenario's batch rows), else the
// run's.
func (w Workload) BatchOf(row Row) int { return cmp.Or(row.Batch, w.Batch) }

// GivenFlag reports whether the flag name was set explicitly.
func (w Workload) GivenFlag(name string) bool { return slices.Contains(w.Given, name) }

// CeilingApplies reports whether the fio ceiling of the data dir bounds
// the run's cells: always for the tiered servers the run starts on it, and
// for a server at --server-addr only when the user named where its data
// lives (--data or TIERBENCH_DATA). Without that, the report says there is no ceiling
// rather than divide by a disk the server may never touch.
func (w Workload) CeilingApplies() bool {
	if s := w.ScenarioName(); s == ScenarioMemory || s == ScenarioLocalMemory {
		return false // no disk under the store: nothing to divide by
	}
	return w.ServerAddr == "" || w.GivenFlag("data")
}

// IsScenarioRow says whether a row is judged by a RAM scenario's check
// (memory, localmemory) rather than the storage one.
func IsScenarioRow(row Row) bool {
	return row.Backend == ScenarioMemory || row.Backend == ScenarioLocalMemory
}

// recordOverheadBytes is the store's per-record header, used only to
// estimate the dataset's size on the device.
const recordOverheadBytes = 16

// RecordBytes estimates one record's bytes on the log: header, key and
// value rounded up to 8 bytes (16 + 16 + 96 = 128 for the reference).
func RecordBytes(keyLength, valueLength int) int {
	return (recordOverheadBytes + keyLength + valueLength + 7) &^ 7
}

// DatasetBytes is what the server reads: every record of the dataset on
// the device. The fio ceiling is measured over as much: on a smaller file
// set the disk's and the hypervisor's caches serve a larger share, which
// held the reference run here well below a ceiling measured on 8 × 64 MiB.
func (w Workload) DatasetBytes() int64 {
	return w.DBSize * int64(RecordBytes(w.KeyLength, w.ValueLength))
}
