package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/orchestrator/fault"
)

// ShardCounts is --shards with its default.
func (c Config) ShardCounts() []int {
	if len(c.Shards) == 0 {
		return []int{1}
	}
	return c.Shards
}

func (c Config) MaxShards() int { return slices.Max(c.ShardCounts()) }

// resolveShards checks --shards and splits a --data list, one directory
// per shard.
func (c *Config) resolveShards() error {
	for _, n := range c.Shards {
		if n < 1 || n > maxShards {
			return fmt.Errorf("%w: --shards %d is outside 1..%d", fault.ErrConfig, n, maxShards)
		}
	}
	if len(c.Shards) > 0 && c.ServerAddr != "" {
		return fmt.Errorf("%w: --shards starts tierbench shards; with --server-addr the cluster the node belongs to is measured as it is", fault.ErrConfig)
	}
	if strings.Contains(c.DataDir, ",") {
		c.DataDirs = nil
		for _, d := range strings.Split(c.DataDir, ",") {
			if d = strings.TrimSpace(d); d == "" {
				return fmt.Errorf("%w: --data %q has an empty directory", fault.ErrConfig, c.DataDir)
			}
			c.DataDirs = append(c.DataDirs, d)
		}
		c.DataDir = c.DataDirs[0]
	}
	if len(c.DataDirs) > 1 && len(c.DataDirs) < c.MaxShards() {
		return fmt.Errorf("%w: --data lists %d directories for --shards %d: give one per shard, or one directory to hold them all", fault.ErrConfig, len(c.DataDirs), c.MaxShards())
	}
	if c.MaxShards() > 1 && c.Runtime == RuntimeDocker {
		return fmt.Errorf("%w: --shards above 1 runs its shards as pinned processes; --runtime docker does not start clusters (use --runtime process)", fault.ErrConfig)
	}
	return nil
}

// maxShards bounds --shards: one process per shard on one host.
const maxShards = 64

// FormatInts spells a list of counts as the flags take it: "1,2,4".
func FormatInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}
