package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// settleWatching settles sess's existence checks, as Settle does, and
// returns the largest device window any of them read.
func settleWatching(sess *Session) (largest int) {
	for {
		for c := 0; c < sess.nChunks; c++ {
			chunk := sess.chunks[c].Load()
			for i := range chunk.slots {
				if pr := &chunk.slots[i]; pr.check {
					largest = max(largest, len(pr.window))
				}
			}
		}
		sess.pumpChecks()
		if sess.checking == 0 {
			return largest
		}
		sess.waitNotify()
	}
}

// TestExistenceCheckReadsHeadOnly: a SET (an upsert) of a key whose old
// record holds a 40 KiB value on the device settles whether the key was
// live by reading the record's header and key, a sector or two, never
// the old value (it read the whole old record, and after a big read the
// last value's size from the start); a DEL of such a key reads as little.
// The key counter comes out right whether the old record was live or a
// tombstone.
func TestExistenceCheckReadsHeadOnly(t *testing.T) {
	const valueBytes, bigKeys = 40 << 10, 12
	big := func(i int) []byte { return fmt.Appendf(nil, "big:%d", i) }
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			load := newTestSession(t, s)
			for i := 0; i < bigKeys; i++ {
				mustUpsert(t, load, big(i), bytes.Repeat([]byte{byte('a' + i)}, valueBytes))
			}
			if _, err := load.Delete(big(3)); err != nil {
				t.Fatal(err)
			}
			// Push all of them out of the 256 KiB in memory.
			for i := 0; i < 400; i++ {
				mustUpsert(t, load, testKey(i), testValue(i, 0, 2000))
			}
			load.Settle()
			if st := s.Stats(); st.HeadAddress <= st.BeginAddress {
				t.Fatalf("nothing reached the device: head %d, begin %d", st.HeadAddress, st.BeginAddress)
			}
			sector := s.Stats().SectorSize
			for _, tt := range []struct {
				name      string
				bigRead   bool // read a big value first: the session guesses big records
				key       int
				wantNewer int64 // the change in Keys
			}{
				{"overwrite of a live key", false, 0, 0},
				{"overwrite of a live key after a big read", true, 1, 0},
				{"overwrite of a deleted key", false, 3, 1},
				{"overwrite of a deleted key after a big read", true, 3, 0}, // live again after the case above
			} {
				sess := newTestSession(t, s)
				if tt.bigRead {
					if v, st := get(t, sess, big(5)); st != Found || len(v) != valueBytes {
						t.Fatalf("%s: GET big:5: %v, %d B", tt.name, st, len(v))
					}
				}
				before := s.Stats().Keys
				mustUpsert(t, sess, big(tt.key), []byte("small"))
				largest := settleWatching(sess)
				if largest > 2*sector {
					t.Errorf("%s: the existence check read a %d B window, want at most two %d B sectors", tt.name, largest, sector)
				}
				if got := s.Stats().Keys - before; got != tt.wantNewer {
					t.Errorf("%s: Keys changed by %d, want %d", tt.name, got, tt.wantNewer)
				}
				if v, st := get(t, sess, big(tt.key)); st != Found || string(v) != "small" {
					t.Errorf("%s: GET after the SET: %v, %q", tt.name, st, v)
				}
			}
			del := newTestSession(t, s)
			existed, err := del.Delete(big(7))
			if err != nil || !existed {
				t.Fatalf("Delete big:7: existed %v, %v; want true", existed, err)
			}
			if n := len(del.syncBuf); n > max(4096, 2*sector) {
				t.Errorf("Delete of a key with a %d B value on the device read into a %d B buffer, want a sector or two", valueBytes, n)
			}
		})
	}
}

// TestChecksAllSettle: every existence check a session makes is counted
// settled exactly once, whichever way it ends (on the completion
// goroutine, by the session, after following a chain), so that SettleAll
// on another session waits for the writes made before it and no longer.
func TestChecksAllSettle(t *testing.T) {
	for _, backend := range tieredBackends {
		t.Run(backend, func(t *testing.T) {
			s := openTest(t, smallConfig(t, backend))
			writer, asker := newTestSession(t, s), newTestSession(t, s)
			for i := range 3000 {
				mustUpsert(t, writer, testKey(i), testValue(i, 0, 100))
			}
			for i := 0; i < 300; i += 3 {
				if _, err := writer.Delete(testKey(i)); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 3000 { // overwrites, and keys brought back
				mustUpsert(t, writer, testKey(i), testValue(i, 1, 100))
			}
			writer.SubmitChecks()
			start := time.Now()
			asker.SettleAll(5 * time.Second)
			waited := time.Since(start)
			made, settled := s.checksMade.Load(), s.checksSettled.Load()
			if made == 0 {
				t.Fatalf("no existence checks made: the test wrote nothing over the device")
			}
			if settled != made {
				t.Errorf("SettleAll returned after %v with %d of %d checks settled", waited, settled, made)
			}
			if got := s.Stats().Keys; got != 3000 {
				t.Errorf("keys after SettleAll: got %d, want 3000", got)
			}
			writer.Settle()
			if made, settled := s.checksMade.Load(), s.checksSettled.Load(); settled != made {
				t.Errorf("after the writer settled: %d of %d checks settled", settled, made)
			}
		})
	}
}
