package device

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestCloseWhileSubmittingFiles is TestCloseWhileSubmitting for the file
// backends, on the real disk: Close while four goroutines submit reads in a
// loop. Every read accepted is completed once Close returns, every
// submitter then gets ErrClosed and nothing else, and no Submit touches a
// ring or context Close has torn down (that would fault). Twenty devices
// each, since the window Close must not miss is a few instructions wide.
func TestCloseWhileSubmittingFiles(t *testing.T) {
	for _, backend := range []string{BackendLibaio, BackendUring} {
		t.Run(backend, func(t *testing.T) {
			dir := testenv.MustDiskDir(t)
			buf := mustBuffer(t, 4*4096)
			for round := range 20 {
				var completed atomic.Int64
				d := openTest(t, Config{Backend: backend, Dir: dir, ThrottleLimit: 4, OnComplete: func(_ uint64, _ int, err error) {
					if err == nil {
						completed.Add(1)
					}
				}})
				if round == 0 {
					c := newCollector(1)
					d2 := openTest(t, Config{Backend: backend, Dir: dir, OnComplete: c.onComplete})
					if r := submitWait(t, d2, c, Request{Op: OpWrite, Offset: 0, Buf: buf}); r.err != nil {
						t.Fatalf("write: %v", r.err)
					}
					d2.Close()
				}
				var wg sync.WaitGroup
				var accepted atomic.Int64
				start := make(chan struct{})
				for g := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						reqs := []Request{{Op: OpRead, Offset: uint64(g) * 512, Buf: buf[g*4096 : g*4096+512]},
							{Op: OpRead, Offset: 2048 + uint64(g)*512, Buf: buf[g*4096+512 : g*4096+1024]}}
						<-start
						submitUntilClosed(t, d, reqs, &accepted)
					}()
				}
				close(start)
				time.Sleep(time.Duration(round%5) * time.Millisecond)
				if err := d.Close(); err != nil {
					t.Errorf("round %d: Close: %v", round, err)
				}
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("round %d: submitters still blocked 10 s after Close", round)
				}
				if a, c := accepted.Load(), completed.Load(); a != c {
					t.Errorf("round %d: reads accepted %d, completed without error %d: want equal", round, a, c)
				}
			}
		})
	}
}

// submitUntilClosed submits reqs over and over, counting what d accepts,
// until d answers ErrClosed; any other error fails the test.
func submitUntilClosed(t *testing.T, d Device, reqs []Request, accepted *atomic.Int64) {
	for {
		n, err := d.Submit(reqs)
		accepted.Add(int64(n))
		if errors.Is(err, ErrClosed) {
			return
		}
		if err != nil {
			t.Errorf("Submit: got %v, want nil or ErrClosed", err)
			return
		}
	}
}
