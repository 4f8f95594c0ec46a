package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierbench/tierbench/internal/fio"
)

// Preflight is the part of preflight.json (the JSON document `tierbench
// preflight --json` prints) that results and their reports read: each
// check's verdict, the fingerprint as written and the fio baseline.
type Preflight struct {
	Checks      []PreflightCheck `json:"checks"`
	Fingerprint json.RawMessage  `json:"fingerprint"`
	Fio         *PreflightFio    `json:"fio"`
	// FioPinned is the sweep with fio pinned to the pinned server's CPUs
	// (absent from bundles from before it, and from runs with no pinned
	// row).
	FioPinned *PreflightFio `json:"fio_pinned,omitempty"`
}

// PreflightFio is the part of one fio baseline that results read.
type PreflightFio struct {
	Engine  string `json:"engine"`
	Jobs    int    `json:"jobs"`
	IODepth int    `json:"iodepth"`
	Files   int    `json:"files"`
	Results []struct {
		BlockBytes int     `json:"block_bytes"`
		IOPS       float64 `json:"iops"`
	} `json:"results"`
	Sweep []struct {
		Depth   int     `json:"depth"`
		Jobs    int     `json:"jobs"`
		IOPS    float64 `json:"iops"`
		UsrCPU  float64 `json:"usr_cpu"`
		SysCPU  float64 `json:"sys_cpu"`
		Block   int     `json:"block_bytes"`
		IODepth int     `json:"iodepth"`
	} `json:"sweep"`
	CPUs     string `json:"cpus"`
	CPUCount int    `json:"cpu_count"`
	// StealShare is the hypervisor's share of the host's CPU time while
	// the sweep ran; nil where not counted.
	StealShare *float64 `json:"steal_share"`
}

// PreflightCheck is one check of the preflight.
type PreflightCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // pass | warn | fail
	Detail string `json:"detail"`
}

// ParsePreflight reads preflight's output: its JSON document is its last
// output, warnings may come before it, and it must hold checks.
func ParsePreflight(out []byte) (Preflight, error) {
	var p Preflight
	i := bytes.IndexByte(out, '{')
	if i < 0 {
		return p, fmt.Errorf("results: preflight output: no JSON document in %q", Clip(out))
	}
	if err := json.Unmarshal(out[i:], &p); err != nil {
		return p, fmt.Errorf("results: preflight output is not its JSON document: %w: %q", err, Clip(out))
	}
	if len(p.Checks) == 0 {
		return p, fmt.Errorf("results: preflight output has no checks: %q", Clip(out))
	}
	return p, nil
}

// ReadPreflight reads the bundle's preflight.json and its raw bytes; a
// bundle without one (or whose preflight failed, as a --force run may
// keep) gives a zero Preflight, and the raw bytes when there are some.
func ReadPreflight(dir string) (Preflight, []byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, FilePreflight))
	if errors.Is(err, os.ErrNotExist) {
		return Preflight{}, nil, nil
	}
	if err != nil {
		return Preflight{}, nil, fmt.Errorf("results: read %s: %w", FilePreflight, err)
	}
	p, _ := ParsePreflight(raw) // a --force run may hold only an error
	return p, raw, nil
}

// Failed returns the checks that failed.
func (p Preflight) Failed() []PreflightCheck {
	var out []PreflightCheck
	for _, c := range p.Checks {
		if c.Status == "fail" {
			out = append(out, c)
		}
	}
	return out
}

// FioIOPS returns the fio ceiling at one block size; 0 when not measured.
func (p Preflight) FioIOPS(blockBytes int) float64 { return p.Fio.iops(blockBytes) }

func (f *PreflightFio) iops(blockBytes int) float64 {
	if f == nil {
		return 0
	}
	for _, r := range f.Results {
		if r.BlockBytes == blockBytes {
			return r.IOPS
		}
	}
	return 0
}

// ceiling is the 512 B ceiling of one baseline, judged by fio's CPU at
// the sweep's best point; zero when not measured.
func (f *PreflightFio) ceiling() FioCeiling {
	c := FioCeiling{IOPS: f.iops(512)}
	if c.IOPS <= 0 {
		return FioCeiling{}
	}
	c.CPUs, c.StealShare = f.CPUs, f.StealShare
	best := -1
	for i, p := range f.Sweep {
		if best < 0 || p.IOPS > f.Sweep[best].IOPS {
			best = i
		}
	}
	if best >= 0 {
		p := f.Sweep[best]
		c.Depth, c.Jobs = p.Depth, p.Jobs
		c.CPU = fio.CPUOf(p.UsrCPU, p.SysCPU, p.Jobs, p.IOPS, f.CPUCount)
		c.CPUCount = f.CPUCount
		if c.CPUCount <= 0 {
			c.CPUCount = p.Jobs
		}
	}
	return c
}

// Ceilings are the bundle's 512 B ceilings: fio free on the host and,
// when measured, fio pinned to the pinned server's CPUs.
func (p Preflight) Ceilings() Ceilings {
	return Ceilings{Host: p.Fio.ceiling(), Pinned: p.FioPinned.ceiling()}
}

// Clip cuts a tool's output to what an error message can carry.
func Clip(b []byte) string {
	const n = 600
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
