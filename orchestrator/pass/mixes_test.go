package pass

import (
	"slices"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

// TestRecordMix: a pass's per-operation rates, SETs and the change of
// its store readings; a server without the counters records none.
func TestRecordMix(t *testing.T) {
	cell := rig.BenchCell{Seconds: 2, Mix: []rig.BenchOp{{Op: "GET", Ops: 1000}, {Op: "RMW", Ops: 200}, {Op: "SET", Ops: 800}}}
	var rec results.PassRecord
	recordMix(&rec, cell, storeReading{writeBytes: 100, counted: true, tail: 64, flushed: 0, gets: 5},
		storeReading{writeBytes: 65636, counted: true, tail: 136064, flushed: 65536, gets: 905})
	want := []results.OpRate{{Op: "GET", Ops: 1000, OpsPerSec: 500}, {Op: "RMW", Ops: 200, OpsPerSec: 100}, {Op: "SET", Ops: 800, OpsPerSec: 400}}
	if !slices.Equal(rec.Mix, want) || rec.Sets != 1000 || rec.WriteBytes != 65536 || !rec.StoreCounted ||
		rec.LogGrowth != 136000 || rec.LogWritten != 65536 || rec.DeviceGets != 900 {
		t.Errorf("got %+v, want mix %v, 1000 sets, 65536 B written, log +136000 B (65536 flushed), 900 device GETs", rec.MixEvidence, want)
	}
	var foreign results.PassRecord
	recordMix(&foreign, cell, storeReading{writeBytes: -1}, storeReading{writeBytes: -1})
	if foreign.StoreCounted || foreign.WriteBytes != 0 || foreign.DeviceGets != 0 {
		t.Errorf("a server without counters: got %+v, want none recorded", foreign.MixEvidence)
	}
}
