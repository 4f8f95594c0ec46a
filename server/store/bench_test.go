package store

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tierbench/tierbench/internal/cacheline"
)

// BenchmarkRead measures Read from memory and, through CompletePending with
// 128 reads kept in flight, from each device backend.
func BenchmarkRead(b *testing.B) {
	for _, backend := range append([]string{""}, tieredBackends...) {
		name := backend
		if name == "" {
			name = "memory"
		}
		b.Run(name, func(b *testing.B) {
			cfg := smallConfig(b, backend)
			cfg.PageBytes, cfg.MemoryBytes, cfg.IndexBytes = 1<<20, 4<<20, 8<<20
			s := openTest(b, cfg)
			sess := newTestSession(b, s)
			const n = 200000 // 25 MB of records: 84 % on the device
			for i := range n {
				mustUpsert(b, sess, testKey(i), testValue(i, 0, 96))
			}
			keys := make([][]byte, 4096)
			for i := range keys {
				keys[i] = testKey((i * 7919) % n)
			}
			dst := make([]byte, 0, 128)
			var found int
			fn := func(_ uint64, _ []byte, st Status, err error) {
				if err != nil {
					b.Fatal(err)
				}
				if st == Found {
					found++
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, st, err := sess.Read(keys[i%len(keys)], dst, 0)
				if err != nil {
					b.Fatal(err)
				}
				if st == Found {
					found++
				}
				if sess.Pending() >= 128 {
					sess.CompleteAtLeast(1, fn)
				}
			}
			sess.CompletePending(true, fn)
			b.StopTimer()
			if found != b.N {
				b.Fatalf("found %d of %d keys", found, b.N)
			}
		})
	}
}

// BenchmarkUpsert measures appends of new keys, with eviction to the device
// when tiered. (An upsert of a key whose newest record is on the device also
// costs a synchronous device read, to keep the key count exact.)
func BenchmarkUpsert(b *testing.B) {
	for _, backend := range []string{"", "uring"} {
		b.Run("backend="+backend, func(b *testing.B) {
			cfg := smallConfig(b, backend)
			cfg.PageBytes, cfg.MemoryBytes, cfg.IndexBytes = 1<<20, 4<<20, 64<<20
			s := openTest(b, cfg)
			sess := newTestSession(b, s)
			key := []byte("key:000000000000")
			v := testValue(1, 0, 96)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, k := len(key)-1, i; k > 0; j, k = j-1, k/10 {
					key[j] = byte('0' + k%10)
				}
				if err := sess.Upsert(key, v); err != nil {
					b.Fatal(err)
				}
			}
			if got := s.Stats().Keys; got != int64(b.N) {
				b.Fatalf("Keys: got %d, want %d", got, b.N)
			}
		})
	}
}

// BenchmarkBatchPrefetch reads batches of 256 GETs' keys from a 256 MiB
// index, in memory, the way a connection answers a pipelined batch: with
// no prefetch, with each bucket prefetched right after its key is hashed
// (the server's way before PrefetchKey), and with the lines gathered and
// prefetched in a loop of their own (PrefetchKey, Prefetch), reporting ns
// per GET. On the README's host, 5 runs each (taskset -c 0, -benchtime
// 2000x): none 309, interleaved 272, gathered 256 ns, medians: gathered
// 0.94 × interleaved. Most of a GET here is its record's own miss in the
// log, which neither way prefetches; a tiered server's GETs, whose
// records come from the device and whose batches begin after system
// calls, gained more (the README's "Where the time goes").
func BenchmarkBatchPrefetch(b *testing.B) {
	const (
		batch = 256
		n     = 1 << 20 // keys loaded and drawn: their buckets are 64 MiB, past any cache
	)
	cfg := smallConfig(b, "")
	cfg.PageBytes, cfg.SegmentBytes, cfg.IndexBytes = 4<<20, 1<<30, 256<<20
	s := openTest(b, cfg)
	sess := newTestSession(b, s)
	for i := range n {
		mustUpsert(b, sess, testKey(i), testValue(i, 0, 96))
	}
	keys := make([][]byte, n)
	for i, k := range rand.New(rand.NewPCG(1, 2)).Perm(n) {
		keys[i] = testKey(k)
	}
	dst := make([]byte, 0, 128)
	for _, mode := range []string{"none", "interleaved", "gathered"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			next := 0
			for b.Loop() {
				ks := keys[next : next+batch]
				next = (next + batch) % n
				switch mode {
				case "interleaved":
					for _, k := range ks {
						cacheline.Prefetch(unsafe.Pointer(&s.ix.mainBucket(s.hash(k))[0]))
					}
				case "gathered":
					for _, k := range ks {
						sess.PrefetchKey(k)
					}
					sess.Prefetch()
				}
				for _, k := range ks {
					if _, st, err := sess.Read(k, dst, 0); err != nil || st != Found {
						b.Fatalf("Read(%s): %v, %v", k, st, err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/GET")
		})
	}
}
