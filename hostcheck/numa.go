package hostcheck

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// NUMANode is one node of /sys/devices/system/node.
type NUMANode struct {
	ID          int    `json:"id"`
	CPUList     string `json:"cpulist"` // kernel format, e.g. "0-55,112-167"
	CPUs        int    `json:"cpus"`
	MemoryBytes int64  `json:"memory_bytes"`
}

const nodeDir = "/sys/devices/system/node"

// readNUMA lists the NUMA nodes with their CPUs and memory. A kernel built
// without NUMA has no node directory: that is an error naming the path.
func (t tree) readNUMA() ([]NUMANode, error) {
	entries, err := os.ReadDir(t.path(nodeDir))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", t.where(nodeDir), err)
	}
	var nodes []NUMANode
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "node")
		if !ok {
			continue
		}
		id, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		dir := nodeDir + "/" + e.Name()
		list, err := t.string(dir + "/cpulist")
		if err != nil {
			return nil, err
		}
		cpus, err := parseCPUList(list)
		if err != nil {
			return nil, fmt.Errorf("read %s: %v", t.where(dir+"/cpulist"), err)
		}
		mem, err := t.meminfo(dir+"/meminfo", "MemTotal")
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, NUMANode{ID: id, CPUList: formatCPUList(cpus), CPUs: len(cpus), MemoryBytes: mem["MemTotal"]})
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("list %s: no node<N> directories", t.where(nodeDir))
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

// numaCheck passes with two or more nodes that have CPUs, and warns on one:
// the pinned rows then use disjoint halves of one node's CPUs.
func numaCheck(nodes []NUMANode, err error) Check {
	if err != nil {
		return Check{Name: CheckNUMA, Status: Fail, Detail: err.Error()}
	}
	var parts []string
	withCPUs := 0
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("node%d cpus %s (%d) %s", n.ID, n.CPUList, n.CPUs, humanBytes(n.MemoryBytes)))
		if n.CPUs > 0 {
			withCPUs++
		}
	}
	detail := fmt.Sprintf("%d node(s): %s", len(nodes), strings.Join(parts, "; "))
	if withCPUs < 2 {
		return Check{Name: CheckNUMA, Status: Warn, Detail: detail +
			"; fewer than two nodes with CPUs: the pinned rows will use disjoint CPU halves of one node and say so"}
	}
	return Check{Name: CheckNUMA, Status: Pass, Detail: detail}
}
