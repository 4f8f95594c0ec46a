package store

import (
	"strings"
	"testing"
)

// TestRegisteredReadBuffers runs a session's device reads on the uring
// backend, where its slot buffers are registered with the kernel: the
// values come back right through IORING_OP_READ_FIXED, a batch of reads
// allocates nothing, and closing the session releases its registrations.
func TestRegisteredReadBuffers(t *testing.T) {
	s := openTest(t, smallConfig(t, "uring"))
	describe := func() string { return s.dev.(interface{ Describe() string }).Describe() }
	if d := describe(); strings.Contains(d, "no registered buffers") {
		t.Skipf("the kernel has no registered buffers: %s", d)
	}
	sess := s.NewSession()
	const n = 5000
	for i := range n {
		mustUpsert(t, sess, testKey(i), testValue(i, 0, 96))
	}
	sess.Settle()
	readBackAll(t, sess, n, func(i int) []byte { return testValue(i, 0, 96) })
	if c := sess.chunks[0].Load(); c == nil || c.fixed == 0 {
		t.Fatalf("the session's first slot chunk is not registered (%s)", describe())
	}
	keys := spreadKeys(64, 50)
	found := 0
	fn := func(_ uint64, _ []byte, st Status, err error) {
		if st == Found && err == nil {
			found++
		}
	}
	if a := batchAllocs(sess, keys, 20, fn); a != 0 {
		t.Errorf("device reads: %v allocations per batch of %d, want 0", a, len(keys))
	}
	if found < 20*len(keys) {
		t.Errorf("registered reads found %d records, want %d", found, 20*len(keys))
	}
	sess.Close()
	if d := describe(); !strings.Contains(d, "registered buffers (0 of") {
		t.Errorf("after the session's Close: got %q, want no buffer still registered", d)
	}
}
