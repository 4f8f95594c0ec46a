package sweep

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// The memory-tier sweep: --memory with more than one size makes the
// server's in-memory log a row dimension (results.Row.Memory) over one
// dataset. Each size is a row of its own, so each is a fresh server on a
// wiped data dir loaded with the same keys and values: the store does
// not recover its index from the log on a restart, so a restart over the
// loaded data would start empty, and a reload is the one way to give
// every size the same dataset. A sweep's cells are partly served from
// memory by design: results.JudgePass keeps none out for it, the load
// check does not ask for the log on the device, and each pass records
// the share of its GETs the store served from the device (INFO stats
// device_gets) beside its device bytes per GET.

// validateMemory refuses what a sweep cannot measure right.
func validateMemory(c plan.Config, bad func(string, ...any)) {
	sizes := c.MemorySweep()
	if sizes == nil {
		return
	}
	if !checkSizeList("memory", c.Memory, bad) {
		return
	}
	switch {
	case c.ScenarioName() != results.ScenarioStorage:
		bad("--memory %s (a memory-tier sweep) applies to --scenario storage: the RAM scenarios hold their data in RAM whatever the in-memory log", c.Memory)
	case c.ServerAddr != "":
		bad("--memory %s (a memory-tier sweep) restarts the server per size; the server at --server-addr is not the run's to restart", c.Memory)
	case c.MaxShards() > 1:
		bad("--memory %s (a memory-tier sweep) with --shards above 1 is not supported: sweep one server", c.Memory)
	case c.ForeignServers():
		bad("--memory %s (a memory-tier sweep) measures tierbench's own server: its store's counters give each cell's device share", c.Memory)
	}
}

// MemoryRows repeats every row once per size of a sweep, smallest first,
// each labelled with its size; without a sweep the rows stay as planned.
func MemoryRows(c plan.Config, rows []results.Row) []results.Row {
	sizes := bySize(c.MemorySweep())
	if sizes == nil {
		return rows
	}
	return plan.ExpandRows(rows, sizes, func(r *results.Row, m string) {
		r.Memory = m
		r.Label = fmt.Sprintf("--memory %s, %s", m, r.Label)
	})
}

// RowMemory is the --memory of a row's server.
func RowMemory(c plan.Config, row results.Row) string { return cmp.Or(row.Memory, c.Memory) }

// The read-cache sweep: --readcache-memory with more than one size makes
// the server's read cache a row dimension (results.Row.ReadCache), as
// --memory's sizes are, and on its own or beside a --memory sweep (each
// --memory row once per cache size). One size is every server's cache,
// no row of its own. Both need --storage-tier's servers: the cache holds
// records read from the device.

// readCacheSweep is the sizes of a read-cache sweep, in the order given;
// nil when --readcache-memory names one size or none.
func readCacheSweep(c plan.Config) []string {
	if !strings.ContainsAny(strings.TrimSpace(c.ReadCacheMemory), ", \t") {
		return nil
	}
	sizes, err := plan.SplitList(c.ReadCacheMemory)
	if err != nil {
		return []string{c.ReadCacheMemory}
	}
	return sizes
}

// validateReadCache refuses a size that does not parse or repeats,
// and a cache where no server of the run has one.
func validateReadCache(c plan.Config, bad func(string, ...any)) {
	if strings.TrimSpace(c.ReadCacheMemory) == "" {
		return
	}
	if !checkSizeList("readcache-memory", c.ReadCacheMemory, bad) {
		return
	}
	switch {
	case c.ScenarioName() != results.ScenarioStorage:
		bad("--readcache-memory %s applies to --scenario storage: the cache holds records read from the device", c.ReadCacheMemory)
	case c.ServerAddr != "":
		bad("--readcache-memory %s sets the server the run starts; the server at --server-addr is not the run's", c.ReadCacheMemory)
	case c.ForeignServers():
		bad("--readcache-memory %s is tierbench's own server's flag", c.ReadCacheMemory)
	}
}

// ReadCacheRows repeats every row once per size of a read-cache sweep,
// smallest first, each labelled with its size; without a sweep the rows
// stay as planned.
func ReadCacheRows(c plan.Config, rows []results.Row) []results.Row {
	sizes := bySize(readCacheSweep(c))
	if sizes == nil {
		return rows
	}
	return plan.ExpandRows(rows, sizes, func(r *results.Row, m string) {
		r.ReadCache = m
		r.Label = fmt.Sprintf("--readcache-memory %s, %s", m, r.Label)
	})
}

// ReadCacheArgs are the flags that give row's server its read cache:
// the row's size in a sweep, else the run's one size; none when off.
func ReadCacheArgs(c plan.Config, row results.Row) []string {
	m := cmp.Or(row.ReadCache, c.ReadCacheMemory)
	if m == "" || readCacheSweep(c) != nil && row.ReadCache == "" {
		return nil
	}
	return []string{"--readcache-memory", m}
}

// checkSizeList refuses a list of sizes given to --flag that does not
// split, holds something that is not a size, or names one size twice; it
// says whether the list split, so that the caller's checks of the flag's
// use can follow.
func checkSizeList(flag, list string, bad func(string, ...any)) bool {
	sizes, err := plan.SplitList(list)
	if err != nil {
		bad("--%s %q: %v", flag, list, err)
		return false
	}
	seen := map[int64]string{}
	for _, s := range sizes {
		n, err := size.Parse(s)
		if err != nil {
			bad("--%s %s: %v", flag, list, err)
			continue
		}
		if prev, ok := seen[n]; ok {
			bad("--%s %s: %s and %s are the same size; give each size once", flag, list, prev, s)
		}
		seen[n] = s
	}
	return true
}

// bySize is a copy of sizes, smallest first; nil stays nil.
func bySize(sizes []string) []string {
	sizes = slices.Clone(sizes)
	slices.SortStableFunc(sizes, func(a, b string) int {
		x, _ := size.Parse(a)
		y, _ := size.Parse(b)
		return cmp.Compare(x, y)
	})
	return sizes
}
