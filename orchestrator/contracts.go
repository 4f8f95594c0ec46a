package orchestrator

import (
	"encoding/json"
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// benchOutput is the JSON document `tierbench bench --json` prints.
type benchOutput struct {
	Load  *benchLoad  `json:"load"`
	Cells []benchCell `json:"cells"`
}

type benchLoad struct {
	Keys         int64         `json:"keys"`
	Acknowledged int64         `json:"acknowledged"`
	Seconds      float64       `json:"seconds"`
	Cluster      *benchCluster `json:"cluster"`
}

type benchCell struct {
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
	Cluster          *benchCluster `json:"cluster"`
	// Mix is a mixed cell's per-operation breakdown (--workload).
	Mix []benchOp `json:"mix"`
	// Clients are the shares a cell summed over client hosts.
	Clients []results.ClientShare `json:"-"`
}

// benchOp is one operation of a mixed cell.
type benchOp struct {
	Op  string `json:"op"`
	Ops int64  `json:"ops"`
}

// gets counts the ops of a mixed cell that read a key (GETs, RMWs, MGET
// keys); 0 for a GET cell, where every op is one.
func (c benchCell) gets() int64 {
	var n int64
	for _, o := range c.Mix {
		if o.Op == "GET" || o.Op == "RMW" || o.Op == "MGET" {
			n += o.Ops
		}
	}
	return n
}

// parseBench parses bench's JSON. Anything printed before the document
// (a warning line) is skipped; the raw text is quoted when it does not
// parse, so the reader sees what the client really said.
func parseBench(out []byte) (benchOutput, error) {
	var b benchOutput
	doc, err := rig.JSONDocument(out)
	if err != nil {
		return b, fmt.Errorf("orchestrator: bench output: %w", err)
	}
	if err := json.Unmarshal(doc, &b); err != nil {
		return b, fmt.Errorf("orchestrator: bench output is not its JSON document: %w: %q", err, rig.Clip(out))
	}
	for i, c := range b.Cells {
		if c.Ops < 0 || c.Seconds < 0 || c.Hits < 0 || c.Misses < 0 || c.Errors < 0 || c.OpsPerSec < 0 {
			return b, fmt.Errorf("orchestrator: bench output cell %d has negative counts: %+v", i, c)
		}
	}
	if b.Load != nil && (b.Load.Keys < 0 || b.Load.Acknowledged < 0) {
		return b, fmt.Errorf("orchestrator: bench output load has negative counts: %+v", *b.Load)
	}
	return b, nil
}
