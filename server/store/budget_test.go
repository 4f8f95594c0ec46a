package store

import (
	"bytes"
	"fmt"
	"testing"
)

// TestReadBudget: with SetReadBudget, reads of records longer than a
// slot's buffer hold at most the budget of windows at once (or one window,
// when that alone passes it); the others wait in the session, none is
// refused, and each is delivered once with its own value.
func TestReadBudget(t *testing.T) {
	const valueBytes, keys = 20 << 10, 30
	value := func(i int) []byte {
		return append(fmt.Appendf(nil, "%04d", i), bytes.Repeat([]byte{byte('a' + i%26)}, valueBytes-4)...)
	}
	for _, backend := range tieredBackends {
		for _, tt := range []struct {
			budget int64
			learn  bool // read one record first: the reads aim whole windows at once
		}{{0, true}, {64 << 10, true}, {64 << 10, false}, {1 << 20, true}} {
			budget := tt.budget
			t.Run(fmt.Sprintf("%s/budget=%d/learn=%v", backend, budget, tt.learn), func(t *testing.T) {
				s := openTest(t, smallConfig(t, backend))
				load := newTestSession(t, s)
				for i := 0; i < keys; i++ {
					mustUpsert(t, load, testKey(i), value(i))
				}
				load.Settle()
				sess := newTestSession(t, s)
				if tt.learn {
					if _, st := get(t, sess, testKey(0)); st != Found {
						t.Fatalf("GET %s: %v", testKey(0), st)
					}
				}
				// Without learn, each read's first window is a guess too
				// short, and it is aimed again at its record's size as it
				// completes, within the budget.
				sess.SetReadBudget(budget)
				got := make([][]byte, keys)
				pending := 0
				for i := 0; i < keys; i++ {
					v, st, err := sess.Read(testKey(i), nil, uint64(i))
					switch {
					case err != nil:
						t.Fatalf("Read %s: %v", testKey(i), err)
					case st == Pending:
						pending++
					case st == Found:
						got[i] = bytes.Clone(v)
					default:
						t.Fatalf("Read %s: %v", testKey(i), st)
					}
				}
				if pending < keys/2 {
					t.Fatalf("%d of %d reads went to the device, want most", pending, keys)
				}
				window := int64(recordBytes(16, valueBytes, false)) + int64(s.Stats().SectorSize)
				// Reads wait for the budget as they are issued, or as
				// earlier ones complete. Both are sampled as each value is
				// delivered too, not only between calls: on an idle device
				// a re-aimed read completes inside the call that submits
				// it, so one CompleteAtLeast can defer reads and admit them
				// all again before it returns.
				maxDeferred := len(sess.deferred)
				var maxHeld int64
				for sess.Pending() > 0 {
					sess.SetReadBudget(budget)
					err := sess.CompleteAtLeast(1, func(token uint64, v []byte, st Status, err error) {
						maxDeferred = max(maxDeferred, len(sess.deferred))
						maxHeld = max(maxHeld, sess.bigBytes)
						if err != nil || st != Found {
							t.Errorf("read %d: %v, %v; want its value", token, st, err)
							return
						}
						if got[token] != nil {
							t.Errorf("read %d delivered twice", token)
						}
						got[token] = bytes.Clone(v)
					})
					if err != nil {
						t.Fatalf("CompleteAtLeast: %v", err)
					}
					maxDeferred = max(maxDeferred, len(sess.deferred))
					maxHeld = max(maxHeld, sess.bigBytes)
				}
				if maxHeld > max(budget, window) {
					t.Errorf("the reads held %d B of windows at once, want at most the %d B budget (or one %d B window)", maxHeld, budget, window)
				}
				if want := int(min(int64(pending)-1, max(budget, window)/window)); budget < int64(pending)*window && maxDeferred == 0 {
					t.Errorf("no read waited for the budget; want some to (about %d in flight at once)", want)
				}
				for i := range got {
					if !bytes.Equal(got[i], value(i)) {
						t.Errorf("read %d: got %d B starting %.8q, want its own value", i, len(got[i]), got[i])
					}
				}
			})
		}
	}
}
