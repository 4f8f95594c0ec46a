package store

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// tieredBackends are the devices the tiered tests run on.
var tieredBackends = []string{"localmemory", "libaio", "uring"}

// smallConfig is a tiered store with 64 KiB pages and 256 KiB of memory, so
// that a few thousand records already live mostly on the device.
func smallConfig(t testing.TB, backend string) Config {
	cfg := Config{
		MemoryBytes:  256 << 10,
		PageBytes:    64 << 10,
		SegmentBytes: 1 << 20,
		IndexBytes:   64 << 10,
	}
	switch backend {
	case "":
	case "localmemory":
		cfg.StorageTier = true
		cfg.DeviceType = "localmemory"
	default:
		cfg.StorageTier = true
		cfg.DeviceType = "native"
		cfg.Backend = backend
		cfg.LogDir = testenv.MustDiskDir(t)
	}
	return cfg
}

func openTest(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func newTestSession(t testing.TB, s *Store) *Session {
	sess := s.NewSession()
	t.Cleanup(sess.Close)
	return sess
}

// testKey is the 16-byte key of record i.
func testKey(i int) []byte { return fmt.Appendf(nil, "key:%012d", i) }

// testValue is n bytes that name record i and its version, so a value read
// back proves which write it came from.
func testValue(i, version, n int) []byte {
	v := bytes.Repeat([]byte{byte('a' + i%26)}, n)
	copy(v, fmt.Sprintf("%d/%d;", i, version))
	return v
}

// get reads key and waits for the device if it has to.
func get(t testing.TB, sess *Session, key []byte) ([]byte, Status) {
	t.Helper()
	v, st, err := sess.Read(key, nil, 7)
	if err != nil {
		t.Fatalf("Read(%q): %v", key, err)
	}
	if st != Pending {
		return v, st
	}
	delivered := 0
	err = sess.CompletePending(true, func(token uint64, value []byte, status Status, err error) {
		delivered++
		if err != nil {
			t.Errorf("Read(%q) completion: %v", key, err)
		}
		if token != 7 {
			t.Errorf("Read(%q) completion: got token %d, want 7", key, token)
		}
		v, st = bytes.Clone(value), status
	})
	if err != nil || delivered != 1 {
		t.Fatalf("CompletePending: got %d results, %v; want 1, nil", delivered, err)
	}
	return v, st
}

func mustUpsert(t testing.TB, sess *Session, key, value []byte) {
	t.Helper()
	if err := sess.Upsert(key, value); err != nil {
		t.Fatalf("Upsert(%q, %d B): %v", key, len(value), err)
	}
}

// readBackAll reads every key 0..n-1 in batches of pending reads and checks
// each value against want(i).
func readBackAll(t *testing.T, sess *Session, n int, want func(i int) []byte) {
	t.Helper()
	const batch = 100
	for lo := 0; lo < n; lo += batch {
		got := make(map[int][]byte)
		for i := lo; i < min(lo+batch, n); i++ {
			v, st, err := sess.Read(testKey(i), nil, uint64(i))
			switch {
			case err != nil:
				t.Fatalf("Read(%d): %v", i, err)
			case st == Found:
				got[i] = v
			case st == NotFound:
				got[i] = nil
			}
		}
		err := sess.CompletePending(true, func(token uint64, value []byte, st Status, err error) {
			if err != nil {
				t.Errorf("Read(%d): %v", token, err)
			}
			if st == Found {
				got[int(token)] = bytes.Clone(value)
			} else {
				got[int(token)] = nil
			}
		})
		if err != nil {
			t.Fatalf("CompletePending: %v", err)
		}
		for i := lo; i < min(lo+batch, n); i++ {
			w := want(i)
			g, ok := got[i]
			if !ok {
				t.Fatalf("key %d: no result delivered", i)
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("key %d: got %q, want %q", i, g, w)
			}
		}
	}
}

// spreadKeys is the keys of records 0, stride, 2 × stride, … (n of them).
func spreadKeys(n, stride int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = testKey(i * stride)
	}
	return keys
}

// batchAllocs is the allocations per batch of one Read of each key followed
// by a CompletePending that waits for them all, over runs batches.
func batchAllocs(sess *Session, keys [][]byte, runs int, fn func(uint64, []byte, Status, error)) float64 {
	dst := make([]byte, 0, 256)
	return testing.AllocsPerRun(runs, func() {
		for i, k := range keys {
			sess.Read(k, dst, uint64(i))
		}
		sess.CompletePending(true, fn)
	})
}
