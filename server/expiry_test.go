package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tierbench/tierbench/server/store"
)

// TestGoRedisExpiry drives the TTL and keyspace commands through go-redis,
// as an application would use them.
func TestGoRedisExpiry(t *testing.T) {
	s := startServer(t, Config{ScatterGatherGet: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String()})
	defer rdb.Close()

	if err := rdb.Set(ctx, "a", "1", 10*time.Second).Err(); err != nil {
		t.Fatalf("Set with a TTL: %v", err)
	}
	if d, err := rdb.TTL(ctx, "a").Result(); err != nil || d != 10*time.Second {
		t.Errorf("TTL: got %v, %v; want 10s", d, err)
	}
	if d, err := rdb.PTTL(ctx, "a").Result(); err != nil || d <= 9*time.Second || d > 10*time.Second {
		t.Errorf("PTTL: got %v, %v; want within (9s, 10s]", d, err)
	}
	if err := rdb.Set(ctx, "ms", "1", 1500*time.Millisecond).Err(); err != nil {
		t.Fatalf("Set with a millisecond TTL (PX): %v", err)
	}
	if ok, err := rdb.SetNX(ctx, "a", "2", 0).Result(); err != nil || ok {
		t.Errorf("SetNX of an existing key: got %v, %v; want false", ok, err)
	}
	if ok, err := rdb.SetNX(ctx, "b", "2", time.Minute).Result(); err != nil || !ok {
		t.Errorf("SetNX of a new key: got %v, %v; want true", ok, err)
	}
	if d, err := rdb.TTL(ctx, "b").Result(); err != nil || d != time.Minute {
		t.Errorf("TTL after SetNX with a TTL: got %v, %v; want 1m", d, err)
	}
	if ok, err := rdb.SetXX(ctx, "nope", "x", 0).Result(); err != nil || ok {
		t.Errorf("SetXX of a missing key: got %v, %v; want false", ok, err)
	}
	if old, err := rdb.SetArgs(ctx, "a", "3", redis.SetArgs{KeepTTL: true, Get: true}).Result(); err != nil || old != "1" {
		t.Errorf("SetArgs KEEPTTL GET: got %q, %v; want 1", old, err)
	}
	if d, _ := rdb.TTL(ctx, "a").Result(); d != 10*time.Second {
		t.Errorf("TTL after KEEPTTL: got %v, want 10s", d)
	}
	if ok, err := rdb.ExpireNX(ctx, "a", time.Hour).Result(); err != nil || ok {
		t.Errorf("ExpireNX on a key with a TTL: got %v, %v; want false", ok, err)
	}
	if ok, err := rdb.ExpireGT(ctx, "a", time.Hour).Result(); err != nil || !ok {
		t.Errorf("ExpireGT to a later time: got %v, %v; want true", ok, err)
	}
	if ok, err := rdb.Persist(ctx, "a").Result(); err != nil || !ok {
		t.Errorf("Persist: got %v, %v; want true", ok, err)
	}
	if d, _ := rdb.TTL(ctx, "a").Result(); d != -1 {
		t.Errorf("TTL after Persist: got %v, want -1 (go-redis's no expiry)", d)
	}
	if old, err := rdb.GetSet(ctx, "a", "4").Result(); err != nil || old != "3" {
		t.Errorf("GetSet: got %q, %v; want 3", old, err)
	}
	if n, err := rdb.Append(ctx, "a", "56").Result(); err != nil || n != 3 {
		t.Errorf("Append: got %d, %v; want 3", n, err)
	}
	if n, err := rdb.StrLen(ctx, "a").Result(); err != nil || n != 3 {
		t.Errorf("StrLen: got %d, %v; want 3", n, err)
	}
	if typ, err := rdb.Type(ctx, "a").Result(); err != nil || typ != "string" {
		t.Errorf("Type: got %q, %v; want string", typ, err)
	}
	if v, err := rdb.GetDel(ctx, "a").Result(); err != nil || v != "456" {
		t.Errorf("GetDel: got %q, %v; want 456", v, err)
	}
	if err := rdb.Get(ctx, "a").Err(); err != redis.Nil {
		t.Errorf("Get after GetDel: got %v, want redis.Nil", err)
	}
	if err := rdb.SetEx(ctx, "ex", "v", time.Hour).Err(); err != nil {
		t.Errorf("SetEx: %v", err)
	}
	if ok, err := rdb.PExpireAt(ctx, "ex", time.UnixMilli(4102444800123)).Result(); err != nil || !ok {
		t.Errorf("PExpireAt: got %v, %v", ok, err)
	}
	if at, err := rdb.PExpireTime(ctx, "ex").Result(); err != nil || at != 4102444800123*time.Millisecond {
		t.Errorf("PExpireTime: got %v, %v; want 4102444800123 ms", at, err)
	}

	for i := range 500 {
		rdb.Set(ctx, fmt.Sprintf("scan:%03d", i), "v", 0)
	}
	seen := map[string]int{}
	iter := rdb.Scan(ctx, 0, "scan:*", 50).Iterator()
	for iter.Next(ctx) {
		seen[iter.Val()]++
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("Scan: %v", err)
	}
	for i := range 500 {
		if n := seen[fmt.Sprintf("scan:%03d", i)]; n != 1 {
			t.Fatalf("Scan: scan:%03d seen %d times, want 1", i, n)
		}
	}
	if len(seen) != 500 {
		t.Errorf("Scan MATCH scan:*: %d keys, want 500", len(seen))
	}
	if keys, err := rdb.Keys(ctx, "scan:1?9").Result(); err != nil || len(keys) != 10 {
		t.Errorf("Keys scan:1?9: got %d keys, %v; want 10", len(keys), err)
	}

	// INFO stats counts the keys reclaimed because their time passed.
	rdb.Del(ctx, "ms") // its 1.5 s may pass during the count
	expired := func() int {
		info, err := rdb.Info(ctx, "stats").Result()
		_, after, ok := strings.Cut(info, "\r\nexpired_keys:")
		n, cerr := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\r\n", 2)[0]))
		if err != nil || !ok || cerr != nil {
			t.Fatalf("INFO stats has no expired_keys count: %q, %v", info, err)
		}
		return n
	}
	before := expired()
	if err := rdb.Set(ctx, "gone", "v", 50*time.Millisecond).Err(); err != nil {
		t.Fatalf("Set with PX 50: %v", err)
	}
	time.Sleep(80 * time.Millisecond)
	if err := rdb.Get(ctx, "gone").Err(); err != redis.Nil {
		t.Errorf("Get after the TTL: got %v, want redis.Nil", err)
	}
	if got := expired(); got != before+1 {
		t.Errorf("INFO stats expired_keys after one key expired: got %d, want %d", got, before+1)
	}
	// Of the keys left, b (SetNX with a minute) and ex (PExpireAt) expire.
	if info, err := rdb.Info(ctx, "keyspace").Result(); err != nil || !strings.Contains(info, ",expires=2,") {
		t.Errorf("INFO keyspace: got %q, %v; want expires=2", info, err)
	}
}

// TestExpiryUnderLoad sets keys with PX 50 while clients keep reading and
// overwriting other keys, and checks they are gone 60 ms later, by DBSIZE
// alone and by GET, in memory and tiered (where the load pushes the
// records onto the device before their time).
func TestExpiryUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   store.Config
	}{
		{"memory", store.Config{}},
		{"tiered-libaio", tieredStore(t, "native", "libaio")},
		{"tiered-uring", tieredStore(t, "native", "uring")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, Config{ScatterGatherGet: true, Store: tc.st})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String(), PoolSize: 8})
			defer rdb.Close()
			const base = 2000
			pipe := rdb.Pipeline()
			for i := range base {
				pipe.Set(ctx, "load:"+strconv.Itoa(i), tieredValue(i), 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("load: %v", err)
			}

			// The load: GETs and overwrites of the base keys, never a new key,
			// so DBSIZE stays base plus the keys with a TTL.
			var stop atomic.Bool
			var ops atomic.Int64
			var wg sync.WaitGroup
			for w := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 1))
					for !stop.Load() {
						p := rdb.Pipeline()
						for range 64 {
							i := rng.IntN(base)
							if rng.IntN(2) == 0 {
								p.Get(ctx, "load:"+strconv.Itoa(i))
							} else {
								p.Set(ctx, "load:"+strconv.Itoa(i), tieredValue(i), 0)
							}
						}
						if _, err := p.Exec(ctx); err != nil && !stop.Load() {
							t.Errorf("load: %v", err)
							return
						}
						ops.Add(64)
					}
				}()
			}
			defer func() { stop.Store(true); wg.Wait() }()

			for round, byGetFirst := range []bool{false, true} {
				keys := make([]string, 100)
				p := rdb.Pipeline()
				for i := range keys {
					keys[i] = fmt.Sprintf("ttl:%d:%d", round, i)
					p.Set(ctx, keys[i], "v", 50*time.Millisecond)
				}
				sentAt := time.Now()
				if _, err := p.Exec(ctx); err != nil {
					t.Fatalf("SET PX 50: %v", err)
				}
				setAt := time.Now()
				// (Unless the machine is so loaded that the keys may have
				// expired already.)
				if n, _ := rdb.DBSize(ctx).Result(); n != base+int64(len(keys)) && time.Since(sentAt) < 40*time.Millisecond {
					t.Fatalf("DBSIZE right after the SETs: got %d, want %d", n, base+len(keys))
				}
				time.Sleep(60*time.Millisecond - time.Since(setAt))
				if byGetFirst {
					for _, k := range keys {
						if err := rdb.Get(ctx, k).Err(); err != redis.Nil {
							t.Fatalf("GET %s 60 ms after SET PX 50: got %v, want nil", k, err)
						}
					}
				}
				if n, err := rdb.DBSize(ctx).Result(); err != nil || n != base {
					t.Fatalf("DBSIZE 60 ms after SET PX 50 (GET first: %v): got %d, %v; want %d", byGetFirst, n, err, base)
				}
				for _, k := range keys {
					if err := rdb.Get(ctx, k).Err(); err != redis.Nil {
						t.Fatalf("GET %s 60 ms after SET PX 50: got %v, want nil", k, err)
					}
				}
			}
			st := s.Store().Stats()
			t.Logf("%d load ops beside; store: %d expired keys, head %d, tail %d", ops.Load(), st.ExpiredKeys, st.HeadAddress, st.TailAddress)
			if ops.Load() == 0 {
				t.Errorf("the load did not run")
			}
		})
	}
}

// TestScanMillionKeysTiered loads 1 M keys into a tiered server whose log
// holds 4 MiB in memory (so nearly all of them are on the device) and runs
// one whole SCAN through go-redis while two clients overwrite random keys
// and add new ones: every loaded key must come back, and the few that come
// back twice (rewritten during the scan) are counted.
func TestScanMillionKeysTiered(t *testing.T) {
	cfg := tieredStore(t, "native", "uring")
	cfg.MemoryBytes, cfg.PageBytes, cfg.SegmentBytes, cfg.IndexBytes = 4<<20, 256<<10, 64<<20, 32<<20
	s := startServer(t, Config{ScatterGatherGet: true, Store: cfg})
	const n = 1_000_000
	key := func(i int) string { return fmt.Sprintf("k:%07d", i) }

	start := time.Now()
	c := dial(t, s)
	const perMset = 1000
	for lo := 0; lo < n; lo += 100 * perMset {
		var req []byte
		for b := lo; b < lo+100*perMset; b += perMset {
			args := make([]string, 0, 1+2*perMset)
			args = append(args, "MSET")
			for i := b; i < b+perMset; i++ {
				args = append(args, key(i), "v")
			}
			req = append(req, encodeArgs(args...)...)
		}
		c.send(req)
		for range 100 {
			if got := c.reply(); got != "+OK\r\n" {
				t.Fatalf("MSET: got %q", got)
			}
		}
	}
	// The loader's session settles the last existence checks (keys whose
	// index tag another key already had) at its next store call.
	c.do("GET", key(0))
	for end := time.Now().Add(10 * time.Second); s.Store().Stats().Keys != n && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	st := s.Store().Stats()
	if st.Keys != n || st.HeadAddress < st.TailAddress/2 {
		t.Fatalf("after the load: %d keys, head %d of tail %d; want %d keys, most on the device", st.Keys, st.HeadAddress, st.TailAddress, n)
	}
	loaded := time.Since(start)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Under -race a SCAN call of 5000 keys from the device can take longer
	// than go-redis's 3 s default.
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr().String(), PoolSize: 4, ReadTimeout: time.Minute})
	defer rdb.Close()
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for j := 0; !stop.Load(); j++ {
				p := rdb.Pipeline()
				for range 32 {
					if j%4 == 0 {
						p.Set(ctx, fmt.Sprintf("new:%d:%d", w, rng.Uint64()), "x", 0)
					} else {
						p.Set(ctx, key(rng.IntN(n)), "w", 0)
					}
				}
				if _, err := p.Exec(ctx); err != nil && !stop.Load() {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				writes.Add(32)
				time.Sleep(time.Millisecond) // a steady writer, not a flood
			}
		}()
	}

	seen := make([]uint8, n)
	scanStart := time.Now()
	cursor, calls, others := uint64(0), 0, 0
	for {
		keys, next, err := rdb.Scan(ctx, cursor, "", 5000).Result()
		if err != nil {
			t.Fatalf("SCAN %d: %v", cursor, err)
		}
		calls++
		for _, k := range keys {
			var i int
			if _, err := fmt.Sscanf(k, "k:%07d", &i); err == nil && i >= 0 && i < n && len(k) == 9 {
				seen[i] = min(seen[i]+1, 255)
			} else {
				others++
			}
		}
		if next == 0 {
			break
		}
		cursor = next
	}
	scanned := time.Since(scanStart)
	stop.Store(true)
	wg.Wait()
	twice := 0
	for i, c := range seen {
		if c == 0 {
			t.Fatalf("%s never returned by the scan", key(i))
		}
		twice += int(c) - 1
	}
	if twice > n/1000 {
		t.Errorf("%d keys returned more than once, want at most 0.1 %%", twice)
	}
	t.Logf("load %v; scan %v in %d calls with %d writes beside it: all %d keys, %d twice, %d keys created during the scan",
		loaded, scanned, calls, writes.Load(), n, twice, others)
}
