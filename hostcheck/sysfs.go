package hostcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/cpulist"
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
// none) into sorted CPU numbers (cpulist.Parse).
func parseCPUList(s string) ([]int, error) { return cpulist.Parse(s) }

// formatCPUList writes sorted CPU numbers back in the kernel's format.
func formatCPUList(cpus []int) string { return cpulist.Format(cpus) }

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
