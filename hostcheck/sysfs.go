package hostcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// tree reads /sys and /proc files below a root directory. Every error names
// the file as the host sees it (for example /sys/block/vda/queue/rotational)
// and, when the root is not "/", the root too.
type tree struct{ root string }

// path maps a host path such as /proc/meminfo into the tree.
func (t tree) path(hostPath string) string { return filepath.Join(t.root, hostPath) }

func (t tree) where(hostPath string) string {
	if t.root == "/" || t.root == "" {
		return hostPath
	}
	return hostPath + " (under root " + t.root + ")"
}

// string reads a file and trims surrounding white space.
func (t tree) string(hostPath string) (string, error) {
	b, err := os.ReadFile(t.path(hostPath))
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("read %s: file does not exist", t.where(hostPath))
		}
		return "", fmt.Errorf("read %s: %w", t.where(hostPath), err)
	}
	return string(bytes.TrimSpace(b)), nil
}

// int64 reads a file holding one decimal integer.
func (t tree) int64(hostPath string) (int64, error) {
	s, err := t.string(hostPath)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read %s: want an integer, got %q", t.where(hostPath), clip(s))
	}
	return n, nil
}

func (t tree) exists(hostPath string) bool {
	_, err := os.Lstat(t.path(hostPath))
	return err == nil
}

// clip shortens garbage quoted in an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// parseCPUList reads the kernel's cpulist format ("0-55,112-167", "" for
// none) into sorted CPU numbers.
func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	var cpus []int
	if s == "" {
		return cpus, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: %q is not a CPU number", clip(s), part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: %q is not a CPU range", clip(s), part)
			}
		}
		if b-a > 1<<16 || len(cpus) > 1<<16 {
			return nil, fmt.Errorf("cpu list %q: more than 65536 CPUs", clip(s))
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	sort.Ints(cpus)
	return cpus, nil
}

// formatCPUList writes sorted CPU numbers back in the kernel's format.
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

// parseMeminfo reads "Key: value kB" lines (as in /proc/meminfo, or the
// "Node N Key: value kB" lines of a node's meminfo) into bytes per key.
func parseMeminfo(data []byte) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(key)
		if len(fields) == 0 {
			continue
		}
		vf := strings.Fields(val)
		if len(vf) == 0 {
			return nil, fmt.Errorf("line %q has no value", clip(sc.Text()))
		}
		n, err := strconv.ParseInt(vf[0], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("line %q: value is not a count", clip(sc.Text()))
		}
		if len(vf) > 1 && strings.EqualFold(vf[1], "kB") {
			n *= 1024
		}
		out[fields[len(fields)-1]] = n
	}
	return out, sc.Err()
}

// meminfo reads a meminfo-style file and requires key in it.
func (t tree) meminfo(hostPath string, keys ...string) (map[string]int64, error) {
	b, err := os.ReadFile(t.path(hostPath))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("read %s: file does not exist", t.where(hostPath))
		}
		return nil, fmt.Errorf("read %s: %w", t.where(hostPath), err)
	}
	m, err := parseMeminfo(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", t.where(hostPath), err)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("read %s: no %s line", t.where(hostPath), k)
		}
	}
	return m, nil
}
