package results

import (
	"math"
	"strings"
	"testing"
)

// TestJudgeMixAndSweep: a pass's per-SET bytes and device share come
// from its raw counts, and a memory-tier sweep's pass is never kept out
// as memory-served while the same pass of a storage row is.
func TestJudgeMixAndSweep(t *testing.T) {
	for _, tt := range []struct {
		name         string
		rec          PassRecord
		wantPerSet   float64
		wantShare    float64
		wantMemServe bool
	}{
		{"ycsb-a", PassRecord{Ops: 1000, Gets: 500, ReadBytes: 256000, MixEvidence: MixEvidence{Sets: 500, WriteBytes: 68000, StoreCounted: true, DeviceGets: 450}}, 136, 0.9, false},
		{"no store counters", PassRecord{Ops: 1000, Gets: 500, ReadBytes: 256000, MixEvidence: MixEvidence{Sets: 500, WriteBytes: 68000, DeviceGets: 450}}, 136, 0, false},
		{"storage row served from memory", PassRecord{Ops: 1000, ReadBytes: 5120, MixEvidence: MixEvidence{StoreCounted: true, DeviceGets: 10}}, 0, 0.01, true},
		{"sweep row served from memory", PassRecord{Row: Row{Memory: "512m"}, Ops: 1000, ReadBytes: 5120, MixEvidence: MixEvidence{StoreCounted: true, DeviceGets: 10}}, 0, 0.01, false},
	} {
		rec := tt.rec
		JudgePass(&rec, 0)
		if math.Abs(rec.WriteBytesPerSet-tt.wantPerSet) > 1e-9 || math.Abs(rec.DeviceGetShare-tt.wantShare) > 1e-9 || rec.MemoryServed != tt.wantMemServe {
			t.Errorf("%s: got %.1f B/SET, device share %.3f, memory-served %v; want %.1f, %.3f, %v",
				tt.name, rec.WriteBytesPerSet, rec.DeviceGetShare, rec.MemoryServed, tt.wantPerSet, tt.wantShare, tt.wantMemServe)
		}
	}
}

// TestMixCellMedians: a cell's per-operation ops/sec, bytes per SET, log
// growth per second and device share are the medians of its passes, and
// the share counts as measured only when every pass had the counters.
func TestMixCellMedians(t *testing.T) {
	pass := func(get, set float64, perSet float64, growth int64, share float64, counted bool) PassRecord {
		return PassRecord{Seconds: 2, MixEvidence: MixEvidence{Mix: []OpRate{{Op: "GET", OpsPerSec: get}, {Op: "SET", OpsPerSec: set}},
			Sets: 10, WriteBytesPerSet: perSet, LogGrowth: growth, DeviceGetShare: share, StoreCounted: counted}}
	}
	got := mixCell([]PassRecord{pass(100, 10, 130, 2000, 0.9, true), pass(300, 30, 150, 6000, 0.5, true), pass(200, 20, 140, 4000, 0.7, true)})
	want := CellMix{Mix: []OpRate{{Op: "GET", OpsPerSec: 200}, {Op: "SET", OpsPerSec: 20}}, WriteBytesPerSet: 140, LogGrowthPerSec: 2000, StoreCounted: true, DeviceGetShare: 0.7}
	if len(got.Mix) != 2 || got.Mix[0] != want.Mix[0] || got.Mix[1] != want.Mix[1] || got.WriteBytesPerSet != want.WriteBytesPerSet ||
		got.LogGrowthPerSec != want.LogGrowthPerSec || got.StoreCounted != want.StoreCounted || got.DeviceGetShare != want.DeviceGetShare {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := mixCell([]PassRecord{pass(1, 1, 1, 1, 0.5, true), pass(1, 1, 1, 1, 0.5, false)}); got.StoreCounted || got.DeviceGetShare != 0 {
		t.Errorf("a pass without the store's counters: got counted %v share %v, want neither", got.StoreCounted, got.DeviceGetShare)
	}
}

// TestRowMemoryKeepsRowsApart: two sweep rows differ by their memory in
// the plan's row IDs and across bundles.
func TestRowMemoryKeepsRowsApart(t *testing.T) {
	a, b := Row{Backend: "libaio", Pin: "none", Memory: "4m"}, Row{Backend: "libaio", Pin: "none", Memory: "32m"}
	if a.ID() == b.ID() || (Plan{}).RowKey(a) == (Plan{}).RowKey(b) {
		t.Errorf("rows %q and %q: got one ID or key, want two", a.ID(), b.ID())
	}
	if got, want := (Plan{}).RowKey(a).String(), "storage/libaio/none/memory=4m"; got != want {
		t.Errorf("row key: got %q, want %q", got, want)
	}
	if got := (Row{Backend: "libaio", Pin: "none"}).ID(); got != "libaio/none" {
		t.Errorf("a row without a sweep: got ID %q, want libaio/none as before", got)
	}
}

// TestParseRechecks: rechecks.jsonl reads back its records, drops a torn
// last line and refuses another kind or a newer schema.
func TestParseRechecks(t *testing.T) {
	dir := t.TempDir()
	rec := RecheckRecord{Kind: "recheck", Schema: SchemaVersion, Row: Row{Backend: "libaio", Pin: "none"}, DBSize: 10, ServerKeys: 10, Sample: SampleCheck{Keys: 10}}
	if err := AppendJSONL(dir, FileRechecks, rec); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRechecks(dir)
	if err != nil || len(got) != 1 || got[0].ServerKeys != 10 || got[0].Sample.Keys != 10 {
		t.Errorf("got %+v, %v; want the one record", got, err)
	}
	for _, tt := range []struct{ data, wantErr string }{
		{`{"kind":"recheck","schema_version":2}` + "\n" + `{"kind":"rech`, ""},
		{`{"kind":"pass","schema_version":2}` + "\n", "unknown kind"},
		{`{"kind":"recheck","schema_version":99}` + "\n", "newer than"},
	} {
		_, err := ParseRechecks([]byte(tt.data))
		if (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%q: got %v, want %q", tt.data, err, tt.wantErr)
		}
	}
}
