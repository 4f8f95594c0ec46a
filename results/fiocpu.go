package results

// FileFioCPU holds fio's CPU per read at cells' own depths, one JSON line
// a cell, appended like ceilings.jsonl.
const FileFioCPU = "fio-cpu.jsonl"

// FioCPURecord is one line of fio-cpu.jsonl: fio run once, right after a
// row's passes with its server idle, at a cell's median disk depth, on
// the row's CPUs, through the kernel interface the row's server drives
// the disk with. The server's CPU per GET is held against it: a tiered
// GET is a device read plus a little only beside the same read at the
// same depth, and the preflight curve has neither where the cell's depth
// falls between its points or the row's interface is not the curve's
// (libaio beside io_uring, which spends less of the kernel per read with
// registered buffers, whoever calls it). Shares stay against the
// ceiling.
type FioCPURecord struct {
	Kind    string `json:"kind"` // "fio-cpu"
	Schema  int    `json:"schema_version"`
	Row     Row    `json:"row"`
	Threads int    `json:"threads"`
	// Engine is fio's --ioengine: the row's backend's interface.
	Engine string `json:"engine"`
	// Depth is the cell's median disk depth rounded up, run as Jobs ×
	// IODepth.
	Depth          int     `json:"depth"`
	Jobs           int     `json:"jobs"`
	IODepth        int     `json:"iodepth"`
	RuntimeSeconds int     `json:"runtime_seconds"`
	Files          int     `json:"files"`
	CPUs           string  `json:"cpus,omitempty"` // "" free
	IOPS           float64 `json:"iops"`
	FioCost
}

// ReadFioCPU reads fio-cpu.jsonl; none when the bundle has no such file
// (no row of tierbench's on a disk, or an older tierbench).
func ReadFioCPU(dir string) ([]FioCPURecord, error) {
	return readLines(dir, FileFioCPU, ParseFioCPU)
}

// ParseFioCPU parses fio-cpu.jsonl, refusing another kind or a newer
// schema.
func ParseFioCPU(data []byte) ([]FioCPURecord, error) {
	return ParseJSONLines(data, FileFioCPU, func(rec FioCPURecord) error { return checkKind("fio-cpu", rec.Kind, rec.Schema) })
}

// FioCPUFor is the record of row's cell at threads that fio completed,
// if any.
func FioCPUFor(recs []FioCPURecord, row Row, threads int) (FioCPURecord, bool) {
	for _, r := range recs {
		if r.Row == row && r.Threads == threads && r.Error == "" && r.CPUMicrosPerRead > 0 {
			return r, true
		}
	}
	return FioCPURecord{}, false
}
