package store

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// cachedConfig is smallConfig with a read cache of budget bytes.
func cachedConfig(t testing.TB, backend string, budget int64) Config {
	cfg := smallConfig(t, backend)
	cfg.ReadCacheBytes = budget
	return cfg
}

func TestReadCacheConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"too small", Config{StorageTier: true, DeviceType: "localmemory", ReadCacheBytes: 100}, "--readcache-memory 100"},
		{"untiered", Config{ReadCacheBytes: 1 << 20}, "without --storage-tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.cfg)
			if err == nil {
				s.Close()
				t.Fatalf("Open: got no error, want one naming %q", tc.want)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
				t.Errorf("Open: got %q, want it to name %q", err, tc.want)
			}
		})
	}
}

// TestReadCacheServes checks, on every backend, that a second read of the
// device's records comes from the cache, that overwrites and deletes are
// seen at once, and that expiry is honoured.
func TestReadCacheServes(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, cachedConfig(t, backend, 1<<20))
			sess := newTestSession(t, s)
			const n = 3000
			for i := range n {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
			}
			sess.Settle()
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
			first := s.Stats()
			if first.ReadCache.Admissions == 0 || first.ReadCache.Records != first.ReadCache.Admissions {
				t.Fatalf("after the first pass: got %+v, want every device read admitted", first.ReadCache)
			}
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
			second := s.Stats()
			if got := second.CompletedReads - first.CompletedReads; got != 0 {
				t.Errorf("second pass: got %d device reads, want 0 (all cached)", got)
			}
			// A hit is any record the cache gave, a colliding key's on the
			// way down a chain included.
			if got, want := second.ReadCache.Hits-first.ReadCache.Hits, first.ReadCache.Admissions; got < want {
				t.Errorf("second pass: got %d cache hits, want at least %d", got, want)
			}
			// Overwrite every third key, delete every seventh: the cache
			// must never answer the older value.
			for i := 0; i < n; i += 3 {
				mustUpsert(t, sess, testKey(i), testValue(i, 1, 96))
			}
			for i := 0; i < n; i += 7 {
				if _, err := sess.Delete(testKey(i)); err != nil {
					t.Fatal(err)
				}
			}
			want := func(i int) []byte {
				switch {
				case i%7 == 0:
					return nil
				case i%3 == 0:
					return testValue(i, 1, 96)
				}
				return testValue(i, 0, 96)
			}
			readBackAll(t, sess, n, want)
			if st := s.Stats(); st.ReadCache.Invalidations == 0 {
				t.Errorf("after overwrites of cached keys: got %+v, want invalidations", st.ReadCache)
			}
			// Push the new records to the device too, and read twice more.
			for i := n; i < 2*n; i++ {
				mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
			}
			readBackAll(t, sess, n, want)
			readBackAll(t, sess, n, want)
		})
	}
}

// TestReadCacheExpiry checks that a cached record whose time passes is
// NotFound, and reclaimed.
func TestReadCacheExpiry(t *testing.T) {
	s := openTest(t, cachedConfig(t, "localmemory", 1<<20))
	sess := newTestSession(t, s)
	const n = 3000
	expireAt := s.Now() + 60_000
	for i := range n {
		if err := sess.UpsertExpire(testKey(i), testValue(i, 0, 96), expireAt); err != nil {
			t.Fatal(err)
		}
	}
	readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
	before := s.Stats()
	if before.ReadCache.Records == 0 {
		t.Fatalf("got %+v, want records cached", before.ReadCache)
	}
	s.skewMillis.Store(120_000)
	if v, st := get(t, sess, testKey(0)); st != NotFound {
		t.Fatalf("expired cached key: got %q %v, want NotFound", v, st)
	}
	if after := s.Stats(); after.ExpiredKeys != before.ExpiredKeys+1 || after.ReadCache.Hits == before.ReadCache.Hits {
		t.Errorf("got expired keys %d → %d, cache hits %d → %d; want one reclaimed, through the cache",
			before.ExpiredKeys, after.ExpiredKeys, before.ReadCache.Hits, after.ReadCache.Hits)
	}
}

// TestReadCacheAllocs checks that a GET the cache serves allocates nothing.
func TestReadCacheAllocs(t *testing.T) {
	s := openTest(t, cachedConfig(t, "localmemory", 1<<20))
	sess := newTestSession(t, s)
	const n = 3000
	for i := range n {
		mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
	}
	key := testKey(0)
	if _, st := get(t, sess, key); st != Found {
		t.Fatalf("got %v, want Found", st)
	}
	dst := make([]byte, 0, 256)
	if _, st, _ := sess.Read(key, dst, 0); st != Found {
		t.Fatalf("cached key: got %v, want Found at once", st)
	}
	if a := testing.AllocsPerRun(500, func() { sess.Read(key, dst, 0) }); a != 0 {
		t.Errorf("cached GET: got %v allocations, want 0", a)
	}
	// A pipelined batch: PrefetchKey and Prefetch (whose second pass
	// prefetches the cache's lines) before the Reads.
	keys := make([][]byte, 256)
	for i := range keys {
		keys[i] = testKey(i * 11 % n)
		if _, st := get(t, sess, keys[i]); st != Found {
			t.Fatalf("%s: got %v, want Found", keys[i], st)
		}
	}
	batch := func() {
		for _, k := range keys {
			sess.PrefetchKey(k)
		}
		sess.Prefetch()
		for _, k := range keys {
			if _, st, err := sess.Read(k, dst, 0); st != Found || err != nil {
				t.Fatalf("%s: got %v %v, want Found at once", k, st, err)
			}
		}
	}
	if a := testing.AllocsPerRun(20, batch); a != 0 {
		t.Errorf("batch of %d cached GETs: got %v allocations, want 0", len(keys), a)
	}
}

// TestReadCacheConcurrent runs writers that update and delete keys while
// readers GET them through the cache, on every backend: every value read
// must be one written for its key, and never older than the last update
// acknowledged before the read began.
func TestReadCacheConcurrent(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			// A cache of about a third of the keys, so that admissions,
			// evictions and invalidations all happen.
			s := openTest(t, cachedConfig(t, backend, 64<<10))
			const writers, readers = 2, 3
			keys, rounds := 6000, int64(6)
			if raceEnabled {
				// A third of the records still on the device, a cache of
				// a third of those: every path is taken at half the work.
				keys, rounds = 3000, 4
			}
			acked := make([]atomic.Int64, keys) // last version acknowledged per key
			load := s.NewSession()
			for i := range keys {
				if err := load.Upsert(testKey(i), testValue(i, 0, 96)); err != nil {
					t.Fatal(err)
				}
			}
			load.Close()
			deleted := func(version int64) bool { return version%5 == 4 }
			var writing, reading sync.WaitGroup
			var done atomic.Bool
			errs := make(chan error, writers+readers)
			for w := range writers {
				writing.Add(1)
				go func() {
					defer writing.Done()
					sess := s.NewSession()
					defer sess.Close()
					for r := int64(1); r <= rounds; r++ {
						for i := w; i < keys; i += writers {
							var err error
							if deleted(r) {
								_, err = sess.Delete(testKey(i))
							} else {
								err = sess.Upsert(testKey(i), testValue(i, int(r), 96))
							}
							if err != nil {
								errs <- err
								return
							}
							acked[i].Store(r)
						}
					}
				}()
			}
			for rd := range readers {
				reading.Add(1)
				go func() {
					defer reading.Done()
					sess := s.NewSession()
					defer sess.Close()
					for pass := 0; !done.Load() || pass < 3; pass++ {
						for i := rd; i < keys; i += readers {
							before := acked[i].Load()
							// Every other read is announced as a pipelined
							// batch's is, so that Prefetch's passes over
							// the cache's sets race with the writers too.
							if i%2 == 0 {
								sess.PrefetchKey(testKey(i))
								sess.Prefetch()
							}
							v, st, err := getFrom(sess, testKey(i))
							if err == nil {
								err = checkRead(i, v, st, before, acked[i].Load(), deleted)
							}
							if err != nil {
								errs <- err
								return
							}
						}
					}
				}()
			}
			writing.Wait()
			done.Store(true)
			reading.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if st := s.Stats().ReadCache; st.Hits == 0 || st.Admissions == 0 || st.Invalidations == 0 {
				t.Errorf("got %+v, want the readers served by the cache and writers invalidating it", st)
			}
		})
	}
}

// getFrom reads key, waiting for the device if it has to.
func getFrom(sess *Session, key []byte) ([]byte, Status, error) {
	v, st, err := sess.Read(key, nil, 1)
	if err != nil || st != Pending {
		return v, st, err
	}
	var rerr error
	err = sess.CompletePending(true, func(_ uint64, value []byte, status Status, err error) {
		v, st, rerr = bytes.Clone(value), status, err
	})
	if err == nil {
		err = rerr
	}
	return v, st, err
}

// checkRead judges a read of key i that began when version before was the
// last acknowledged and ended when after was: a value must be one written
// for the key, at or after before, and not a deletion's; NotFound needs a
// deletion in [before, after+1] (the writer may be past its write and not
// yet past its acknowledgement).
func checkRead(i int, v []byte, st Status, before, after int64, deleted func(int64) bool) error {
	if st == NotFound {
		for r := before; r <= after+1; r++ {
			if deleted(r) {
				return nil
			}
		}
		return fmt.Errorf("key %d: NotFound, but versions %d..%d were not deletions", i, before, after+1)
	}
	prefix, _, ok := bytes.Cut(v, []byte(";"))
	_, ver, ok2 := bytes.Cut(prefix, []byte("/"))
	g, err := strconv.ParseInt(string(ver), 10, 64)
	switch {
	case !ok || !ok2 || err != nil || !bytes.Equal(v, testValue(i, int(g), 96)):
		return fmt.Errorf("key %d: read %q, not a value written for it", i, v)
	case g < before || deleted(g):
		return fmt.Errorf("key %d: read version %d after version %d was acknowledged", i, g, before)
	case g > after+1:
		return fmt.Errorf("key %d: read version %d, not yet written (acknowledged %d)", i, g, after)
	}
	return nil
}
