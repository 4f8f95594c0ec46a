package preflight

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// CheckFreeMemory refuses, before anything is loaded, a memory or
// localmemory dataset larger than the host's available memory.
func CheckFreeMemory(c plan.Config, meminfoPath string) error {
	if !c.Spec().InRAM || c.Force {
		return nil
	}
	data := c.DBSize * int64(results.RecordBytes(c.KeyLength, c.ValueLength))
	need, servers := data, ""
	if c.Spec().ShardMemory {
		// Every shard holds its own in-memory log and index besides its
		// part of the data on the in-RAM device.
		n := int64(c.MaxShards())
		mem, _ := size.Parse(c.Memory)
		index, _ := size.Parse(c.Index)
		if extra := n * (mem + index); extra > 0 {
			need += extra
			servers = fmt.Sprintf(", plus %d %s × (--memory %s + --index %s) = %s in all,", n, human.Plural(int(n), "shard"), c.Memory, c.Index, human.Bytes(need))
		}
	}
	b, err := os.ReadFile(meminfoPath)
	if err != nil {
		return fmt.Errorf("preflight: read %s for the free-memory check: %w", meminfoPath, err)
	}
	avail, err := memAvailable(b)
	if err != nil {
		return fmt.Errorf("preflight: %s: %w", meminfoPath, err)
	}
	if need > avail {
		return fmt.Errorf("%w: --scenario %s keeps the dataset in RAM: %d keys × %d B = %s%s is larger than the %s of memory available; lower --dbsize (--force measures anyway)",
			fault.ErrConfig, c.ScenarioName(), c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(data), servers, human.Bytes(avail))
	}
	return nil
}

// memAvailable parses /proc/meminfo's MemAvailable line into bytes.
func memAvailable(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb < 0 {
				return 0, fmt.Errorf("MemAvailable %q is not a size in kB", f[1])
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemAvailable line")
}
