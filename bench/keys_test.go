package bench

import (
	"testing"

	"github.com/tierbench/tierbench/internal/keyspace"
)

func TestKeyStreamsAreReproducible(t *testing.T) {
	s := keyspace.NewSampler(1000, 0)
	a, b := keyRNG(9, 3), keyRNG(9, 3)
	c := keyRNG(9, 4)
	same := 0
	for range 100 {
		x, y, z := s.Next(a), s.Next(b), s.Next(c)
		if x != y {
			t.Fatalf("same seed and stream drew %d and %d", x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 10 {
		t.Errorf("streams 3 and 4 agreed on %d of 100 draws, want independent streams", same)
	}
}

func TestBuildBatches(t *testing.T) {
	tests := []struct {
		name             string
		op               string
		batch, prebuilt  int
		threads          int
		wantBatches      int
		wantRequestBytes int // per batch
	}{
		{"explicit", "GET", 100, 1000, 1, 10, 100 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"automatic", "GET", 4096, 0, 1, 16, 4096 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"automatic many threads", "GET", 64, 0, 64, 512, 64 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"MGET one command per batch", "MGET", 10, 50, 1, 5, len("*11\r\n$4\r\nMGET\r\n") + 10*len("$4\r\n0000\r\n")},
		{"SET", "SET", 10, 30, 1, 3, 10 * len("*3\r\n$3\r\nSET\r\n$4\r\n0000\r\n$8\r\n12345678\r\n")},
		{"INCR", "INCR", 10, 30, 1, 3, 10 * len("*2\r\n$4\r\nINCR\r\n$4\r\n0000\r\n")},
		{"DEL", "DEL", 10, 30, 1, 3, 10 * len("*2\r\n$3\r\nDEL\r\n$4\r\n0000\r\n")},
		{"PING", "PING", 10, 30, 1, 3, 10 * len("*1\r\n$4\r\nPING\r\n")},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.DBSize = 5000
		cfg.Op = tt.op
		cfg.Batch = tt.batch
		cfg.PrebuiltOpsPerThread = tt.prebuilt
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		tb := buildBatches(p, tt.threads, 0)
		if tb.count() != tt.wantBatches || len(tb.keys) != tt.wantBatches*tt.batch {
			t.Errorf("%s: %d batches, %d keys; want %d batches of %d keys", tt.name, tb.count(), len(tb.keys), tt.wantBatches, tt.batch)
			continue
		}
		for i := range tb.count() {
			if got := tb.offsets[i+1] - tb.offsets[i]; got != tt.wantRequestBytes {
				t.Errorf("%s: batch %d is %d bytes, want %d", tt.name, i, got, tt.wantRequestBytes)
			}
		}
		for _, k := range tb.keys {
			if k >= uint64(cfg.DBSize) {
				t.Fatalf("%s: key %d outside the %d keys", tt.name, k, cfg.DBSize)
			}
		}
		// Each request is exactly what appendCommand encodes for its keys.
		var want []byte
		for i := range tb.count() {
			keys := tb.keys[i*tt.batch : (i+1)*tt.batch]
			if p.op.multiKey() {
				want = appendCommand(want, p.op, keys, p.keyLength, p.ValueLength)
			} else {
				for j := range keys {
					want = appendCommand(want, p.op, keys[j:j+1], p.keyLength, p.ValueLength)
				}
			}
		}
		if string(tb.req) != string(want) {
			t.Errorf("%s: pre-built requests differ from appendCommand's encoding", tt.name)
		}
	}
}

// TestWriteCellsDrawOtherKeys pins writeStream: a cell that only writes
// draws other keys than a read cell of the same seed and connections
// (offline and online), while read cells keep the keys a seed always gave.
func TestWriteCellsDrawOtherKeys(t *testing.T) {
	const threads, thread, n = 4, 1, 2000
	offline := func(op string) []uint64 {
		cfg := DefaultConfig()
		cfg.DBSize, cfg.Op, cfg.Batch, cfg.PrebuiltOpsPerThread = 1_000_000, op, 100, n
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		return buildBatches(p, threads, thread).keys
	}
	online := func(op string) []uint64 {
		cfg := DefaultConfig()
		cfg.DBSize, cfg.Online, cfg.Runtime = 1_000_000, true, 1
		cfg.OpWorkload, cfg.OpPercent = []string{op}, []int{100}
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		src := newOpSource(p, thread)
		keys := make([]uint64, n)
		for i := range keys {
			_, keys[i], _ = src.next()
		}
		return keys
	}
	agree := func(a, b []uint64) int {
		same := 0
		for i := range min(len(a), len(b)) {
			if a[i] == b[i] {
				same++
			}
		}
		return same
	}
	for _, tt := range []struct {
		name     string
		a, b     []uint64
		wantSame bool
	}{
		{"offline GET and MGET", offline("GET"), offline("MGET"), true},
		{"offline GET and SET", offline("GET"), offline("SET"), false},
		{"offline GET and MSET", offline("GET"), offline("MSET"), false},
		{"offline SET and MSET", offline("SET"), offline("MSET"), true},
		{"online GET and SET", online("GET"), online("SET"), false},
		{"online SET and INCR", online("SET"), online("INCR"), true},
	} {
		same := agree(tt.a, tt.b)
		if tt.wantSame && same != len(tt.a) {
			t.Errorf("%s: %d of %d draws agree, want all", tt.name, same, len(tt.a))
		}
		if !tt.wantSame && same > 2 {
			t.Errorf("%s: %d of %d draws agree, want independent keys", tt.name, same, len(tt.a))
		}
	}
	// A GET cell's keys are those of the stream it has always used.
	s := keyspace.NewSampler(1_000_000, 0)
	rng := keyRNG(DefaultConfig().Seed, uint64(threads)<<32|thread)
	for i, k := range offline("GET") {
		if want := s.Next(rng); k != want {
			t.Fatalf("GET cell key %d is %d, want %d: a seed's read keys changed", i, k, want)
		}
	}
}
