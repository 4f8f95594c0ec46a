package store

import (
	"testing"
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
