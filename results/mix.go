package results

import (
	"slices"
	"time"
)

// OpRate is one operation's part of a mixed pass (its ops and ops/sec)
// or cell (the median of its passes' ops/sec; Ops absent).
type OpRate struct {
	Op        string  `json:"op"`
	Ops       int64   `json:"ops,omitempty"`
	OpsPerSec float64 `json:"ops_per_sec"`
}

// MixEvidence is what a pass's operations did besides its GET figures:
// each operation's throughput in a mixed cell (--workload), what the
// server wrote, and the store's own counters of its log and of the GETs
// it served from the device. Every field is omitted when zero, so a
// bundle from before mixes reads and renders as it did.
type MixEvidence struct {
	// Mix is each operation's ops and ops/sec in a mixed cell, in the
	// order of the mix; the pass's OpsPerSec is their sum.
	Mix []OpRate `json:"mix,omitempty"`
	// Sets counts the ops that wrote a record: SETs and RMWs.
	Sets int64 `json:"sets,omitempty"`
	// WriteBytes is the server's /proc/<pid>/io write_bytes delta over
	// the phase (the bytes it caused to be written to the storage
	// layer); WriteBytesPerSet divides it by Sets.
	WriteBytes       int64   `json:"write_bytes,omitempty"`
	WriteBytesPerSet float64 `json:"write_bytes_per_set,omitempty"`
	// StoreCounted says the server reported the store's counters below
	// (INFO store Log.TailAddress and Log.FlushedAddress, INFO stats
	// device_gets: tierbench's own server); a foreign server has none.
	StoreCounted bool `json:"store_counted,omitempty"`
	// LogGrowth is the log's growth over the phase (Δ Log.TailAddress):
	// every write appends a record at the tail. LogWritten is what the
	// log wrote to the device (Δ Log.FlushedAddress, whole pages).
	LogGrowth  int64 `json:"log_growth_bytes,omitempty"`
	LogWritten int64 `json:"log_written_bytes,omitempty"`
	// DeviceGets is how many GETs the store served from its device
	// (Δ INFO stats device_gets); DeviceGetShare divides it by the
	// pass's GETs: the share of GETs that read the device.
	DeviceGets     int64   `json:"device_gets,omitempty"`
	DeviceGetShare float64 `json:"device_get_share,omitempty"`
	// CacheHits is how many records the store's read cache gave (Δ INFO
	// store ReadCache.Hits); CacheHitShare divides it by the pass's GETs.
	CacheHits     int64   `json:"cache_hits,omitempty"`
	CacheHitShare float64 `json:"cache_hit_share,omitempty"`
}

// CellMix is a cell's medians of its passes' MixEvidence.
type CellMix struct {
	// Mix is each operation's median ops/sec, in the mix's order.
	Mix              []OpRate `json:"mix,omitempty"`
	WriteBytesPerSet float64  `json:"write_bytes_per_set,omitempty"`
	// LogGrowthPerSec is the log's median growth in bytes per second.
	LogGrowthPerSec float64 `json:"log_growth_bytes_per_sec,omitempty"`
	// StoreCounted: every pass had the store's counters, so
	// DeviceGetShare is measured (and 0 means no GET read the device).
	StoreCounted   bool    `json:"store_counted,omitempty"`
	DeviceGetShare float64 `json:"device_get_share,omitempty"`
	// CacheHitShare is the median share of GETs the read cache served.
	CacheHitShare float64 `json:"cache_hit_share,omitempty"`
}

// JudgeMix derives a pass's per-SET and per-GET figures from its raw
// counts, as JudgePass does the per-GET bytes.
func JudgeMix(rec *PassRecord) {
	rec.WriteBytesPerSet, rec.DeviceGetShare, rec.CacheHitShare = 0, 0, 0
	if rec.Sets > 0 && rec.WriteBytes > 0 {
		rec.WriteBytesPerSet = float64(rec.WriteBytes) / float64(rec.Sets)
	}
	if gets := rec.gets(); rec.StoreCounted && gets > 0 {
		rec.DeviceGetShare = float64(rec.DeviceGets) / float64(gets)
		rec.CacheHitShare = float64(rec.CacheHits) / float64(gets)
	}
}

// WritesOp says whether an operation of a mix writes a record.
func WritesOp(op string) bool { return op == "SET" || op == "RMW" }

// mixCell is the medians of the passes' mix evidence.
func mixCell(passes []PassRecord) CellMix {
	var m CellMix
	if len(passes) == 0 {
		return m
	}
	var wb, growth, share, hits []float64
	perOp := map[string][]float64{}
	var order []string
	m.StoreCounted = true
	for _, p := range passes {
		for _, o := range p.Mix {
			if _, ok := perOp[o.Op]; !ok {
				order = append(order, o.Op)
			}
			perOp[o.Op] = append(perOp[o.Op], o.OpsPerSec)
		}
		if p.Sets > 0 {
			wb = append(wb, p.WriteBytesPerSet)
		}
		if p.Seconds > 0 {
			growth = append(growth, float64(p.LogGrowth)/p.Seconds)
		}
		share = append(share, p.DeviceGetShare)
		hits = append(hits, p.CacheHitShare)
		m.StoreCounted = m.StoreCounted && p.StoreCounted
	}
	for _, op := range order {
		med, _, _ := Median(perOp[op])
		m.Mix = append(m.Mix, OpRate{Op: op, OpsPerSec: med})
	}
	m.WriteBytesPerSet, _, _ = Median(wb)
	m.LogGrowthPerSec, _, _ = Median(growth)
	if m.StoreCounted {
		m.DeviceGetShare, _, _ = Median(share)
		m.CacheHitShare, _, _ = Median(hits)
	}
	return m
}

// IsMixed says whether a bundle's cells are mixes: some cell has a
// per-operation breakdown.
func IsMixed(cells []Cell) bool {
	return slices.ContainsFunc(cells, func(c Cell) bool { return len(c.Mix) > 0 })
}

// FileRechecks holds the load check a run repeats after the cells of a
// row whose mix writes, one line per row (a file of its own, as
// latency.jsonl, so tierbench versions that read cells.jsonl still read
// a bundle that has it).
const FileRechecks = "rechecks.jsonl"

// RecheckRecord is the load check repeated after a row's mix: DBSIZE
// must still be exactly the keys loaded, and a fresh uniform sample must
// answer values of the loaded length.
type RecheckRecord struct {
	Kind       string      `json:"kind"` // "recheck"
	Schema     int         `json:"schema_version"`
	Row        Row         `json:"row"`
	DBSize     int64       `json:"dbsize"`      // keys loaded
	ServerKeys int64       `json:"server_keys"` // DBSIZE after the row's cells
	Sample     SampleCheck `json:"sampled_check"`
	// Error is why the row was refused after its mix; "" when it held.
	Error string    `json:"error,omitempty"`
	Time  time.Time `json:"time"`
}

// ReadRechecks reads rechecks.jsonl; none when the bundle has no mix
// that writes. A torn last line is dropped.
func ReadRechecks(dir string) ([]RecheckRecord, error) {
	return readLines(dir, FileRechecks, ParseRechecks)
}

// ParseRechecks parses rechecks.jsonl, refusing another kind or a newer
// schema.
func ParseRechecks(data []byte) ([]RecheckRecord, error) {
	return ParseJSONLines(data, FileRechecks, func(rec RecheckRecord) error { return checkKind("recheck", rec.Kind, rec.Schema) })
}
