package store

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"page not a power of two", Config{PageBytes: 3 << 20}, "--page 3m"},
		{"page too small", Config{PageBytes: 512}, "--page 512"},
		{"segment below page", Config{PageBytes: 4 << 20, SegmentBytes: 1 << 20}, "--segment 1m"},
		{"index below a bucket", Config{IndexBytes: 32}, "--index 32"},
		{"memory below two pages", Config{StorageTier: true, DeviceType: "localmemory", MemoryBytes: 4 << 20, PageBytes: 4 << 20}, "--memory 4m"},
		{"native without logdir", Config{StorageTier: true}, "--logdir"},
		{"unknown backend", Config{StorageTier: true, LogDir: "/var/tmp", Backend: "spdk"}, `--device-io-backend "spdk"`},
		{"unknown device type", Config{StorageTier: true, DeviceType: "nvme"}, `--device-type "nvme"`},
		{"unknown device type, untiered", Config{DeviceType: "foo"}, `--device-type "foo"`},
		{"unknown backend, untiered", Config{Backend: "urng"}, `--device-io-backend "urng"`},
		{"negative throttle", Config{ThrottleLimit: -1}, "negative device setting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.cfg)
			if err == nil {
				s.Close()
				t.Fatalf("Open: got nil error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: got error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestInMemory(t *testing.T) {
	s := openTest(t, smallConfig(t, ""))
	sess := newTestSession(t, s)
	const n = 5000 // about 10 pages of 64 KiB: the untiered log grows
	for i := range n {
		mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
	}
	if got := s.Stats().Keys; got != n {
		t.Errorf("Keys after %d upserts: got %d, want %d", n, got, n)
	}
	for i := range n {
		v, st := get(t, sess, testKey(i))
		if st != Found || !bytes.Equal(v, testValue(i, 0, 96)) {
			t.Fatalf("key %d: got %q, %v; want %q, Found", i, v, st, testValue(i, 0, 96))
		}
	}
	if _, st := get(t, sess, testKey(n)); st != NotFound {
		t.Errorf("missing key: got %v, want NotFound", st)
	}
	// Overwrite some keys: the count stays.
	for i := 0; i < n; i += 3 {
		mustUpsert(t, sess, testKey(i), testValue(i, 1, 10+i%50))
	}
	if got := s.Stats().Keys; got != n {
		t.Errorf("Keys after overwrites: got %d, want %d", got, n)
	}
	st := s.Stats()
	if st.HeadAddress != beginAddress || st.TailAddress <= 10*64<<10 || st.DeviceType != "none" {
		t.Errorf("Stats: got head %d, tail %d, device %q; want head %d, tail above 10 pages, device none", st.HeadAddress, st.TailAddress, st.DeviceType, beginAddress)
	}
	if err := s.FlushAll(); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Keys; got != 0 {
		t.Errorf("Keys after FlushAll: got %d, want 0", got)
	}
	if _, st := get(t, sess, testKey(3)); st != NotFound {
		t.Errorf("key after FlushAll: got %v, want NotFound", st)
	}
	mustUpsert(t, sess, testKey(3), []byte("again"))
	if v, st := get(t, sess, testKey(3)); st != Found || string(v) != "again" {
		t.Errorf("key written after FlushAll: got %q, %v; want again, Found", v, st)
	}
	if got := s.Stats().Keys; got != 1 {
		t.Errorf("Keys after one upsert past FlushAll: got %d, want 1", got)
	}
}

func TestTooLarge(t *testing.T) {
	s := openTest(t, smallConfig(t, ""))
	sess := newTestSession(t, s)
	big := make([]byte, 64<<10)
	err := sess.Upsert([]byte("k"), big)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Upsert of a %d B value into 64 KiB pages: got %v, want ErrTooLarge", len(big), err)
	}
	for _, want := range []string{"65536 B value", "--page is 65536 B"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	_, err = sess.RMW([]byte("k"), func(_ []byte, _ bool, dst []byte) ([]byte, error) { return append(dst, big...), nil })
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("RMW to a %d B value: got %v, want ErrTooLarge", len(big), err)
	}
	// The largest record that fits a page works, and nothing was counted
	// for the refused ones.
	fits := make([]byte, 64<<10-headerBytes-1)
	mustUpsert(t, sess, []byte("k"), fits)
	if v, st := get(t, sess, []byte("k")); st != Found || len(v) != len(fits) {
		t.Errorf("page-sized record: got %d B, %v; want %d B, Found", len(v), st, len(fits))
	}
	if got := s.Stats().Keys; got != 1 {
		t.Errorf("Keys: got %d, want 1", got)
	}
}

// TestTieredReadBack loads enough records that most go to the device and
// reads every one back, on every backend.
func TestTieredReadBack(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 20000 // 2.5 MB of 128 B records over 256 KiB of memory
			for i := range n {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
			}
			sess.Settle() // the key counter waits for existence checks
			st := s.Stats()
			if st.Keys != n {
				t.Errorf("Keys: got %d, want %d", st.Keys, n)
			}
			if onDevice := float64(st.HeadAddress) / float64(st.TailAddress); onDevice < 0.85 {
				t.Errorf("HeadAddress %d / TailAddress %d = %.2f on the device, want ≥ 0.85", st.HeadAddress, st.TailAddress, onDevice)
			}
			before := s.Stats().CompletedReads
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
			reads := s.Stats().CompletedReads - before
			if reads < n*8/10 {
				t.Errorf("device reads for %d keys: got %d, want ≥ %d", n, reads, n*8/10)
			}
			if p := s.Stats().PendingReads; p != 0 {
				t.Errorf("PendingReads after delivery: got %d, want 0", p)
			}
		})
	}
}

// TestVariableSizes reads back records whose sizes force re-reads (a value
// longer than the session guessed), dedicated buffers (longer than a slot's
// buffer) and sector-straddling windows.
func TestVariableSizes(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			size := func(i int) int { return []int{96, 0, 700, 3000, 20, 9000, 96, 511, 512, 513}[i%10] }
			const n = 2000
			for i := range n {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, size(i)))
			}
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, size(i)) })
			// The same through the synchronous path of writers.
			for i := range n {
				got, err := sess.RMW(testKey(i), func(old []byte, exists bool, dst []byte) ([]byte, error) {
					if !exists || !bytes.Equal(old, testValue(i, 0, size(i))) {
						return nil, fmt.Errorf("key %d: RMW saw %q, %v; want its value", i, old, exists)
					}
					return append(dst, old[:min(len(old), 5)]...), nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != min(size(i), 5) {
					t.Fatalf("key %d: RMW returned %q", i, got)
				}
			}
		})
	}
}

// TestSectorStraddle checks a 128 B record whose bytes cross a sector
// boundary reads back from the device.
func TestSectorStraddle(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 4000
			for i := range n {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
			}
			sector := s.Stats().SectorSize
			straddling := -1
			for i := range n {
				addr := s.ix.find(s.hash(testKey(i)), beginAddress)
				if addr < s.log.head.Load() && addr/uint64(sector) != (addr+127)/uint64(sector) {
					straddling = i
					break
				}
			}
			if straddling < 0 {
				t.Fatalf("no record on the device straddles a %d B sector boundary", sector)
			}
			// The upserts' existence checks still in flight must not count
			// as the GET's reads (a fresh clone counted 2 once).
			sess.Settle()
			before := s.Stats().CompletedReads
			v, st := get(t, sess, testKey(straddling))
			if st != Found || !bytes.Equal(v, testValue(straddling, 0, 96)) {
				t.Errorf("straddling key %d: got %q, %v; want %q, Found", straddling, v, st, testValue(straddling, 0, 96))
			}
			// One read, or two where another key shares its index entry
			// (bucket and tag) and that key's newer record is read first.
			want := int64(1)
			if sharesIndexEntry(s, testKey(straddling), n, 0, 0) {
				want = 2
			}
			if got := s.Stats().CompletedReads - before; got < 1 || got > want {
				t.Errorf("device reads for one straddling record: got %d, want 1 (one two-sector window; at most %d)", got, want)
			}
		})
	}
}

// TestTombstonesAndRMW deletes and increments keys whose records are on
// the device, and checks the live-key counter stays exact.
func TestTombstonesAndRMW(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 6000
			for i := range n {
				mustUpsert(t, sess, testKey(i), []byte(strconv.Itoa(i)))
			}
			incr := func(i int) {
				t.Helper()
				_, err := sess.RMW(testKey(i), func(old []byte, exists bool, dst []byte) ([]byte, error) {
					v := 0
					if exists {
						var err error
						if v, err = strconv.Atoi(string(old)); err != nil {
							return nil, err
						}
					}
					return strconv.AppendInt(dst, int64(v+1000000), 10), nil
				})
				if err != nil {
					t.Fatalf("RMW(%d): %v", i, err)
				}
			}
			deleted := 0
			for i := 0; i < n; i += 2 {
				existed, err := sess.Delete(testKey(i))
				if err != nil || !existed {
					t.Fatalf("Delete(%d): got %v, %v; want true, nil", i, existed, err)
				}
				deleted++
			}
			if existed, err := sess.Delete(testKey(0)); err != nil || existed {
				t.Errorf("Delete of a deleted key: got %v, %v; want false, nil", existed, err)
			}
			if existed, err := sess.Delete(testKey(n + 5)); err != nil || existed {
				t.Errorf("Delete of a missing key: got %v, %v; want false, nil", existed, err)
			}
			sess.Settle() // the key counter waits for existence checks
			if got := s.Stats().Keys; got != int64(n-deleted) {
				t.Errorf("Keys after deletes: got %d, want %d", got, n-deleted)
			}
			// Increment every key: odd ones exist (on the device by now),
			// even ones were deleted and start again from 0.
			for i := range n {
				incr(i)
			}
			sess.Settle() // the key counter waits for existence checks
			if got := s.Stats().Keys; got != n {
				t.Errorf("Keys after increments: got %d, want %d", got, n)
			}
			// Push everything to the device with more writes, then check.
			for i := n; i < 2*n; i++ {
				mustUpsert(t, sess, testKey(i), []byte("x"))
			}
			readBackAll(t, sess, n, func(i int) []byte {
				if i%2 == 0 {
					return []byte("1000000")
				}
				return []byte(strconv.Itoa(i + 1000000))
			})
			for i := 0; i < n; i += 2 {
				if _, err := sess.Delete(testKey(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := n; i < 2*n; i++ {
				mustUpsert(t, sess, testKey(i), []byte("y"))
			}
			readBackAll(t, sess, n, func(i int) []byte {
				if i%2 == 0 {
					return nil
				}
				return []byte(strconv.Itoa(i + 1000000))
			})
			sess.Settle() // the key counter waits for existence checks
			if got := s.Stats().Keys; got != int64(2*n-n/2) {
				t.Errorf("Keys at the end: got %d, want %d", got, 2*n-n/2)
			}
		})
	}
}

// TestTinyIndex uses one index bucket, so every key shares one overflow
// chain and many share a tag: lookups must follow record chains through
// memory and the device.
func TestTinyIndex(t *testing.T) {
	for _, backend := range []string{"", "localmemory", "libaio"} {
		t.Run("backend="+backend, func(t *testing.T) {
			cfg := smallConfig(t, backend)
			cfg.IndexBytes = 64
			s := openTest(t, cfg)
			sess := newTestSession(t, s)
			const n = 3000
			for i := range n {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
			}
			tags := map[uint64]int{}
			for i := range n {
				tags[s.hash(testKey(i))>>tagShift]++
			}
			if len(tags) == n {
				t.Fatalf("no two of %d keys share a tag; the test needs collisions", n)
			}
			sess.Settle() // the key counter waits for existence checks
			st := s.Stats()
			// Each distinct tag takes one entry: 7 in the main bucket, 7 in
			// each overflow bucket.
			wantOverflow := int64((len(tags)+entriesPerBkt-1)/entriesPerBkt - 1)
			if st.IndexBuckets != 1 || st.OverflowBuckets < wantOverflow {
				t.Errorf("Stats: got %d buckets, %d overflow; want 1 and ≥ %d for %d tags", st.IndexBuckets, st.OverflowBuckets, wantOverflow, len(tags))
			}
			if st.Keys != n {
				t.Errorf("Keys: got %d, want %d", st.Keys, n)
			}
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
			if _, st := get(t, sess, testKey(n+1)); st != NotFound {
				t.Errorf("missing key: got %v, want NotFound", st)
			}
		})
	}
}

// TestAllocs proves the hot paths allocate nothing: a memory hit, and a
// device read from Read through CompletePending.
func TestAllocs(t *testing.T) {
	s := openTest(t, smallConfig(t, "localmemory"))
	sess := newTestSession(t, s)
	const n = 20000
	for i := range n {
		mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
	}
	dst := make([]byte, 0, 256)
	hot, cold := testKey(n-1), testKey(0)
	if _, st, _ := sess.Read(hot, dst, 0); st != Found {
		t.Fatalf("newest key: got %v, want Found in memory", st)
	}
	if _, st, _ := sess.Read(cold, dst, 0); st != Pending {
		t.Fatalf("oldest key: got %v, want Pending", st)
	}
	found := 0
	fn := func(_ uint64, v []byte, st Status, _ error) {
		if st == Found {
			found++
		}
	}
	sess.CompletePending(true, fn)
	if a := testing.AllocsPerRun(200, func() { sess.Read(hot, dst, 0) }); a != 0 {
		t.Errorf("memory hit: %v allocations per Read, want 0", a)
	}
	keys := spreadKeys(64, 100)
	if a := batchAllocs(sess, keys, 50, fn); a != 0 {
		t.Errorf("device reads: %v allocations per batch of %d Reads and CompletePending, want 0", a, len(keys))
	}
	if found < 50*len(keys) {
		t.Errorf("device reads found %d records, want %d", found, 50*len(keys))
	}
	if a := testing.AllocsPerRun(200, func() { sess.Upsert(hot, dst[:96]) }); a != 0 {
		t.Errorf("Upsert: %v allocations, want 0", a)
	}
	// Overwrites of keys on the device: each needs an existence check.
	i := 0
	if a := testing.AllocsPerRun(200, func() { sess.Upsert(keys[i%len(keys)], dst[:96]); i++ }); a != 0 {
		t.Errorf("Upsert of a key on the device: %v allocations, want 0", a)
	}
}

// TestClosed checks that a store refuses work after Close instead of
// touching freed memory.
func TestClosed(t *testing.T) {
	s, err := Open(smallConfig(t, "localmemory"))
	if err != nil {
		t.Fatal(err)
	}
	sess := s.NewSession()
	mustUpsert(t, sess, testKey(1), testValue(1, 0, 96))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: got %v, want ErrClosed", err)
	}
	if _, _, err := sess.Read(testKey(1), nil, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: got %v, want ErrClosed", err)
	}
	if err := sess.Upsert(testKey(1), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Upsert after Close: got %v, want ErrClosed", err)
	}
	if _, err := sess.Delete(testKey(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Delete after Close: got %v, want ErrClosed", err)
	}
	if err := s.FlushAll(); !errors.Is(err, ErrClosed) {
		t.Errorf("FlushAll after Close: got %v, want ErrClosed", err)
	}
	sess.Close()
}

// TestFlushAllTiered drops keys whose records are on the device and in
// memory, then writes some again.
func TestFlushAllTiered(t *testing.T) {
	s := openTest(t, smallConfig(t, "libaio"))
	sess := newTestSession(t, s)
	const n = 5000
	for i := range n {
		mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
	}
	st := s.Stats()
	if st.Backend != "libaio" || st.DeviceType != "native" || st.SectorSize < 512 ||
		!(st.BeginAddress <= st.HeadAddress && st.HeadAddress <= st.ReadOnlyAddress && st.ReadOnlyAddress <= st.TailAddress) {
		t.Errorf("Stats: got %+v; want libaio, native, a sector size, Begin ≤ Head ≤ ReadOnly ≤ Tail", st)
	}
	if err := s.FlushAll(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Keys != 0 || st.BeginAddress != st.TailAddress {
		t.Errorf("after FlushAll: got keys %d, begin %d, tail %d; want 0 keys and begin = tail", st.Keys, st.BeginAddress, st.TailAddress)
	}
	// The upserts' existence checks are device reads too: none may land
	// in the count below.
	sess.Settle()
	before := s.Stats().CompletedReads
	readBackAll(t, sess, n, func(int) []byte { return nil })
	if reads := s.Stats().CompletedReads - before; reads != 0 {
		t.Errorf("reads of flushed keys: %d device reads, want 0", reads)
	}
	for i := 0; i < n; i += 2 {
		mustUpsert(t, sess, testKey(i), testValue(i, 1, 96))
	}
	if existed, err := sess.Delete(testKey(1)); err != nil || existed {
		t.Errorf("Delete of a flushed key: got %v, %v; want false, nil", existed, err)
	}
	readBackAll(t, sess, n, func(i int) []byte {
		if i%2 == 1 {
			return nil
		}
		return testValue(i, 1, 96)
	})
	sess.Settle() // the key counter waits for existence checks
	if got := s.Stats().Keys; got != n/2 {
		t.Errorf("Keys: got %d, want %d", got, n/2)
	}
}
