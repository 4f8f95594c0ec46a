package rig

import (
	"encoding/json"
	"fmt"

	"github.com/tierbench/tierbench/results"
)

// BenchOutput is the JSON document `tierbench bench --json` prints.
type BenchOutput struct {
	Load  *BenchLoad  `json:"load"`
	Cells []BenchCell `json:"cells"`
}

// BenchLoad is what bench says of a load: the keys written and acknowledged.
type BenchLoad struct {
	Keys         int64         `json:"keys"`
	Acknowledged int64         `json:"acknowledged"`
	Seconds      float64       `json:"seconds"`
	Cluster      *BenchCluster `json:"cluster"`
}

// BenchCell is one measured phase of bench: a GET (or mixed) cell.
type BenchCell struct {
	Op               string        `json:"op"`
	Threads          int           `json:"threads"`
	Batch            int           `json:"batch"`
	Ops              int64         `json:"ops"`
	Seconds          float64       `json:"seconds"`
	OpsPerSec        float64       `json:"ops_per_sec"`
	Hits             int64         `json:"hits"`
	Misses           int64         `json:"misses"`
	Errors           int64         `json:"errors"`
	ClientCPUSeconds float64       `json:"client_cpu_seconds"`
	ClientSaturated  bool          `json:"client_saturated"`
	HostStealShare   *float64      `json:"host_steal_share"`
	Incomplete       bool          `json:"incomplete"`
	Cluster          *BenchCluster `json:"cluster"`
	// Mix is a mixed cell's per-operation breakdown (--workload).
	Mix []BenchOp `json:"mix"`
	// Clients are the shares a cell summed over client hosts.
	Clients []results.ClientShare `json:"-"`
}

// BenchOp is one operation of a mixed cell.
type BenchOp struct {
	Op  string `json:"op"`
	Ops int64  `json:"ops"`
}

// Gets counts the ops of a mixed cell that read a key (GETs, RMWs, MGET
// keys); 0 for a GET cell, where every op is one.
func (c BenchCell) Gets() int64 {
	var n int64
	for _, o := range c.Mix {
		if o.Op == "GET" || o.Op == "RMW" || o.Op == "MGET" {
			n += o.Ops
		}
	}
	return n
}

// ParseBench parses bench's JSON. Anything printed before the document
// (a warning line) is skipped; the raw text is quoted when it does not
// parse, so the reader sees what the client really said.
func ParseBench(out []byte) (BenchOutput, error) {
	var b BenchOutput
	doc, err := JSONDocument(out)
	if err != nil {
		return b, fmt.Errorf("bench output: %w", err)
	}
	if err := json.Unmarshal(doc, &b); err != nil {
		return b, fmt.Errorf("bench output is not its JSON document: %w: %q", err, Clip(out))
	}
	for i, c := range b.Cells {
		if c.Ops < 0 || c.Seconds < 0 || c.Hits < 0 || c.Misses < 0 || c.Errors < 0 || c.OpsPerSec < 0 {
			return b, fmt.Errorf("bench output cell %d has negative counts: %+v", i, c)
		}
	}
	if b.Load != nil && (b.Load.Keys < 0 || b.Load.Acknowledged < 0) {
		return b, fmt.Errorf("bench output load has negative counts: %+v", *b.Load)
	}
	return b, nil
}

// BenchCluster is the per-node breakdown bench prints with --cluster-bench.
type BenchCluster struct {
	Nodes []struct {
		ID   string `json:"id"`
		Addr string `json:"addr"`
		Ops  int64  `json:"ops"`
		Hits int64  `json:"hits"`
	} `json:"nodes"`
	Moved int64 `json:"moved"`
	Ask   int64 `json:"ask"`
}
