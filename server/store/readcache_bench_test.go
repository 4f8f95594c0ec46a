package store

import (
	"math/rand/v2"
	"syscall"
	"testing"
)

// BenchmarkReadCacheHit reads 200 000 keys (25.6 MB of 128 B records) in
// batches of 256, the way a connection answers a pipelined batch
// (PrefetchKey, Prefetch, then the Reads), from three stores: untiered
// (every record in the log's memory, the in-memory server), tiered with
// every record in the log's memory, and tiered with 87 % of the records
// on the device and every one of them in the read cache (warmed by two
// passes over the keys first). It reports ns/GET; the target is
// cached ≥ 0.8 × memory in GETs/s. The per-batch work is in
// readCacheHitBatch so that callgrind can count it alone
// (--toggle-collect).
func BenchmarkReadCacheHit(b *testing.B) {
	const (
		n     = 200_000
		batch = 256
	)
	keys := make([][]byte, n)
	for i, k := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		keys[i] = testKey(k)
	}
	for _, tc := range []struct {
		name             string
		backend          string
		memory, rcBudget int64
	}{
		{"memory", "", 0, 0},
		{"logmemory", "localmemory", 64 << 20, 0},
		{"cached", "localmemory", 4 << 20, 64 << 20},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := smallConfig(b, tc.backend)
			cfg.PageBytes, cfg.SegmentBytes, cfg.IndexBytes = 1<<20, 1<<30, 256<<20
			if tc.memory > 0 {
				cfg.MemoryBytes = tc.memory
			}
			cfg.ReadCacheBytes = tc.rcBudget
			s := openTest(b, cfg)
			sess := newTestSession(b, s)
			for i := range n {
				mustUpsert(b, sess, testKey(i), testValue(i, 0, 96))
			}
			for range 2 {
				for i := range n {
					if _, st := get(b, sess, keys[i]); st != Found {
						b.Fatalf("warm-up: %s: got %v, want Found", keys[i], st)
					}
				}
			}
			before := s.Stats()
			dst := make([]byte, 0, 128)
			next := 0
			b.ReportAllocs()
			cpu0 := cpuNanos(b)
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				readCacheHitBatch(b, sess, keys[next:next+batch], dst)
				next = (next + batch) % (n - n%batch)
			}
			b.StopTimer()
			cpu := cpuNanos(b) - cpu0
			if got := s.Stats().CompletedReads - before.CompletedReads; got != 0 {
				b.Fatalf("got %d device reads, want 0 (every record in memory or cached)", got)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/GET")
			// The process's CPU time moves less than the wall clock on a
			// host shared with other work.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/GET")
		})
	}
}

// cpuNanos is the CPU time the process has used, user and system.
func cpuNanos(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// readCacheHitBatch reads one batch of keys, each of which must be Found at
// once.
func readCacheHitBatch(b *testing.B, sess *Session, keys [][]byte, dst []byte) {
	for _, k := range keys {
		sess.PrefetchKey(k)
	}
	sess.Prefetch()
	for _, k := range keys {
		if _, st, err := sess.Read(k, dst, 0); err != nil || st != Found {
			b.Fatalf("Read(%s): %v, %v", k, st, err)
		}
	}
}
