package results

import "github.com/tierbench/tierbench/internal/fio"

// PinPinned is the Row.Pin of a row whose server ran on a cpuset of its
// own (tierbench run --pin pinned).
const PinPinned = "pinned"

// FioCeiling is one fio ceiling at 512 B: the sweep's best IOPS, where fio
// ran, and what fio's own CPU said at that point.
type FioCeiling struct {
	IOPS float64 `json:"iops"`
	// CPUs is the CPU list fio was pinned to; "" on the whole host.
	CPUs string `json:"cpus,omitempty"`
	// CPUCount is how many CPUs fio's jobs could run on.
	CPUCount int `json:"cpu_count,omitempty"`
	// Depth and Jobs are the best point's reads in flight and fio jobs.
	Depth int `json:"depth,omitempty"`
	Jobs  int `json:"jobs,omitempty"`
	// CPU is fio's CPU per read and share of its CPUs at the best point;
	// Bound means the ceiling is fio's CPU, not the disk's.
	fio.CPU
	// StealShare is the hypervisor's share of the host's CPU time while
	// the sweep ran; nil where not counted.
	StealShare *float64 `json:"steal_share,omitempty"`
}

// Ceilings are a bundle's fio ceilings: Host is fio free on the whole
// host, the unpinned rows' ceiling; Pinned is fio on the pinned server's
// own CPUs (and memory node), the pinned rows' ceiling, zero when it was
// not measured (bundles from before it hold their pinned rows against
// Host).
type Ceilings struct {
	Host   FioCeiling `json:"host"`
	Pinned FioCeiling `json:"pinned"`
}

// For is the ceiling a row is held against and whether it is the pinned
// one: a pinned row's CPU budget is its cpuset, so fio on the same CPUs
// is its ceiling, not fio on every CPU of the host.
func (c Ceilings) For(row Row) (FioCeiling, bool) {
	if row.Pin == PinPinned && c.Pinned.IOPS > 0 {
		return c.Pinned, true
	}
	return c.Host, false
}
