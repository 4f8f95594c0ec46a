package rig

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/results"
)

// ProcRoot is where /proc is read from; tests point it at testdata trees.
type ProcRoot string

// ReadBytes returns read_bytes of /proc/<pid>/io: the bytes the process
// caused to be fetched from the storage layer.
func (p ProcRoot) ReadBytes(pid int) (int64, error) { return p.ioField(pid, "read_bytes") }

// WriteBytes returns write_bytes of /proc/<pid>/io: the bytes the process
// caused to be sent to the storage layer.
func (p ProcRoot) WriteBytes(pid int) (int64, error) { return p.ioField(pid, "write_bytes") }

// ioField reads one byte count of /proc/<pid>/io.
func (p ProcRoot) ioField(pid int, name string) (int64, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "io")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("orchestrator: read device bytes of pid %d: %w", pid, err)
	}
	v, err := procIOField(data, name)
	if err != nil {
		return 0, fmt.Errorf("orchestrator: %s: %w", path, err)
	}
	return v, nil
}

// ParseProcIO finds the read_bytes line of a /proc/<pid>/io file.
func ParseProcIO(data []byte) (int64, error) { return procIOField(data, "read_bytes") }

// procIOField finds the line of one field of a /proc/<pid>/io file.
func procIOField(data []byte, field string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(name) != field {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s %q is not a byte count", field, strings.TrimSpace(val))
		}
		return v, nil
	}
	return 0, fmt.Errorf("no %s line", field)
}

// Placement reads Cpus_allowed_list and Mems_allowed_list of
// /proc/<pid>/status, and the memory policy of the first mapping with one
// from /proc/<pid>/numa_maps (set_mempolicy does not show in status).
func (p ProcRoot) Placement(pid int) (results.Placement, error) {
	path := filepath.Join(string(p), strconv.Itoa(pid), "status")
	data, err := os.ReadFile(path)
	if err != nil {
		return results.Placement{}, fmt.Errorf("orchestrator: read placement of pid %d: %w", pid, err)
	}
	pl, err := ParseStatus(data)
	if err != nil {
		return results.Placement{}, fmt.Errorf("orchestrator: %s: %w", path, err)
	}
	if maps, err := os.ReadFile(filepath.Join(string(p), strconv.Itoa(pid), "numa_maps")); err == nil {
		pl.Policy = ParseNumaMapsPolicy(maps)
	}
	return pl, nil
}

func ParseStatus(data []byte) (results.Placement, error) {
	var pl results.Placement
	var haveCPUs, haveMems bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch name {
		case "Cpus_allowed_list":
			if _, err := ParseCPUList(val); err != nil {
				return pl, fmt.Errorf("Cpus_allowed_list: %w", err)
			}
			pl.CPUs, haveCPUs = val, true
		case "Mems_allowed_list":
			if _, err := ParseCPUList(val); err != nil {
				return pl, fmt.Errorf("Mems_allowed_list: %w", err)
			}
			pl.Mems, haveMems = val, true
		}
	}
	if !haveCPUs || !haveMems {
		return pl, fmt.Errorf("no Cpus_allowed_list or Mems_allowed_list line")
	}
	return pl, nil
}

// ParseNumaMapsPolicy returns the policy of the first mapping that has a
// non-default one ("bind:0"), else "default".
func ParseNumaMapsPolicy(data []byte) string {
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] != "default" {
			return f[1]
		}
	}
	return "default"
}

// ParseCPUList parses a kernel cpulist (cpulist.Parse).
func ParseCPUList(s string) ([]int, error) { return cpulist.Parse(s) }

// FormatCPUList writes numbers back as a cpulist (cpulist.Format).
func FormatCPUList(xs []int) string { return cpulist.Format(xs) }

// SameSet reports whether two cpulists name the same numbers.
func SameSet(a, b string) bool {
	x, err1 := ParseCPUList(a)
	y, err2 := ParseCPUList(b)
	return err1 == nil && err2 == nil && slices.Equal(x, y)
}

// CheckPlacement compares the effective placement with the one asked for.
// Memory is honoured either through the cpuset (Mems_allowed_list, as
// Docker sets it) or through a bind memory policy (set_mempolicy, as the
// process runtime sets it).
func CheckPlacement(role string, pl results.Placement) error {
	if pl.WantCPUs != "" && !SameSet(pl.WantCPUs, pl.CPUs) {
		return fmt.Errorf("orchestrator: %s pinning not honoured: asked for cpus %s, Cpus_allowed_list is %s", role, pl.WantCPUs, pl.CPUs)
	}
	if pl.WantMems != "" && !SameSet(pl.WantMems, pl.Mems) && pl.Policy != "bind:"+pl.WantMems {
		return fmt.Errorf("orchestrator: %s pinning not honoured: asked for mems %s, Mems_allowed_list is %s and the memory policy %q", role, pl.WantMems, pl.Mems, pl.Policy)
	}
	return nil
}

// Topology is the host's NUMA layout: the CPUs of each node, in order.
type Topology struct {
	Nodes [][]int
}

// ReadTopology reads /sys/devices/system/node/node<N>/cpulist under root;
// without NUMA information the host is one node with every online CPU.
func ReadTopology(sysRoot string, ncpu int) Topology {
	var t Topology
	for n := 0; ; n++ {
		data, err := os.ReadFile(filepath.Join(sysRoot, "devices/system/node", fmt.Sprintf("node%d", n), "cpulist"))
		if err != nil {
			break
		}
		cpus, err := ParseCPUList(string(data))
		if err != nil || len(cpus) == 0 {
			continue // memory-only node
		}
		t.Nodes = append(t.Nodes, cpus)
	}
	if len(t.Nodes) == 0 {
		all := make([]int, ncpu)
		for i := range all {
			all[i] = i
		}
		t.Nodes = [][]int{all}
	}
	return t
}

// Pinning is where the pinned row puts the server and the client.
type Pinning struct {
	ServerCPUs, ServerMems string
	ClientCPUs, ClientMems string
	Label                  string
}

// Pinned places the server on node 0 and the client on node 1; on a
// one-node host it splits node 0's CPUs into disjoint halves and says so.
func (t Topology) Pinned() (Pinning, error) {
	if len(t.Nodes) >= 2 {
		return Pinning{
			ServerCPUs: FormatCPUList(t.Nodes[0]), ServerMems: "0",
			ClientCPUs: FormatCPUList(t.Nodes[1]), ClientMems: "1",
			Label: "srv node-0 / cli node-1",
		}, nil
	}
	cpus := t.Nodes[0]
	if len(cpus) < 2 {
		return Pinning{}, fmt.Errorf("orchestrator: the pinned row needs two CPUs to separate server and client; this host has %d (use --pin none)", len(cpus))
	}
	half := len(cpus) / 2
	srv, cli := FormatCPUList(cpus[:half]), FormatCPUList(cpus[half:])
	return Pinning{
		ServerCPUs: srv, ServerMems: "0",
		ClientCPUs: cli, ClientMems: "0",
		Label: fmt.Sprintf("srv cpus %s / cli cpus %s (1 node)", srv, cli),
	}, nil
}
