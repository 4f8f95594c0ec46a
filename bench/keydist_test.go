package bench

import (
	"context"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/testenv"
)

func mustDist(t *testing.T, s string) keyspace.Dist {
	t.Helper()
	d, err := keyspace.ParseDist(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRedrawRewritesRequests: after a batch (or a window request) is
// redrawn, its bytes are exactly what appendCommand encodes for its new
// keys, for every offline command.
func TestRedrawRewritesRequests(t *testing.T) {
	for _, op := range []string{"GET", "SET", "INCR", "DEL", "MGET", "MSET", "PING"} {
		cfg := DefaultConfig()
		cfg.DBSize = 100000
		cfg.KeyLength = 9
		cfg.ValueLength = 40
		cfg.Op = op
		cfg.Batch = 7
		cfg.PrebuiltOpsPerThread = 21
		cfg.KeyDist = mustDist(t, "zipf:0.5")
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		if !p.redraw {
			t.Fatalf("%s: a zipf plan does not redraw its keys", op)
		}
		tb := buildBatches(p, 1, 0)
		before := append([]uint64(nil), tb.keys...)
		for i := range tb.count() {
			tb.redrawBatch(p, i)
		}
		if !p.op.multiKey() {
			tb.redrawRequest(p, 3)
		}
		changed := 0
		for i := range before {
			if before[i] != tb.keys[i] {
				changed++
			}
		}
		if changed < len(before)/2 {
			t.Errorf("%s: redrawing changed %d of %d keys, want most", op, changed, len(before))
		}
		var want []byte
		for i := range tb.count() {
			keys := tb.keys[i*cfg.Batch : (i+1)*cfg.Batch]
			if p.op.multiKey() {
				want = appendCommand(want, p.op, keys, p.keyLength, p.ValueLength)
				continue
			}
			for j := range keys {
				want = appendCommand(want, p.op, keys[j:j+1], p.keyLength, p.ValueLength)
			}
		}
		if string(tb.req) != string(want) {
			t.Errorf("%s: redrawn requests differ from appendCommand's encoding of their keys", op)
		}
	}
}

// TestSkewedCellDrawsTheDistribution runs a zipf cell (θ 0.99 over 10,000
// keys) at 64 connections against redis-server and counts the distinct
// keys it drew, as DELs: DBSIZE falls by exactly that many. The
// distribution's 99 % mass needs 9,110 keys (MassKeys, asserted here);
// each thread pre-builds 100 requests, 6,400 keys in all, so only
// redrawing the keys as batches are answered can reach it. A uniform cell
// built alike cycles its pre-built keys and deletes at most 6,400. The
// load before each cell writes every key once whatever the distribution.
func TestSkewedCellDrawsTheDistribution(t *testing.T) {
	const (
		keys     = 10000
		conns    = 64
		prebuilt = 100
		mass99   = 9110
	)
	zipf := mustDist(t, "zipf:0.99")
	if got := zipf.Sampler(keys).MassKeys(0.99); got != mass99 {
		t.Fatalf("zipf:0.99 over %d keys: 99 %% of the mass is on %d keys, the test says %d", keys, got, mass99)
	}
	r := testenv.MustRedisServer(t)
	for _, tt := range []struct {
		dist, pipeline string
		atLeast        int64
		atMost         int64
	}{
		{"zipf:0.99", PipelineBatch, mass99, keys},
		{"zipf:0.99", PipelineWindow, mass99, keys},
		{"uniform", PipelineBatch, 1, conns * prebuilt},
	} {
		cfg := configFor(t, r.Addr)
		cfg.DBSize = keys
		cfg.KeyDist = mustDist(t, tt.dist)
		mustLoad(t, &cfg)
		if got := redisInt(t, r.Addr, "DBSIZE"); got != keys {
			t.Fatalf("%s: DBSIZE %d after the load, want %d", tt.dist, got, keys)
		}
		cfg.SkipLoad = true
		cfg.Op = "DEL"
		cfg.Threads = []int{conns}
		cfg.Batch = 20
		cfg.PrebuiltOpsPerThread = prebuilt
		cfg.Pipeline = tt.pipeline
		cfg.Runtime = 2 * time.Second
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", tt.dist, tt.pipeline, err, human)
		}
		c := rep.Cells[0]
		drawn := keys - redisInt(t, r.Addr, "DBSIZE")
		t.Logf("%s %s: %d distinct keys in %d DELs", tt.dist, tt.pipeline, drawn, c.Ops)
		if drawn < tt.atLeast || drawn > tt.atMost {
			t.Errorf("%s %s at %d connections: %d distinct keys deleted in %d DELs, want %d..%d", tt.dist, tt.pipeline, conns, drawn, c.Ops, tt.atLeast, tt.atMost)
		}
		if c.KeyDist != tt.dist || c.KeysRedrawn != (tt.dist != "uniform") || c.Hits != drawn {
			t.Errorf("%s %s: key_dist %q keys_redrawn %v hits %d; want %q, redrawn when skewed, one hit per key deleted", tt.dist, tt.pipeline, c.KeyDist, c.KeysRedrawn, c.Hits, tt.dist)
		}
		redisSimple(t, r.Addr, "FLUSHALL")
	}
}
