package store

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// TestDeviceReadsWakeOrInline reads records from the localmemory device one
// at a time, from several sessions at once, with completion
// goroutines (each single read makes its session sleep on a completion and
// be woken: a lost wake-up would hang the test) and with inline completion
// (the reads complete inside CompletePending). Every value must be the one
// written, and nothing may stay pending.
func TestDeviceReadsWakeOrInline(t *testing.T) {
	for _, inline := range []bool{false, true} {
		name := "completion-goroutines"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			cfg := smallConfig(t, "localmemory")
			cfg.InlineCompletion = inline
			s := openTest(t, cfg)
			const n = 6000 // 768 KB of records behind a 256 KB memory
			w := newTestSession(t, s)
			for i := range n {
				mustUpsert(t, w, testKey(i), testValue(i, 0, 96))
			}
			w.Settle()
			done := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sess := s.NewSession()
					defer sess.Close()
					var got []byte
					var gotSt Status
					var gotErr error
					fn := func(_ uint64, v []byte, st Status, err error) {
						got, gotSt, gotErr = append(got[:0], v...), st, err
					}
					for r := range 400 {
						i := (g*7919 + r*104729) % (n / 2) // the older half: on the device
						v, st, err := sess.Read(testKey(i), nil, uint64(i))
						if err != nil {
							t.Errorf("Read(%d): %v", i, err)
							return
						}
						if st == Pending {
							if err := sess.CompletePending(true, fn); err != nil {
								t.Errorf("CompletePending: %v", err)
								return
							}
							v, st, err = got, gotSt, gotErr
						}
						if err != nil || st != Found || !bytes.Equal(v, testValue(i, 0, 96)) {
							t.Errorf("key %d: got (%q, %v, %v), want its value, Found", i, v, st, err)
							return
						}
						if p := sess.Pending(); p != 0 {
							t.Errorf("Pending after CompletePending(true): got %d, want 0", p)
							return
						}
					}
				}()
			}
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("readers did not finish within 60 s: a session missed its wake-up")
			}
			if got := s.Stats().CompletedReads; got < 3*400/2 {
				t.Errorf("device reads completed: got %d, want most of the %d reads", got, 3*400)
			}
		})
	}
}
