package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// allBackends are the in-memory store and every tiered device.
var allBackends = append([]string{""}, tieredBackends...)

func backendName(b string) string {
	if b == "" {
		return "memory"
	}
	return b
}

func mustUpsertExpire(t testing.TB, sess *Session, key, value []byte, at int64) {
	t.Helper()
	if err := sess.UpsertExpire(key, value, at); err != nil {
		t.Fatalf("UpsertExpire(%q, %d B, %d): %v", key, len(value), at, err)
	}
}

// TestExpiryLazy writes keys with and without a TTL, evicts most of them to
// the device, moves the clock past the TTL and reads them all back: the ones
// with a TTL must be found expired after their records come back from the
// device, and the key count must drop by exactly them.
func TestExpiryLazy(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backendName(backend), func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 4000 // 4000 × 136 B: most of it leaves the 256 KiB of memory
			deadline := time.Now().Add(time.Hour).UnixMilli()
			for i := range n {
				if i%2 == 0 {
					mustUpsertExpire(t, sess, testKey(i), testValue(i, 0, 96), deadline+int64(i))
				} else {
					mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
				}
			}
			sess.Settle()
			if got := s.Stats().Keys; got != n {
				t.Fatalf("Keys after the load: got %d, want %d", got, n)
			}
			if backend != "" && s.Stats().HeadAddress <= s.Stats().BeginAddress {
				t.Fatalf("nothing was evicted to the device")
			}
			// The expiry time comes back from the device with the record.
			for _, i := range []int{0, 2, n - 2} {
				e, err := sess.Lookup(testKey(i))
				if err != nil || !e.Live || e.ExpireAt != deadline+int64(i) || !bytes.Equal(e.Value, testValue(i, 0, 96)) {
					t.Fatalf("Lookup(%d): got live %v, expiry %d, %q, %v; want live, expiry %d", i, e.Live, e.ExpireAt, e.Value, err, deadline+int64(i))
				}
			}
			readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
			readsBefore := s.Stats().CompletedReads

			s.skewMillis.Store(2 * time.Hour.Milliseconds())
			readBackAll(t, sess, n, func(i int) []byte {
				if i%2 == 0 {
					return nil
				}
				return testValue(i, 0, 96)
			})
			st := s.Stats()
			if st.Keys != n/2 || st.ExpiredKeys != n/2 {
				t.Errorf("after the TTLs passed: Keys %d, ExpiredKeys %d; want %d and %d", st.Keys, st.ExpiredKeys, n/2, n/2)
			}
			if backend != "" && st.CompletedReads-readsBefore < n/4 {
				t.Errorf("device reads while expiring: %d, want at least %d (the evicted records)", st.CompletedReads-readsBefore, n/4)
			}
			// The tombstones stand: a second pass changes nothing.
			readBackAll(t, sess, n, func(i int) []byte {
				if i%2 == 0 {
					return nil
				}
				return testValue(i, 0, 96)
			})
			if got := s.Stats().Keys; got != n/2 {
				t.Errorf("Keys after a second pass: got %d, want %d", got, n/2)
			}
		})
	}
}

// TestExpirySweep leaves keys with a TTL alone, in memory and on the
// device, and moves the clock past their time: the active sweep must
// reclaim every one of them, and none of the keys without a TTL or
// rewritten without one.
func TestExpirySweep(t *testing.T) {
	for _, backend := range []string{"", "localmemory", "libaio"} {
		t.Run(backendName(backend), func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 3000
			deadline := time.Now().Add(time.Hour).UnixMilli()
			for i := range n {
				if i%3 == 0 {
					mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
				} else {
					mustUpsertExpire(t, sess, testKey(i), testValue(i, 0, 96), deadline)
				}
			}
			// Rewritten without a TTL before the deadline: must survive.
			for i := 1; i < n; i += 30 {
				mustUpsert(t, sess, testKey(i), testValue(i, 1, 96))
			}
			sess.Settle()
			if st := s.Stats(); st.Keys != n || st.Expires != n-n/3 {
				t.Fatalf("before the deadline: Keys %d, Expires %d; want %d and %d", st.Keys, st.Expires, n, n-n/3)
			}
			// The sweeper sleeps on a real timer towards the deadline: move
			// the clock past it and wake the sweeper as a new entry would.
			s.skewMillis.Store(time.Hour.Milliseconds() + 1000)
			woken := time.Now()
			s.sched.wake <- struct{}{}
			survivors := n/3 + len(seq(1, n, 30))
			// The last reclaim can come before the sweep has dropped the
			// rewritten keys' stale entries (it takes a bounded number per
			// tick), so wait for both.
			waitFor(t, 30*time.Second, func() bool { st := s.Stats(); return st.Keys == int64(survivors) && st.Expires == 0 })
			t.Logf("the sweep reclaimed %d keys in %v", n-survivors, time.Since(woken))
			st := s.Stats()
			if st.ExpiredKeys != int64(n-survivors) || st.Expires != 0 || st.Keys != int64(survivors) {
				t.Errorf("Keys %d, ExpiredKeys %d, Expires %d; want %d, %d and 0", st.Keys, st.ExpiredKeys, st.Expires, survivors, n-survivors)
			}
			readBackAll(t, sess, n, func(i int) []byte {
				switch {
				case i%3 == 0:
					return testValue(i, 0, 96)
				case (i-1)%30 == 0:
					return testValue(i, 1, 96)
				}
				return nil
			})
		})
	}
}

// TestExpirySweepTimer checks the sweeper wakes on its own at a deadline
// that arrives while it sleeps, without any read.
func TestExpirySweepTimer(t *testing.T) {
	s := openTest(t, smallConfig(t, ""))
	sess := newTestSession(t, s)
	mustUpsert(t, sess, []byte("stays"), []byte("v"))
	set := time.Now()
	mustUpsertExpire(t, sess, []byte("goes"), []byte("v"), set.Add(50*time.Millisecond).UnixMilli())
	waitFor(t, 10*time.Second, func() bool { return s.Stats().Keys == 1 })
	if took := time.Since(set); took < 49*time.Millisecond { // the deadline is in whole milliseconds
		t.Errorf("reclaimed %v after the SET, before its 50 ms", took)
	}
	t.Logf("a 50 ms TTL reclaimed %v after the write", time.Since(set))
}

func seq(from, to, step int) []int {
	var s []int
	for i := from; i < to; i += step {
		s = append(s, i)
	}
	return s
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestModify checks the writers' view of expiry: RMW keeps a key's TTL,
// Modify sees an expired key as absent, a Put with a past time removes the
// key, and Delete of an expired key answers false but counts it out.
func TestModify(t *testing.T) {
	for _, backend := range []string{"", "localmemory"} {
		t.Run(backendName(backend), func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			now := time.Now().UnixMilli()
			later := now + time.Hour.Milliseconds()
			mustUpsertExpire(t, sess, []byte("counter"), []byte("41"), later)
			v, err := sess.RMW([]byte("counter"), func(old []byte, exists bool, dst []byte) ([]byte, error) {
				if !exists || string(old) != "41" {
					t.Errorf("RMW: got %q, exists %v; want 41", old, exists)
				}
				return append(dst[:0], "42"...), nil
			})
			if err != nil || string(v) != "42" {
				t.Fatalf("RMW: got %q, %v", v, err)
			}
			if e, err := sess.Lookup([]byte("counter")); err != nil || e.ExpireAt != later || string(e.Value) != "42" {
				t.Errorf("after RMW: got %q expiring at %d, %v; want 42 expiring at %d", e.Value, e.ExpireAt, err, later)
			}
			// Modify: change only the expiry (EXPIRE), then persist.
			set := func(key string, op Op, value string, at int64) {
				t.Helper()
				err := sess.Modify([]byte(key), true, func(e Entry) (Change, error) {
					v := []byte(value)
					if value == "" {
						v = e.Value
					}
					return Change{Op: op, Value: v, ExpireAt: at}, nil
				})
				if err != nil {
					t.Fatalf("Modify(%s): %v", key, err)
				}
			}
			set("counter", Put, "", later+5)
			if e, _ := sess.Lookup([]byte("counter")); e.ExpireAt != later+5 || string(e.Value) != "42" {
				t.Errorf("after a new expiry: got %q expiring at %d, want 42 at %d", e.Value, e.ExpireAt, later+5)
			}
			set("counter", Put, "", 0)
			if e, _ := sess.Lookup([]byte("counter")); e.ExpireAt != 0 || !e.Live {
				t.Errorf("after persist: got live %v expiring at %d, want live, no expiry", e.Live, e.ExpireAt)
			}
			set("counter", Put, "", now-1) // a past time deletes
			if e, _ := sess.Lookup([]byte("counter")); e.Live {
				t.Errorf("after a past expiry: got live, want gone")
			}
			if got := s.Stats().Keys; got != 0 {
				t.Errorf("Keys: got %d, want 0", got)
			}

			// The upsert wakes the sweeper, which must not reclaim the key
			// once the clock moves: the count below is of a key found
			// expired but not yet reclaimed.
			mustUpsertExpire(t, sess, []byte("soon"), []byte("x"), later)
			s.stopSweeper()
			s.skewMillis.Store(2 * time.Hour.Milliseconds())
			var saw Entry
			err = sess.Modify([]byte("soon"), true, func(e Entry) (Change, error) {
				saw = e
				return Change{Op: Keep}, nil
			})
			if err != nil || saw.Live || saw.Value != nil || saw.ExpireAt != 0 {
				t.Errorf("Modify of an expired key: saw %+v, %v; want not live", saw, err)
			}
			if got := s.Stats().Keys; got != 1 {
				t.Errorf("Keys with an expired key not yet reclaimed: got %d, want 1 (as Redis counts)", got)
			}
			if existed, err := sess.Delete([]byte("soon")); err != nil || existed {
				t.Errorf("Delete of an expired key: got %v, %v; want false", existed, err)
			}
			if got := s.Stats().Keys; got != 0 {
				t.Errorf("Keys after deleting the expired key: got %d, want 0", got)
			}
		})
	}
}

// TestExpireDue checks that ExpireDue reclaims what is due at once, without
// waiting for the sweeper, and at most as many as asked.
func TestExpireDue(t *testing.T) {
	s := openTest(t, smallConfig(t, "localmemory"))
	sess := newTestSession(t, s)
	later := time.Now().Add(time.Hour).UnixMilli()
	for i := range 100 {
		mustUpsertExpire(t, sess, testKey(i), []byte("v"), later)
	}
	s.skewMillis.Store(2 * time.Hour.Milliseconds())
	// The sweeper may wake meanwhile and take some: the two share the
	// schedule, each entry handled once.
	if n, err := sess.ExpireDue(30); err != nil || n > 30 || n == 0 && s.Stats().ExpiredKeys == 0 {
		t.Fatalf("ExpireDue(30): got %d, %v; want 1 to 30", n, err)
	}
	if st := s.Stats(); st.Keys != 100-st.ExpiredKeys {
		t.Errorf("Keys %d with %d reclaimed: want %d", st.Keys, st.ExpiredKeys, 100-st.ExpiredKeys)
	}
	if _, err := sess.ExpireDue(1000); err != nil {
		t.Errorf("ExpireDue(1000): %v", err)
	}
	if st := s.Stats(); st.Keys != 0 || st.Expires != 0 || st.ExpiredKeys != 100 {
		t.Errorf("Keys %d, Expires %d, ExpiredKeys %d; want 0, 0 and 100", st.Keys, st.Expires, st.ExpiredKeys)
	}
}

func TestScheduleHeap(t *testing.T) {
	var sh scheduleShard
	deadlines := []int64{50, 10, 40, 10, 30, 20, 60, 5}
	for i, d := range deadlines {
		sh.heap = append(sh.heap, uint64(d), uint64(i))
		sh.up(len(sh.heap)/2 - 1)
	}
	got := sh.popDue(40, nil, 100)
	want := "5 10 10 20 30 40"
	var g []string
	for i := 0; i < len(got); i += 2 {
		g = append(g, fmt.Sprint(got[i]))
	}
	if fmt.Sprint(g) != "["+want+"]" {
		t.Errorf("popDue(40): got deadlines %v, want [%s]", g, want)
	}
	if len(sh.heap) != 4 || sh.heap[0] != 50 {
		t.Errorf("left: %v, want 50 and 60", sh.heap)
	}
}

// TestHoldClock moves the store's clock past a key's expiry time while a
// session holds its clock: the key must stay live for that session until
// it takes a new reading, and expire for a session that does not hold one.
// The active sweep is stopped first: it goes by the store's clock, and the
// upsert wakes it, so it could reclaim the key before the held session
// looks (a fresh-clone CI run saw that once).
func TestHoldClock(t *testing.T) {
	s := openTest(t, smallConfig(t, ""))
	held, free := newTestSession(t, s), newTestSession(t, s)
	key := testKey(1)
	mustUpsertExpire(t, held, key, testValue(1, 0, 96), time.Now().Add(time.Hour).UnixMilli())
	s.stopSweeper()
	held.HoldClock()
	before := held.Now()
	if e, err := held.Lookup(key); err != nil || !e.Live {
		t.Fatalf("Lookup before the clock moves: got live %v, %v; want live", e.Live, err)
	}
	s.skewMillis.Store(2 * time.Hour.Milliseconds())
	tests := []struct {
		name string
		sess *Session
		step func()
		live bool
	}{
		{"held, same reading", held, func() {}, true},
		{"not held", free, func() {}, false},
		{"held again", held, held.HoldClock, false},
	}
	for _, tc := range tests {
		tc.step()
		e, err := tc.sess.Lookup(key)
		if err != nil || e.Live != tc.live {
			t.Fatalf("%s: Lookup got live %v, %v; want live %v", tc.name, e.Live, err, tc.live)
		}
	}
	if got := held.Now(); got < before+time.Hour.Milliseconds() {
		t.Fatalf("Now after a new HoldClock: got %d, want at least %d", got, before+time.Hour.Milliseconds())
	}
	held.ReleaseClock()
}

// TestExpiringKeys keeps a model of which keys have an expiry time while
// keys are written with and without one, overwritten after their records
// left memory (so that the upserts' existence checks settle the count),
// deleted, and finally expired: Stats.ExpiringKeys must match the model at
// every step, as Keys does.
func TestExpiringKeys(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backendName(backend), func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			sess := newTestSession(t, s)
			const n = 3000
			later := time.Now().Add(time.Hour).UnixMilli()
			expiring := map[int]bool{} // key index → has an expiry time; absent: deleted
			upsert := func(i int, ttl bool) {
				t.Helper()
				at := int64(0)
				if ttl {
					at = later
				}
				mustUpsertExpire(t, sess, testKey(i), testValue(i, 0, 96), at)
				expiring[i] = ttl
			}
			check := func(step string) {
				t.Helper()
				sess.Settle()
				want := 0
				for _, ttl := range expiring {
					if ttl {
						want++
					}
				}
				st := s.Stats()
				if st.ExpiringKeys != int64(want) || st.Keys != int64(len(expiring)) {
					t.Fatalf("%s: got Keys %d, ExpiringKeys %d; want %d and %d", step, st.Keys, st.ExpiringKeys, len(expiring), want)
				}
			}
			for i := range n {
				upsert(i, i%3 == 0)
			}
			check("after the load")
			for i := 0; i < n; i += 2 { // flip the TTL of every other key
				upsert(i, i%3 != 0)
			}
			check("after the overwrites")
			for i := 0; i < n; i += 5 {
				if _, err := sess.Delete(testKey(i)); err != nil {
					t.Fatal(err)
				}
				delete(expiring, i)
			}
			check("after the deletes")
			mustUpsertExpire(t, sess, testKey(1), testValue(1, 0, 96), time.Now().Add(-time.Second).UnixMilli())
			delete(expiring, 1) // an expiry time already past deletes
			check("after a SET with a past time")
			s.skewMillis.Store(2 * time.Hour.Milliseconds())
			for i := range n {
				if _, err := sess.Lookup(testKey(i)); err != nil {
					t.Fatal(err)
				}
				if expiring[i] {
					delete(expiring, i) // found expired: reclaimed
				}
			}
			check("after every key with a TTL expired")
		})
	}
}
