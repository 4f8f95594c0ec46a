package device

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestRoundTrip writes a pattern through every backend, then reads random
// sectors back and compares the bytes.
func TestRoundTrip(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			const segBytes = 256 << 10
			c := newCollector(64)
			d := openTest(t, Config{Backend: backend, SegmentBytes: segBytes, SectorSize: 512, OnComplete: c.onComplete})
			ss := d.SectorSize()
			if ss != 512 {
				t.Fatalf("SectorSize: got %d, want the configured 512", ss)
			}
			// Two segments, written in 64 KiB chunks.
			chunk := mustBuffer(t, 64<<10)
			for off := uint64(0); off < 2*segBytes; off += uint64(len(chunk)) {
				stamp(chunk, off)
				r := submitWait(t, d, c, Request{Op: OpWrite, Offset: off, Buf: chunk, UserData: off})
				if r.err != nil || r.n != len(chunk) || r.userData != off {
					t.Fatalf("write at %d: got (ud %d, n %d, %v), want (ud %d, n %d, nil)", off, r.userData, r.n, r.err, off, len(chunk))
				}
			}
			if backend != BackendLocalMemory {
				st, err := os.Stat(segmentPath(d.(interface{ dir() string }).dir(), 1))
				if err != nil || st.Size() != segBytes {
					t.Fatalf("segment.1: got size %v (%v), want %d", st.Size(), err, segBytes)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			bufs := mustBuffer(t, 32*4096)
			reqs := make([]Request, 32)
			for i := range reqs {
				sectors := 1 + rng.IntN(8)
				off := uint64(rng.IntN(2*segBytes/512-sectors)) * 512
				if off/segBytes != (off+uint64(sectors*512)-1)/segBytes {
					off = segBytes // keep it inside one segment
				}
				reqs[i] = Request{Op: OpRead, Offset: off, Buf: bufs[i*4096 : i*4096+sectors*512], UserData: uint64(i)}
			}
			if n, err := d.Submit(reqs); n != len(reqs) || err != nil {
				t.Fatalf("Submit of %d reads: got (%d, %v)", len(reqs), n, err)
			}
			for range reqs {
				r := c.wait(t)
				q := reqs[r.userData]
				if r.err != nil || r.n != len(q.Buf) {
					t.Fatalf("read %d at %d: got (n %d, %v), want n %d", r.userData, q.Offset, r.n, r.err, len(q.Buf))
				}
				if i := firstMismatch(q.Buf, q.Offset); i >= 0 {
					t.Fatalf("read at %d: byte %d differs from what was written", q.Offset, i)
				}
			}
			if got := d.InFlight(); got != 0 {
				t.Errorf("InFlight after every completion: got %d, want 0", got)
			}
		})
	}
}

// TestBadRequests checks that every bad input is refused with an error,
// unaligned ones before they reach the kernel, and that nothing is
// completed for a refused request.
func TestBadRequests(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			const segBytes = 64 << 10
			c := newCollector(16)
			d := openTest(t, Config{Backend: backend, SegmentBytes: segBytes, SectorSize: 512, OnComplete: c.onComplete})
			buf := mustBuffer(t, 8192)
			if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: buf[:4096]}); r.err != nil {
				t.Fatalf("write of 4096 bytes at 0: %v", r.err)
			}
			refused := []struct {
				name string
				req  Request
				want error
			}{
				{"unaligned offset", Request{Op: OpRead, Offset: 100, Buf: buf[:512]}, ErrUnaligned},
				{"unaligned length", Request{Op: OpRead, Offset: 0, Buf: buf[:700]}, ErrUnaligned},
				{"unaligned buffer", Request{Op: OpRead, Offset: 0, Buf: buf[8:520]}, ErrUnaligned},
				{"empty buffer", Request{Op: OpRead, Offset: 0, Buf: buf[:0]}, ErrUnaligned},
				{"unaligned write", Request{Op: OpWrite, Offset: 512 + 1, Buf: buf[:512]}, ErrUnaligned},
				{"crosses segment", Request{Op: OpRead, Offset: segBytes - 512, Buf: buf[:1024]}, nil},
				{"bad op", Request{Op: Op(7), Offset: 0, Buf: buf[:512]}, nil},
				{"absurd segment", Request{Op: OpWrite, Offset: segBytes * maxSegmentFiles, Buf: buf[:512]}, ErrPastEnd},
			}
			for _, tt := range refused {
				good := Request{Op: OpRead, Offset: 0, Buf: buf[4096:4608], UserData: 1}
				n, err := d.Submit([]Request{good, tt.req})
				if err == nil || n != 1 {
					t.Errorf("%s: Submit: got (%d, %v), want (1, an error)", tt.name, n, err)
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("%s: got error %v, want %v", tt.name, err, tt.want)
				}
				if r := c.wait(t); r.userData != 1 || r.err != nil {
					t.Errorf("%s: the accepted request before it: got (ud %d, %v), want (1, nil)", tt.name, r.userData, r.err)
				}
			}
			// Reads past what was written: an error, never zeros.
			past := []struct {
				name string
				off  uint64
				n    int
				want error
			}{
				{"past the end", 8192, 512, ErrPastEnd},
				{"straddles the end", 3584, 1024, ErrShortIO},
				{"missing segment", 3 * segBytes, 512, ErrPastEnd},
			}
			for _, tt := range past {
				n, err := d.Submit([]Request{{Op: OpRead, Offset: tt.off, Buf: buf[:tt.n], UserData: 9}})
				if err == nil {
					r := c.wait(t)
					err = r.err
					if n != 1 || r.userData != 9 {
						t.Errorf("%s: got accepted %d, completion ud %d, want 1, 9", tt.name, n, r.userData)
					}
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("%s: read of %d bytes at %d: got error %v, want %v", tt.name, tt.n, tt.off, err, tt.want)
				}
			}
			select {
			case r := <-c.ch:
				t.Errorf("a completion nobody asked for: %+v", r)
			default:
			}
			if err := d.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if _, err := d.Submit([]Request{{Op: OpRead, Offset: 0, Buf: buf[:512]}}); !errors.Is(err, ErrClosed) {
				t.Errorf("Submit after Close: got %v, want ErrClosed", err)
			}
			if err := d.Close(); !errors.Is(err, ErrClosed) {
				t.Errorf("second Close: got %v, want ErrClosed", err)
			}
		})
	}
}

// TestConcurrentThrottle has many goroutines submit at once against a small
// throttle: every completion arrives exactly once with the right bytes, and
// the device's own in-flight count never exceeds the limit.
func TestConcurrentThrottle(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			const (
				segBytes   = 128 << 10
				limit      = 16
				goroutines = 8
				perG       = 300
				batch      = 6
			)
			var (
				done       [goroutines * perG]atomic.Int32
				overLimit  atomic.Int64
				dev        Device
				devReady   = make(chan struct{})
				completedN atomic.Int64
				written    = make(chan struct{})
			)
			const writeID = 1 << 40
			bufs := mustBuffer(t, goroutines*perG*512)
			cb := func(ud uint64, n int, err error) {
				<-devReady
				if ud == writeID {
					if err != nil || n != segBytes {
						t.Errorf("pattern write: got (n %d, %v), want (%d, nil)", n, err, segBytes)
					}
					close(written)
					return
				}
				if got := dev.InFlight(); got > limit {
					overLimit.Store(int64(got))
				}
				if err != nil || n != 512 {
					t.Errorf("request %d: got (n %d, %v), want (512, nil)", ud, n, err)
				}
				done[ud].Add(1)
				completedN.Add(1)
			}
			dev = openTest(t, Config{Backend: backend, SegmentBytes: segBytes, SectorSize: 512, ThrottleLimit: limit, CompletionThreads: 3, OnComplete: cb})
			close(devReady)
			pattern := mustBuffer(t, segBytes)
			stamp(pattern, 0)
			if _, err := dev.Submit([]Request{{Op: OpWrite, Offset: 0, Buf: pattern, UserData: writeID}}); err != nil {
				t.Fatal(err)
			}
			<-written
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(g), 7))
					reqs := make([]Request, 0, batch)
					for i := 0; i < perG; i += batch {
						reqs = reqs[:0]
						for j := i; j < min(i+batch, perG); j++ {
							id := g*perG + j
							reqs = append(reqs, Request{Op: OpRead, Offset: uint64(rng.IntN(segBytes/512)) * 512,
								Buf: bufs[id*512 : id*512+512], UserData: uint64(id)})
						}
						if n, err := dev.Submit(reqs); n != len(reqs) || err != nil {
							t.Errorf("goroutine %d: Submit: got (%d, %v), want (%d, nil)", g, n, err, len(reqs))
							return
						}
					}
				}()
			}
			wg.Wait()
			deadline := time.Now().Add(20 * time.Second)
			for completedN.Load() < goroutines*perG && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if got := completedN.Load(); got != goroutines*perG {
				t.Fatalf("completions: got %d, want %d", got, goroutines*perG)
			}
			for id := range done {
				if got := done[id].Load(); got != 1 {
					t.Fatalf("request %d completed %d times, want once", id, got)
				}
				// Every buffer holds the sector it asked for: find its offset
				// from the first word and check the whole sector.
				b := bufs[id*512 : id*512+512]
				off := binary.LittleEndian.Uint64(b) / 2654435761
				if i := firstMismatch(b, off); i >= 0 || off >= segBytes {
					t.Fatalf("request %d: buffer is not a pattern sector (offset %d, byte %d)", id, off, i)
				}
			}
			if got := overLimit.Load(); got != 0 {
				t.Errorf("InFlight seen by a completion: got %d, want ≤ %d", got, limit)
			}
			max := maxInFlightOf(dev)
			if max > limit || max < limit/2 {
				t.Errorf("max in flight: got %d, want ≤ %d (and ≥ %d, or the throttle was never exercised)", max, limit, limit/2)
			}
		})
	}
}

// TestSubmitCompleteAllocs proves a submit+complete cycle allocates nothing.
func TestSubmitCompleteAllocs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			done := make(chan struct{}, 1)
			var failed atomic.Bool
			d := openTest(t, Config{Backend: backend, SegmentBytes: 1 << 20, SectorSize: 512,
				OnComplete: func(_ uint64, _ int, err error) {
					if err != nil {
						failed.Store(true)
					}
					done <- struct{}{}
				}})
			buf := mustBuffer(t, 4096)
			reqs := []Request{{Op: OpWrite, Offset: 0, Buf: buf}}
			d.Submit(reqs)
			<-done
			reqs[0].Op = OpRead
			allocs := testing.AllocsPerRun(200, func() {
				d.Submit(reqs)
				<-done
			})
			if failed.Load() {
				t.Fatalf("a request failed")
			}
			if allocs != 0 {
				t.Errorf("allocations per submit+complete: got %v, want 0", allocs)
			}
		})
	}
}

// TestResubmitFromCompletion resubmits every request from its own
// completion function, as the benchmark and the store do: on the file
// backends those submissions are deferred to the reaper's batch. Every
// read must still return the bytes of the sector it asked for.
func TestResubmitFromCompletion(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			const (
				segBytes = 64 << 10
				slots    = 24
				rounds   = 40
			)
			var (
				dev      Device
				ready    = make(chan struct{})
				finished = make(chan struct{}, slots)
				reqs     [slots][1]Request
				left     [slots]int
				rngs     [slots]*rand.Rand
				failures atomic.Int64
			)
			bufs := mustBuffer(t, slots*512)
			written := make(chan error, 1)
			cb := func(ud uint64, n int, err error) {
				<-ready
				if ud == 1<<40 {
					written <- err
					return
				}
				r := &reqs[ud][0]
				if err != nil || n != 512 || firstMismatch(r.Buf, r.Offset) >= 0 {
					failures.Add(1)
				}
				if left[ud]--; left[ud] == 0 {
					finished <- struct{}{}
					return
				}
				r.Offset = uint64(rngs[ud].IntN(segBytes/512)) * 512
				if n, err := dev.Submit(reqs[ud][:]); n != 1 || err != nil {
					t.Errorf("resubmit from the completion of %d: got (%d, %v)", ud, n, err)
					finished <- struct{}{}
				}
			}
			dev = openTest(t, Config{Backend: backend, SegmentBytes: segBytes, SectorSize: 512, CompletionThreads: 2, OnComplete: cb})
			close(ready)
			pattern := mustBuffer(t, segBytes)
			stamp(pattern, 0)
			if _, err := dev.Submit([]Request{{Op: OpWrite, Buf: pattern, UserData: 1 << 40}}); err != nil {
				t.Fatal(err)
			}
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			all := make([]Request, slots)
			for i := range slots {
				rngs[i] = rand.New(rand.NewPCG(uint64(i), 3))
				left[i] = rounds
				reqs[i][0] = Request{Op: OpRead, Offset: uint64(rngs[i].IntN(segBytes/512)) * 512, Buf: bufs[i*512 : i*512+512], UserData: uint64(i)}
				all[i] = reqs[i][0]
			}
			timeout := time.NewTimer(30 * time.Second)
			defer timeout.Stop()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if n, err := dev.Submit(all); n != slots || err != nil {
				t.Fatalf("Submit: got (%d, %v), want (%d, nil)", n, err, slots)
			}
			for range slots {
				select {
				case <-finished:
				case <-timeout.C:
					t.Fatalf("chains did not finish within 30 s (in flight %d)", dev.InFlight())
				}
			}
			runtime.ReadMemStats(&after)
			// The resubmissions (deferred to the reaper on the file
			// backends) allocate nothing: allow a little for the runtime.
			if mallocs := after.Mallocs - before.Mallocs; mallocs > slots*rounds/20 {
				t.Errorf("allocations during %d chained submit+complete cycles: got %d, want ≈ 0", slots*rounds, mallocs)
			}
			if c, ok := dev.(interface{ deferredCount() int64 }); ok && backend != BackendLocalMemory && c.deferredCount() == 0 {
				t.Errorf("deferred submissions from completion functions: got 0, want some")
			}
			// A reaper sends deferred requests in groups as it delivers,
			// never a whole batch at once (a batch as deep as the queue
			// starved the disk while it was prepared).
			if c, ok := dev.(interface{ maxDeferredRunSeen() int64 }); ok && backend != BackendLocalMemory {
				if got := c.maxDeferredRunSeen(); got < 1 || got > reapSubmitEvery {
					t.Errorf("most deferred requests sent in one call: got %d, want 1 to %d", got, reapSubmitEvery)
				}
			}
			if got := failures.Load(); got != 0 {
				t.Errorf("reads with an error or wrong bytes: got %d of %d, want 0", got, slots*rounds)
			}
		})
	}
}

// TestKernelErrorSurfaces hands the kernel a buffer that is aligned but no
// longer mapped: the kernel's EFAULT must reach the caller, wrapped with the
// op and offset, never a success.
func TestKernelErrorSurfaces(t *testing.T) {
	for _, backend := range []string{BackendLibaio, BackendUring} {
		t.Run(backend, func(t *testing.T) {
			c := newCollector(4)
			d := openTest(t, Config{Backend: backend, SegmentBytes: 1 << 20, SectorSize: 512, OnComplete: c.onComplete})
			good := mustBuffer(t, 4096)
			if r := submitWait(t, d, c, Request{Op: OpWrite, Offset: 0, Buf: good}); r.err != nil {
				t.Fatal(r.err)
			}
			gone, err := AlignedBuffer(4096)
			if err != nil {
				t.Fatal(err)
			}
			if err := FreeBuffer(gone); err != nil {
				t.Fatal(err)
			}
			n, err := d.Submit([]Request{{Op: OpRead, Offset: 0, Buf: gone, UserData: 5}})
			if err == nil {
				r := c.wait(t)
				if n != 1 || r.userData != 5 {
					t.Fatalf("got accepted %d, completion %+v", n, r)
				}
				err = r.err
			}
			if !errors.Is(err, unix.EFAULT) || !strings.Contains(err.Error(), "offset 0") {
				t.Errorf("read into an unmapped buffer: got %v, want EFAULT naming offset 0", err)
			}
			if got := d.InFlight(); got != 0 {
				t.Errorf("InFlight after the failure: got %d, want 0", got)
			}
		})
	}
}

// BenchmarkSubmitComplete measures one submit+complete cycle of a 512-byte
// read at queue depth 1 on each backend (b.ReportAllocs shows 0 allocs/op).
func BenchmarkSubmitComplete(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, func(b *testing.B) {
			done := make(chan struct{}, 1)
			cfg := Config{Backend: backend, SegmentBytes: 1 << 20, SectorSize: 512,
				OnComplete: func(uint64, int, error) { done <- struct{}{} }}
			if backend != BackendLocalMemory {
				cfg.Dir = testenv.MustDiskDir(b)
			}
			d, err := Open(cfg)
			if err != nil {
				if errors.Is(err, ErrKernelRefused) {
					b.Skipf("the kernel refuses %s: %v", backend, err)
				}
				b.Fatalf("open %s: %v", backend, err)
			}
			defer d.Close()
			buf := mustBuffer(b, 1<<20)
			reqs := []Request{{Op: OpWrite, Offset: 0, Buf: buf}}
			d.Submit(reqs)
			<-done
			reqs[0] = Request{Op: OpRead, Buf: buf[:512]}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				reqs[0].Offset = uint64(i%2048) * 512
				d.Submit(reqs)
				<-done
			}
		})
	}
}
