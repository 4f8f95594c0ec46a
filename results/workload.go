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
	Profile  string `json:"Profile"`
	Scenario string `json:"Scenario"`
	Ladder   bool   `json:"Ladder"`

	DBSize      int64 `json:"DBSize"`
	KeyLength   int   `json:"KeyLength"`
	ValueLength int   `json:"ValueLength"`
	Threads     []int `json:"Threads"`
	Batch       int   `json:"Batch"`
	CellSeconds int   `json:"CellSeconds"`
	Passes      int   `json:"Passes"`

	WarmupSeconds int `json:"WarmupSeconds"`
	LoadThreads   int `json:"LoadThreads"`
	LoadBatch     int `json:"LoadBatch"`

	Memory  string `json:"Memory"`
	Page    string `json:"Page"`
	Segment string `json:"Segment"`
	Index   string `json:"Index"`
	// ReadCacheMemory is the server's --readcache-memory (one size, or a
	// read-cache sweep's list); absent before the read cache and when off.
	ReadCacheMemory string `json:"ReadCacheMemory,omitempty"`

	Backends []string `json:"Backends"`
	Pins     []string `json:"Pins"`

	DataDir string `json:"DataDir"`
	OutDir  string `json:"OutDir"`
	Resume  string `json:"Resume"`

	Runtime string `json:"Runtime"`
	Binary  string `json:"Binary"`

	ServerHost  string `json:"ServerHost"`
	ClientHosts string `json:"ClientHosts"`
	ServerBind  string `json:"ServerBind"`

	ServerAddr string   `json:"ServerAddr"`
	ServerPID  int      `json:"ServerPID"`
	ServerPIDs []int    `json:"ServerPIDs"`
	Shards     []int    `json:"Shards"`
	DataDirs   []string `json:"DataDirs"`
	SkipLoad   bool     `json:"SkipLoad"`

	Force      bool `json:"Force"`
	NoFio      bool `json:"NoFio"`
	FioSeconds int  `json:"FioSeconds"`
	Silent     bool `json:"Silent"`

	StateDir string `json:"StateDir"`
	// MetricsAddr is where --metrics-addr served the run's progress;
	// absent when it was not given.
	MetricsAddr string `json:"MetricsAddr,omitempty"`

	MaxMissRatio float64 `json:"MaxMissRatio"`
	KeepData     bool    `json:"KeepData"`
	Latency      bool    `json:"Latency"`

	// Servers, ServerCmd, ServerBin, ServerImage and Pull: the servers
	// measured side by side (--server …); absent before servers were a
	// dimension, so a bundle of tierbench's own server writes none.
	Servers     []string `json:"Servers,omitempty"`
	ServerCmd   string   `json:"ServerCmd,omitempty"`
	ServerBin   string   `json:"ServerBin,omitempty"`
	ServerImage string   `json:"ServerImage,omitempty"`
	Pull        bool     `json:"Pull,omitempty"`

	// KeyDist and Workload: the key distribution (--key-dist, as
	// keyspace.Dist spells it) and the operation mix (--workload: a
	// preset's name or OP:PERCENT,…) of the measured cells; absent before
	// they were flags, and when the cells were uniform GETs.
	KeyDist  string `json:"KeyDist,omitempty"`
	Workload string `json:"Workload,omitempty"`

	// SLO is the bound run --slo searched each row's capacity under, as
	// SLO.String spells it; absent when there was no search.
	SLO string `json:"SLO,omitempty"`

	// TLS is --tls (on, off, both; "" decided by where the server
	// listens); ServerTLS and ServerUser say --server-addr was rediss://
	// and as which user (its password is never recorded); CACert and
	// Insecure are how its certificate was checked. Absent before TLS.
	TLS        string `json:"TLS,omitempty"`
	ServerTLS  bool   `json:"ServerTLS,omitempty"`
	ServerUser string `json:"ServerUser,omitempty"`
	// AuthFile and AuthEnv are where the run read that server's
	// password (--auth-file, --auth-env), so --resume reads it again;
	// the password itself is never recorded.
	AuthFile string `json:"AuthFile,omitempty"`
	AuthEnv  string `json:"AuthEnv,omitempty"`
	CACert   string `json:"CACert,omitempty"`
	Insecure bool   `json:"Insecure,omitempty"`

	// Given lists the flags set explicitly, by name without dashes.
	Given []string `json:"Given"`
}

// ScenarioName is the run's scenario, storage when none was named (a
// bundle from before scenarios).
func (w Workload) ScenarioName() string { return cmp.Or(w.Scenario, ScenarioStorage) }

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
// made the reference run here reach only 72–93 % of a ceiling measured on
// 8 × 64 MiB.
func (w Workload) DatasetBytes() int64 {
	return w.DBSize * int64(RecordBytes(w.KeyLength, w.ValueLength))
}
